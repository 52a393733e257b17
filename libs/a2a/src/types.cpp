#include <fiskai/a2a/blocks.hpp>
#include <fiskai/a2a/messages.hpp>
#include <fiskai/a2a/types.hpp>

#include "json_text.hpp"

#include <fiskai/gocompat/json.hpp>
#include <fiskai/gocompat/quote.hpp>
#include <fiskai/gocompat/time.hpp>

#include <boost/json/monotonic_resource.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>

#include <algorithm>
#include <array>
#include <cstdio>

namespace fiskai::a2a {

namespace chr = std::chrono;

// ---- timestamp ----

timestamp::timestamp() noexcept : seconds_(chr::sys_days{chr::year{1} / chr::January / 1}) {}

timestamp::timestamp(chr::sys_time<chr::nanoseconds> utc) noexcept
    : seconds_(chr::floor<chr::seconds>(utc)),
      nanos_(static_cast<std::uint32_t>((utc - chr::floor<chr::seconds>(utc)).count())) {}

timestamp timestamp::now() noexcept {
    return timestamp(chr::time_point_cast<chr::nanoseconds>(chr::system_clock::now()));
}

std::optional<timestamp> timestamp::parse(std::string_view s) noexcept {
    const auto parsed = gocompat::parse_rfc3339(s);
    if (!parsed) return std::nullopt;
    timestamp t;
    t.seconds_ = parsed->seconds;
    t.nanos_ = parsed->nanos;
    t.offset_ = parsed->offset;
    return t;
}

std::string timestamp::to_string() const { return gocompat::format_rfc3339_nano({seconds_, nanos_, offset_}); }

// ---- raw_json ----

raw_json::raw_json() : text_("{}") {}

result<raw_json> raw_json::parse(std::string_view text) {
    const auto repaired = detail::replace_unpaired_surrogates(text);
    boost::system::error_code ec;
    boost::json::monotonic_resource mr;
    (void)boost::json::parse(repaired ? std::string_view(*repaired) : text, ec, &mr, detail::parse_options());
    if (ec) return make_error(errc::invalid_json, ec.message());
    return raw_json(detail::compact(text));
}

raw_json raw_json::from_value(const boost::json::value& v) {
    std::string out;
    gocompat::append_json(out, v, gocompat::key_order::sorted);
    return raw_json(std::move(out));
}

boost::json::value raw_json::to_value() const {
    const auto repaired = detail::replace_unpaired_surrogates(text_);
    boost::system::error_code ec;
    auto v = boost::json::parse(repaired ? std::string_view(*repaired) : std::string_view(text_), ec, {},
                                detail::parse_options());
    return ec ? boost::json::value() : v;
}

bool is_known_stop_reason(std::string_view reason) noexcept {
    constexpr std::array known = {stop_reasons::end_turn,  stop_reasons::max_tokens,    stop_reasons::refusal,
                                  stop_reasons::canceled,  stop_reasons::error,         stop_reasons::budget_exhausted,
                                  stop_reasons::suspended, stop_reasons::max_iterations};
    return std::find(known.begin(), known.end(), reason) != known.end();
}

// ---- blocks ----

bool is_known_block_type(std::string_view type) noexcept {
    constexpr std::array known = {thinking_block::type,    text_block::type,       tool_call_block::type,
                                  tool_result_block::type, agent_call_block::type, status_block::type};
    return std::find(known.begin(), known.end(), type) != known.end();
}

std::string_view block_type(const block& b) noexcept {
    return std::visit(
        [](const auto& v) -> std::string_view {
            using T = std::decay_t<decltype(v)>;
            if constexpr (std::is_same_v<T, std::monostate>) {
                return {};
            } else if constexpr (std::is_same_v<T, unknown_block>) {
                return v.type();
            } else {
                return T::type;
            }
        },
        b);
}

result<unknown_block> unknown_block::from_raw(raw_json raw) {
    if (!raw.is_object()) return make_error(errc::unknown_block_type, "a block is a JSON object");
    const auto type = detail::find_member(raw.text(), "type");
    if (!type || type->empty() || type->front() != '"') return make_error(errc::unknown_block_type, "\"\"");
    std::string name = detail::unquote(*type);
    if (is_known_block_type(name)) {
        return make_error(errc::unknown_block_type, gocompat::quote(name) + " is a known kind, not an unknown one");
    }
    return unknown_block(std::move(name), std::move(raw));
}

// ---- messages ----

std::string_view protocol_of(const message& m) noexcept {
    return std::visit([](const auto& v) { return std::decay_t<decltype(v)>::protocol; }, m);
}

header& header_of(message& m) noexcept {
    return std::visit([](auto& v) -> header& { return v; }, m);
}

const header& header_of(const message& m) noexcept {
    return std::visit([](const auto& v) -> const header& { return v; }, m);
}

}  // namespace fiskai::a2a
