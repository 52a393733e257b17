#include "fiskai/llm/retry.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <ctime>
#include <strings.h>

namespace fiskai::llm {

namespace {

bool iequals(std::string_view a, std::string_view b) {
    return a.size() == b.size() && ::strncasecmp(a.data(), b.data(), a.size()) == 0;
}

std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
    return s;
}

std::optional<double> parse_float(std::string_view s) {
    s = trim(s);
    double value = 0;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
    if (ec != std::errc{} || end != s.data() + s.size() || !std::isfinite(value)) return std::nullopt;
    return value;
}

// The longest server-requested wait honoured (retry_delay); anything longer, or negative,
// gets the backoff instead.
constexpr double max_server_delay_seconds = 60;

// RFC 7231 IMF-fixdate, the form servers send: `Wed, 21 Oct 2015 07:28:00 GMT`, as
// seconds since the epoch. Kept a time_t: a year past 2262 does not fit system_clock's
// nanoseconds.
std::optional<std::time_t> parse_http_date(std::string_view s) {
    std::string text(trim(s));
    std::tm tm{};
    const char* end = ::strptime(text.c_str(), "%a, %d %b %Y %H:%M:%S GMT", &tm);
    if (end == nullptr || *end != '\0') return std::nullopt;
    return ::timegm(&tm);
}

// Seconds from `now` until `date`, in a double: no date overflows it.
double seconds_until(std::time_t date, std::chrono::system_clock::time_point now) {
    const auto whole = std::chrono::floor<std::chrono::seconds>(now);
    const double fraction = std::chrono::duration<double>(now - whole).count();
    return static_cast<double>(date) - static_cast<double>(whole.time_since_epoch().count()) - fraction;
}

// A wait in seconds as nanoseconds; only for values in [0, max_server_delay_seconds] or
// the backoff's, so the conversion never overflows.
std::chrono::nanoseconds from_seconds(double seconds) {
    return std::chrono::nanoseconds(static_cast<std::int64_t>(seconds * 1e9));
}

// The server's requested wait, if it sent one that parses and is in [0, 60 s): a negative
// or longer one (however long: `1e300`, a date in the year 9999) is ignored.
std::optional<std::chrono::nanoseconds> server_delay(const retry_hints& hints,
                                                     std::chrono::system_clock::time_point now) {
    std::optional<double> seconds;
    if (hints.retry_after_ms) {
        if (auto ms = parse_float(*hints.retry_after_ms)) seconds = *ms / 1000.0;
    }
    if (!seconds && hints.retry_after) {
        seconds = parse_float(*hints.retry_after);
        if (!seconds) {
            if (auto date = parse_http_date(*hints.retry_after)) seconds = seconds_until(*date, now);
        }
    }
    if (!seconds || !(*seconds >= 0 && *seconds < max_server_delay_seconds)) return std::nullopt;
    return from_seconds(*seconds);
}

}  // namespace

retry_hints retry_hints::from_headers(const std::vector<std::pair<std::string, std::string>>& headers) {
    retry_hints hints;
    for (const auto& [name, value] : headers) {
        if (iequals(name, "x-should-retry") && !hints.should_retry) hints.should_retry = value;
        if (iequals(name, "retry-after-ms") && !hints.retry_after_ms) hints.retry_after_ms = value;
        if (iequals(name, "retry-after") && !hints.retry_after) hints.retry_after = value;
    }
    return hints;
}

bool should_retry(int status, const retry_hints& hints) {
    if (status == 0) return true;
    if (hints.should_retry) {
        if (trim(*hints.should_retry) == "true") return true;
        if (trim(*hints.should_retry) == "false") return false;
    }
    return status == 408 || status == 409 || status == 429 || status >= 500;
}

std::chrono::nanoseconds retry_delay(int retry, const retry_hints& hints, double jitter01,
                                     std::chrono::system_clock::time_point now) {
    if (auto wanted = server_delay(hints, now)) return *wanted;
    const double base = std::min(0.5 * std::pow(2.0, std::max(retry, 0)), 8.0);
    const double jitter = std::clamp(jitter01, 0.0, 1.0) * 0.25 * base;
    return from_seconds(base - jitter);
}

std::optional<std::chrono::nanoseconds> fit_before_deadline(std::chrono::nanoseconds delay,
                                                            std::chrono::steady_clock::time_point now,
                                                            std::chrono::steady_clock::time_point deadline) {
    // Compared as durations, so a deadline at time_point::max() (none) cannot overflow.
    if (deadline <= now || delay >= deadline - now) return std::nullopt;
    return delay;
}

}  // namespace fiskai::llm
