#include <fiskai/serve/session_ids.hpp>

#include <openssl/evp.h>

#include <array>
#include <memory>
#include <stdexcept>

namespace fiskai::serve {

namespace {
constexpr std::size_t session_hex_digits = 40;

// Fetched once: EVP_sha256() makes OpenSSL 3 look the algorithm up in its providers at
// every digest, which costs more than hashing these few bytes.
const EVP_MD* sha256() {
    static EVP_MD* const md = EVP_MD_fetch(nullptr, "SHA256", nullptr);
    return md;
}
}  // namespace

std::string derive_session_id(std::string_view tag, std::string_view prefix,
                              std::initializer_list<std::string_view> parts) {
    const std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(), EVP_MD_CTX_free);
    if (!ctx || sha256() == nullptr || EVP_DigestInit_ex(ctx.get(), sha256(), nullptr) != 1) {
        throw std::runtime_error("session id: sha256 is not available");
    }
    // The 0x00 separator keeps ("ab","c") and ("a","bc") apart; parts never hold a NUL
    // that matters because each is a checked name or id.
    static constexpr unsigned char separator = 0;
    EVP_DigestUpdate(ctx.get(), prefix.data(), prefix.size());
    for (const auto part : parts) {
        EVP_DigestUpdate(ctx.get(), &separator, 1);
        EVP_DigestUpdate(ctx.get(), part.data(), part.size());
    }
    std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
    unsigned int length = 0;
    EVP_DigestFinal_ex(ctx.get(), digest.data(), &length);
    static constexpr char hex[] = "0123456789abcdef";
    std::string id(tag);
    id.push_back('-');
    for (unsigned int i = 0; i < length && id.size() < tag.size() + 1 + session_hex_digits; ++i) {
        id.push_back(hex[digest[i] >> 4]);
        id.push_back(hex[digest[i] & 0xF]);
    }
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
