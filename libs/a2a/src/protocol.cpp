#include <fiskai/a2a/protocol.hpp>

#include <algorithm>

namespace fiskai::a2a {

namespace {

constexpr bool is_token_char(char c) noexcept {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
}

bool is_token(std::string_view s, std::size_t max) noexcept {
    return !s.empty() && s.size() <= max && std::all_of(s.begin(), s.end(), is_token_char);
}

}  // namespace

bool is_valid_identity(std::string_view name) noexcept { return is_token(name, max_identity_length); }

bool is_valid_request_id(std::string_view id) noexcept { return is_token(id, max_request_id_length); }

bool is_known_protocol(std::string_view id) noexcept {
    return std::find(protocols::all.begin(), protocols::all.end(), id) != protocols::all.end();
}

}  // namespace fiskai::a2a
