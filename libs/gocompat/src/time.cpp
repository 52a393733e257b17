#include <fiskai/gocompat/time.hpp>

#include <cstdint>
#include <cstdio>

namespace fiskai::gocompat {

namespace chr = std::chrono;

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

// The date and wall clock at the offset, then `fraction_digits` digits of the fraction
// (with trailing zeros and a bare dot trimmed when `trim`), then the zone.
std::string format(const go_time& t, int fraction_digits, bool trim) {
    const chr::sys_seconds local = t.seconds + t.offset;
    const auto days = chr::floor<chr::days>(local);
    const chr::year_month_day ymd{days};
    const chr::hh_mm_ss hms{local - days};
    char buf[80];
    int n = std::snprintf(buf, sizeof buf, "%04d-%02u-%02uT%02d:%02d:%02d", static_cast<int>(ymd.year()),
                          static_cast<unsigned>(ymd.month()), static_cast<unsigned>(ymd.day()),
                          static_cast<int>(hms.hours().count()), static_cast<int>(hms.minutes().count()),
                          static_cast<int>(hms.seconds().count()));
    std::string out(buf, static_cast<std::size_t>(n));
    if (fraction_digits > 0) {
        std::snprintf(buf, sizeof buf, ".%09u", static_cast<unsigned>(t.nanos % 1'000'000'000U));
        std::string_view fraction(buf, static_cast<std::size_t>(fraction_digits) + 1);
        if (trim) {
            while (fraction.back() == '0') fraction.remove_suffix(1);
            if (fraction.size() == 1) fraction = {};
        }
        out.append(fraction);
    }
    if (t.offset.count() == 0) {
        out.push_back('Z');
    } else {
        const auto m = t.offset.count() < 0 ? -t.offset.count() : t.offset.count();
        n = std::snprintf(buf, sizeof buf, "%c%02d:%02d", t.offset.count() < 0 ? '-' : '+', static_cast<int>(m / 60),
                          static_cast<int>(m % 60));
        out.append(buf, static_cast<std::size_t>(n));
    }
    return out;
}

}  // namespace

go_time to_go_time(chr::system_clock::time_point t) noexcept {
    const auto seconds = chr::floor<chr::seconds>(t);
    return go_time{seconds, static_cast<std::uint32_t>(chr::duration_cast<chr::nanoseconds>(t - seconds).count()),
                   chr::minutes{0}};
}

std::string format_rfc3339_nano(const go_time& t) { return format(t, 9, true); }
std::string format_rfc3339(const go_time& t) { return format(t, 0, false); }
std::string format_rfc3339_millis(const go_time& t) { return format(t, 3, false); }

std::optional<go_time> parse_rfc3339(std::string_view s) noexcept {
    if (s.size() < 19) return std::nullopt;
    int year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0;
    if (!parse_field(s.substr(0, 4), 0, 9999, year) || !parse_field(s.substr(5, 2), 1, 12, month)) return std::nullopt;
    const auto last_day = unsigned((chr::year{year} / chr::month{static_cast<unsigned>(month)} / chr::last).day());
    if (!parse_field(s.substr(8, 2), 1, static_cast<int>(last_day), day) ||
        !parse_field(s.substr(11, 2), 0, 23, hour) || !parse_field(s.substr(14, 2), 0, 59, minute) ||
        !parse_field(s.substr(17, 2), 0, 59, second)) {
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

    const chr::sys_days date{chr::year{year} / chr::month{static_cast<unsigned>(month)} /
                             chr::day{static_cast<unsigned>(day)}};
    const chr::sys_seconds local = date + chr::hours{hour} + chr::minutes{minute} + chr::seconds{second};
    return go_time{local - chr::minutes{offset_minutes}, nanos, chr::minutes{offset_minutes}};
}

}  // namespace fiskai::gocompat
