#pragma once
// Small helpers the codecs share: reading fields of a parsed body with typed fallbacks.

#include <fiskai/gocompat/json.hpp>
#include <fiskai/gocompat/quote.hpp>
#include <fiskai/llm/types.hpp>

#include <boost/json.hpp>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace fiskai::llm::detail {

inline const boost::json::value* field(const boost::json::object& o, std::string_view key) {
    return o.if_contains(key);
}

inline std::optional<std::string> string_field(const boost::json::object& o, std::string_view key) {
    if (auto* v = o.if_contains(key); v != nullptr && v->is_string()) return std::string(v->as_string());
    return std::nullopt;
}

// A token count a provider reported, clamped to [0, max_token_count]: a negative one is 0,
// a larger one (or a huge double) the cap, a fraction truncated, anything not a number 0.
inline std::int64_t token_count(const boost::json::object& o, std::string_view key) {
    auto* v = o.if_contains(key);
    if (v == nullptr) return 0;
    if (v->is_int64()) return std::clamp<std::int64_t>(v->as_int64(), 0, max_token_count);
    if (v->is_uint64()) return static_cast<std::int64_t>(std::min<std::uint64_t>(v->as_uint64(), max_token_count));
    if (v->is_double()) {
        const double d = v->as_double();
        if (!(d > 0)) return 0;  // NaN too
        if (d >= static_cast<double>(max_token_count)) return max_token_count;
        return static_cast<std::int64_t>(d);
    }
    return 0;
}

// `text` as it is when it is at most `limit` bytes, else quoted and cut there (a peer's
// error message goes into logs and journals: a megabyte of it helps nobody).
inline std::string bounded_text(std::string_view text, std::size_t limit = 200) {
    if (text.size() <= limit) return std::string(text);
    return gocompat::quote_bounded(text, limit);
}

// The first tool_use id that occurs twice in `content`, if any: results are paired with
// their calls by id, so a reply that repeats one cannot be answered (or resumed) call by call.
inline std::optional<std::string> repeated_tool_use_id(const std::vector<content_block>& content) {
    std::set<std::string_view> seen;
    for (const auto& block : content) {
        if (const auto* use = std::get_if<tool_use_block>(&block); use != nullptr && !seen.insert(use->id).second) {
            return use->id;
        }
    }
    return std::nullopt;
}

// Parses a body; the error is Boost.JSON's message.
inline std::optional<boost::json::value> parse(std::string_view text, std::string& why) {
    boost::system::error_code ec;
    auto value = boost::json::parse(text, ec, {}, gocompat::go_parse_options());
    if (ec) {
        why = ec.message();
        return std::nullopt;
    }
    return value;
}

}  // namespace fiskai::llm::detail
