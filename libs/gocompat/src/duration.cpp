#include <fiskai/gocompat/duration.hpp>
#include <fiskai/gocompat/utf8.hpp>

#include <array>
#include <cstdint>
#include <optional>

// A line-by-line port of Go's time.ParseDuration and Duration.String, including the
// unsigned accumulation and overflow checks, so both accept and reject the same strings.

namespace fiskai::gocompat {
namespace {

constexpr std::uint64_t two_pow_63 = std::uint64_t{1} << 63U;

// Go's time.quote, which is not strconv.Quote: every byte of a non-ASCII rune and every
// ASCII control is printed as \xNN, and invalid bytes one at a time.
std::string time_quote(std::string_view s) {
    constexpr char hex[] = "0123456789abcdef";
    std::string out = "\"";
    std::size_t i = 0;
    while (i < s.size()) {
        const auto [r, size, valid] = decode_rune(s, i);
        if (r >= 0x80 || r < ' ') {
            std::size_t width = size;
            if (!valid || r == rune_error) {
                width = 1;
                if (i + 2 < s.size() && s.substr(i, 3) == "\xEF\xBF\xBD") width = 3;
            }
            for (std::size_t j = 0; j < width; ++j) {
                const auto b = static_cast<unsigned char>(s[i + j]);
                out += "\\x";
                out += hex[b >> 4U];
                out += hex[b & 0xFU];
            }
        } else {
            if (r == '"' || r == '\\') out += '\\';
            out += static_cast<char>(r);
        }
        i += size;
    }
    out += '"';
    return out;
}

[[noreturn]] void invalid(std::string_view orig) { throw duration_error("time: invalid duration " + time_quote(orig)); }

bool is_digit(char c) noexcept { return c >= '0' && c <= '9'; }

// Consumes [0-9]*; nullopt on overflow past 2^63.
std::optional<std::uint64_t> leading_int(std::string_view& s) {
    std::uint64_t x = 0;
    std::size_t i = 0;
    for (; i < s.size() && is_digit(s[i]); ++i) {
        if (x > two_pow_63 / 10) return std::nullopt;
        x = x * 10 + static_cast<std::uint64_t>(s[i] - '0');
        if (x > two_pow_63) return std::nullopt;
    }
    s.remove_prefix(i);
    return x;
}

// Consumes [0-9]* after the point; stops accumulating precision rather than failing.
std::uint64_t leading_fraction(std::string_view& s, double& scale) {
    std::uint64_t x = 0;
    scale = 1;
    bool overflow = false;
    std::size_t i = 0;
    for (; i < s.size() && is_digit(s[i]); ++i) {
        if (overflow) continue;
        if (x > (two_pow_63 - 1) / 10) {
            overflow = true;
            continue;
        }
        const std::uint64_t y = x * 10 + static_cast<std::uint64_t>(s[i] - '0');
        if (y > two_pow_63) {
            overflow = true;
            continue;
        }
        x = y;
        scale *= 10;
    }
    s.remove_prefix(i);
    return x;
}

std::optional<std::uint64_t> unit_nanos(std::string_view u) {
    if (u == "ns") return 1;
    if (u == "us" || u == "\xC2\xB5s" /* U+00B5 */ || u == "\xCE\xBCs" /* U+03BC */) return 1000;
    if (u == "ms") return 1000000;
    if (u == "s") return 1000000000;
    if (u == "m") return std::uint64_t{60} * 1000000000;
    if (u == "h") return std::uint64_t{3600} * 1000000000;
    return std::nullopt;
}

// Writes the fraction of v/10^prec before `w` without trailing zeros (and without the
// point when the fraction is zero); returns v/10^prec.
std::uint64_t fmt_frac(std::array<char, 32>& buf, std::size_t& w, std::uint64_t v, int prec) {
    bool print = false;
    for (int i = 0; i < prec; ++i) {
        const auto digit = v % 10;
        print = print || digit != 0;
        if (print) buf[--w] = static_cast<char>('0' + digit);
        v /= 10;
    }
    if (print) buf[--w] = '.';
    return v;
}

void fmt_int(std::array<char, 32>& buf, std::size_t& w, std::uint64_t v) {
    if (v == 0) {
        buf[--w] = '0';
        return;
    }
    while (v > 0) {
        buf[--w] = static_cast<char>('0' + v % 10);
        v /= 10;
    }
}

}  // namespace

std::chrono::nanoseconds parse_duration(std::string_view text) {
    const std::string_view orig = text;
    std::string_view s = text;
    std::uint64_t d = 0;
    bool neg = false;

    if (!s.empty() && (s[0] == '-' || s[0] == '+')) {
        neg = s[0] == '-';
        s.remove_prefix(1);
    }
    if (s == "0") return std::chrono::nanoseconds{0};
    if (s.empty()) invalid(orig);

    while (!s.empty()) {
        if (!(s[0] == '.' || is_digit(s[0]))) invalid(orig);

        const std::size_t before_int = s.size();
        const auto v_opt = leading_int(s);
        if (!v_opt) invalid(orig);
        std::uint64_t v = *v_opt;
        const bool pre = before_int != s.size();

        std::uint64_t f = 0;
        double scale = 1;
        bool post = false;
        if (!s.empty() && s[0] == '.') {
            s.remove_prefix(1);
            const std::size_t before_frac = s.size();
            f = leading_fraction(s, scale);
            post = before_frac != s.size();
        }
        if (!pre && !post) invalid(orig);  // no digits, e.g. ".s" or "-.s"

        std::size_t i = 0;
        while (i < s.size() && s[i] != '.' && !is_digit(s[i])) ++i;
        if (i == 0) throw duration_error("time: missing unit in duration " + time_quote(orig));
        const std::string_view u = s.substr(0, i);
        s.remove_prefix(i);
        const auto unit = unit_nanos(u);
        if (!unit) {
            throw duration_error("time: unknown unit " + time_quote(u) + " in duration " + time_quote(orig));
        }
        if (v > two_pow_63 / *unit) invalid(orig);
        v *= *unit;
        if (f > 0) {
            // Go computes the fraction in float64 to stay nanosecond-accurate for hours.
            v += static_cast<std::uint64_t>(static_cast<double>(f) * (static_cast<double>(*unit) / scale));
            if (v > two_pow_63) invalid(orig);
        }
        d += v;
        if (d > two_pow_63) invalid(orig);
    }
    if (neg) {
        // d <= 2^63 here, so the negation fits (2^63 itself is the minimum int64).
        return std::chrono::nanoseconds{static_cast<std::int64_t>(~d + 1)};
    }
    if (d > two_pow_63 - 1) invalid(orig);
    return std::chrono::nanoseconds{static_cast<std::int64_t>(d)};
}

std::string format_duration(std::chrono::nanoseconds d) {
    std::array<char, 32> buf{};
    std::size_t w = buf.size();

    const std::int64_t count = d.count();
    const bool neg = count < 0;
    auto u = static_cast<std::uint64_t>(count);
    if (neg) u = ~u + 1;

    constexpr std::uint64_t second = 1000000000;
    if (u < second) {
        // Below one second Go switches to smaller units, like 1.2ms.
        int prec = 0;
        buf[--w] = 's';
        if (u == 0) {
            buf[--w] = '0';
            return std::string(buf.data() + w, buf.size() - w);
        }
        if (u < 1000) {
            prec = 0;
            buf[--w] = 'n';
        } else if (u < 1000000) {
            prec = 3;
            buf[--w] = '\xB5';  // U+00B5 micro sign, as Go prints it
            buf[--w] = '\xC2';
        } else {
            prec = 6;
            buf[--w] = 'm';
        }
        u = fmt_frac(buf, w, u, prec);
        fmt_int(buf, w, u);
    } else {
        buf[--w] = 's';
        u = fmt_frac(buf, w, u, 9);
        fmt_int(buf, w, u % 60);
        u /= 60;
        if (u > 0) {
            buf[--w] = 'm';
            fmt_int(buf, w, u % 60);
            u /= 60;
            // Stop at hours: days can be different lengths.
            if (u > 0) {
                buf[--w] = 'h';
                fmt_int(buf, w, u);
            }
        }
    }
    if (neg) buf[--w] = '-';
    return std::string(buf.data() + w, buf.size() - w);
}

}  // namespace fiskai::gocompat
