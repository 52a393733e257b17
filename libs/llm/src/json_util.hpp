#pragma once
// Small helpers the codecs share: reading fields of a parsed body with typed fallbacks.

#include <boost/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace fiskai::llm::detail {

inline const boost::json::value* field(const boost::json::object& o, std::string_view key) {
    return o.if_contains(key);
}

inline std::optional<std::string> string_field(const boost::json::object& o, std::string_view key) {
    if (auto* v = o.if_contains(key); v != nullptr && v->is_string()) return std::string(v->as_string());
    return std::nullopt;
}

inline std::int64_t int_field(const boost::json::object& o, std::string_view key) {
    auto* v = o.if_contains(key);
    if (v == nullptr) return 0;
    if (v->is_int64()) return v->as_int64();
    if (v->is_uint64()) return static_cast<std::int64_t>(v->as_uint64());
    if (v->is_double()) return static_cast<std::int64_t>(v->as_double());
    return 0;
}

// Parses a body; the error is Boost.JSON's message.
inline std::optional<boost::json::value> parse(std::string_view text, std::string& why) {
    boost::system::error_code ec;
    auto value = boost::json::parse(text, ec);
    if (ec) {
        why = ec.message();
        return std::nullopt;
    }
    return value;
}

}  // namespace fiskai::llm::detail
