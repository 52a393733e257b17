#pragma once
// RFC 3339 time as Go's time package writes and strictly parses it.

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace fiskai::gocompat {

// A time as Go's time.Time carries it on the wire: an instant (whole seconds since the
// Unix epoch in UTC, and nanoseconds past them) and the zone offset it is written with.
// Seconds rather than one nanosecond count, so Go's zero time (year 1) fits.
struct go_time {
    std::chrono::sys_seconds seconds{};
    std::uint32_t nanos = 0;         // 0..999'999'999
    std::chrono::minutes offset{0};  // zero is written `Z`

    friend bool operator==(const go_time&, const go_time&) = default;
};

// A system clock reading, in UTC.
[[nodiscard]] go_time to_go_time(std::chrono::system_clock::time_point t) noexcept;

// time.RFC3339Nano: the fraction's trailing zeros trimmed (the dot dropped when it is
// zero), `Z` for a zero offset, else `+HH:MM`/`-HH:MM` with the wall clock at that
// offset: `2026-05-04T09:15:27.4829Z`, `2026-05-04T11:15:27+02:00`.
[[nodiscard]] std::string format_rfc3339_nano(const go_time& t);

// time.RFC3339: whole seconds, the fraction truncated.
[[nodiscard]] std::string format_rfc3339(const go_time& t);

// RFC 3339 with exactly three fraction digits, as log/slog writes a record's time.
[[nodiscard]] std::string format_rfc3339_millis(const go_time& t);

// Go's strict time.Parse(time.RFC3339, s):
// `YYYY-MM-DDTHH:MM:SS[.fraction](Z|+HH:MM|-HH:MM)`, year 0000-9999, day within its
// month, the fraction truncated to nanoseconds. Nothing else is accepted.
[[nodiscard]] std::optional<go_time> parse_rfc3339(std::string_view s) noexcept;

}  // namespace fiskai::gocompat
