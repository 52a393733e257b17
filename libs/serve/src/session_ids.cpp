#include <fiskai/serve/session_ids.hpp>

#include <fiskai/runstate/fingerprint.hpp>

namespace fiskai::serve {

namespace {
constexpr std::size_t session_hex_digits = 40;
}  // namespace

std::string derive_session_id(std::string_view tag, std::string_view prefix,
                              std::initializer_list<std::string_view> parts) {
    // The 0x00 separator keeps ("ab","c") and ("a","bc") apart; parts never hold a NUL
    // that matters because each is a checked name or id.
    std::string hashed(prefix);
    for (const auto part : parts) {
        hashed.push_back('\0');
        hashed += part;
    }
    std::string id(tag);
    id.push_back('-');
    id += runstate::hash_hex(hashed).substr(0, session_hex_digits);  // SHA-256, lower-case hex
    return id;
}

std::string a2a_session_id(std::string_view identity, std::string_view sender, std::string_view task) {
    return derive_session_id("a2a", "fisk-ai.session.a2a.v1", {identity, sender, task});
}

std::string queue_session_id(std::string_view identity, std::string_view task) {
    return derive_session_id("q", "fisk-ai.session.queue.v1", {identity, task});
}

std::string slack_session_id(std::string_view identity, std::string_view team, std::string_view channel,
                             std::string_view thread_ts) {
    return derive_session_id("slack", "fisk-ai.session.slack.v1", {identity, team, channel, thread_ts});
}

}  // namespace fiskai::serve
