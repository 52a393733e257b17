#include <fiskai/a2a/blocks.hpp>
#include <fiskai/a2a/messages.hpp>
#include <fiskai/a2a/types.hpp>

#include "json_text.hpp"

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
    : seconds_(chr::floor<chr::seconds>(utc)), nanos_(static_cast<std::uint32_t>((utc - chr::floor<chr::seconds>(utc)).count())) {}

timestamp timestamp::now() noexcept {
    return timestamp(chr::time_point_cast<chr::nanoseconds>(chr::system_clock::now()));
}

namespace {

bool is_digit(char c) noexcept { return c >= '0' && c <= '9'; }

// Go's parseUint inside parseRFC3339: all digits, and within [min, max].
bool parse_field(std::string_view s, int min, int max, int& out) noexcept {
    int x = 0;
    for (char c : s) {
        if (!is_digit(c)) return false;
        x = x * 10 + (c - '0');
    }
    out = x;
    return x >= min && x <= max;
}

}  // namespace

std::optional<timestamp> timestamp::parse(std::string_view s) noexcept {
    if (s.size() < 19) return std::nullopt;
    int year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0;
    if (!parse_field(s.substr(0, 4), 0, 9999, year) || !parse_field(s.substr(5, 2), 1, 12, month)) return std::nullopt;
    const auto last_day = unsigned((chr::year{year} / chr::month{static_cast<unsigned>(month)} / chr::last).day());
    if (!parse_field(s.substr(8, 2), 1, static_cast<int>(last_day), day) || !parse_field(s.substr(11, 2), 0, 23, hour) ||
        !parse_field(s.substr(14, 2), 0, 59, minute) || !parse_field(s.substr(17, 2), 0, 59, second)) {
        return std::nullopt;
    }
    if (s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':' || s[16] != ':') return std::nullopt;
    s.remove_prefix(19);

    std::uint32_t nanos = 0;
    if (s.size() >= 2 && s[0] == '.' && is_digit(s[1])) {
        std::size_t n = 1;
        while (n < s.size() && is_digit(s[n])) ++n;
        // Nanoseconds from the first nine digits; any further digits are dropped.
        for (std::size_t k = 1; k <= 9; ++k) nanos = nanos * 10 + (k < n ? static_cast<std::uint32_t>(s[k] - '0') : 0);
        s.remove_prefix(n);
    }

    int offset_minutes = 0;
    if (s.size() != 1 || s[0] != 'Z') {
        if (s.size() != 6) return std::nullopt;
        int oh = 0, om = 0;
        if (!parse_field(s.substr(1, 2), 0, 23, oh) || !parse_field(s.substr(4, 2), 0, 59, om)) return std::nullopt;
        if ((s[0] != '+' && s[0] != '-') || s[3] != ':') return std::nullopt;
        offset_minutes = (oh * 60 + om) * (s[0] == '-' ? -1 : 1);
    }

    const chr::sys_days date{chr::year{year} / chr::month{static_cast<unsigned>(month)} / chr::day{static_cast<unsigned>(day)}};
    const chr::sys_seconds local = date + chr::hours{hour} + chr::minutes{minute} + chr::seconds{second};
    timestamp t;
    t.seconds_ = local - chr::minutes{offset_minutes};
    t.nanos_ = nanos;
    t.offset_ = chr::minutes{offset_minutes};
    return t;
}

std::string timestamp::to_string() const {
    const chr::sys_seconds local = seconds_ + offset_;
    const auto days = chr::floor<chr::days>(local);
    const chr::year_month_day ymd{days};
    const chr::hh_mm_ss hms{local - days};
    char buf[64];
    int n = std::snprintf(buf, sizeof buf, "%04d-%02u-%02uT%02d:%02d:%02d", static_cast<int>(ymd.year()),
                          static_cast<unsigned>(ymd.month()), static_cast<unsigned>(ymd.day()),
                          static_cast<int>(hms.hours().count()), static_cast<int>(hms.minutes().count()),
                          static_cast<int>(hms.seconds().count()));
    std::string out(buf, static_cast<std::size_t>(n));
    if (nanos_ != 0) {
        n = std::snprintf(buf, sizeof buf, ".%09u", static_cast<unsigned>(nanos_));
        std::string_view fraction(buf, static_cast<std::size_t>(n));
        while (fraction.back() == '0') fraction.remove_suffix(1);
        out.append(fraction);
    }
    if (offset_.count() == 0) {
        out.push_back('Z');
    } else {
        const auto m = offset_.count() < 0 ? -offset_.count() : offset_.count();
        n = std::snprintf(buf, sizeof buf, "%c%02d:%02d", offset_.count() < 0 ? '-' : '+', static_cast<int>(m / 60),
                          static_cast<int>(m % 60));
        out.append(buf, static_cast<std::size_t>(n));
    }
    return out;
}

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
    detail::append_go_value(out, v);
    return raw_json(std::move(out));
}

boost::json::value raw_json::to_value() const {
    const auto repaired = detail::replace_unpaired_surrogates(text_);
    boost::system::error_code ec;
    auto v = boost::json::parse(repaired ? std::string_view(*repaired) : std::string_view(text_), ec, {}, detail::parse_options());
    return ec ? boost::json::value() : v;
}

bool is_known_stop_reason(std::string_view reason) noexcept {
    constexpr std::array known = {stop_reasons::end_turn, stop_reasons::max_tokens,      stop_reasons::refusal,
                                  stop_reasons::canceled, stop_reasons::error,           stop_reasons::budget_exhausted,
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
        return make_error(errc::unknown_block_type, detail::go_quote(name) + " is a known kind, not an unknown one");
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
