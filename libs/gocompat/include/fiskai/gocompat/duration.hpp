#pragma once
// Go duration strings ("90s", "1m30s", "1.5h", "-2m", "300ms"), parsed and printed exactly
// as time.ParseDuration and Duration.String do. Config files are shared with the Go
// implementation, so the accepted grammar and the error texts are part of the contract.

#include <chrono>
#include <stdexcept>
#include <string>
#include <string_view>

namespace fiskai::gocompat {

// Thrown by parse_duration; what() is Go's error text, e.g.
// `time: invalid duration "abc"`, `time: missing unit in duration "1"`,
// `time: unknown unit "d" in duration "1d"`.
class duration_error : public std::invalid_argument {
public:
    using std::invalid_argument::invalid_argument;
};

// An optional sign, then one or more <decimal number><unit> groups with no spaces. Units:
// ns, us, µs (U+00B5), μs (U+03BC), ms, s, m, h. The bare string "0" (optionally signed)
// needs no unit. Values beyond the int64 nanosecond range are errors, as are empty strings.
[[nodiscard]] std::chrono::nanoseconds parse_duration(std::string_view text);

// Duration.String(): "0s", "300ms", "1.5s", "1m30s", "2h0m0s", "1µs" (U+00B5), "-2m0s".
[[nodiscard]] std::string format_duration(std::chrono::nanoseconds d);

// Any std::chrono duration (steady_clock's included), truncated to nanoseconds.
template <class Rep, class Period>
[[nodiscard]] std::string format_duration(std::chrono::duration<Rep, Period> d) {
    return format_duration(std::chrono::duration_cast<std::chrono::nanoseconds>(d));
}

}  // namespace fiskai::gocompat
