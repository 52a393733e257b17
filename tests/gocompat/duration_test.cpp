#include <fiskai/gocompat/duration.hpp>

#include <catch2/catch.hpp>

#include <chrono>
#include <cstdint>
#include <limits>
#include <string>

using fiskai::gocompat::duration_error;
using fiskai::gocompat::format_duration;
using fiskai::gocompat::parse_duration;
using namespace std::chrono_literals;
using ns = std::chrono::nanoseconds;

namespace {

std::string duration_error_of(std::string_view s) {
    try {
        (void)parse_duration(s);
    } catch (const duration_error& e) {
        return e.what();
    }
    return "<no error>";
}

constexpr auto int64_max = std::numeric_limits<std::int64_t>::max();
constexpr auto int64_min = std::numeric_limits<std::int64_t>::min();

}  // namespace

TEST_CASE("gocompat: parse_duration accepts Go's grammar", "[gocompat][duration]") {
    CHECK(parse_duration("0") == ns{0});
    CHECK(parse_duration("-0") == ns{0});
    CHECK(parse_duration("+0") == ns{0});
    CHECK(parse_duration("0s") == ns{0});
    CHECK(parse_duration("5s") == 5s);
    CHECK(parse_duration("30s") == 30s);
    CHECK(parse_duration("90s") == 90s);
    CHECK(parse_duration("1m30s") == 90s);
    CHECK(parse_duration("1.5h") == 90min);
    CHECK(parse_duration("-2m") == -2min);
    CHECK(parse_duration("+2m") == 2min);
    CHECK(parse_duration("300ms") == 300ms);
    CHECK(parse_duration("2h45m") == 2h + 45min);
    CHECK(parse_duration("1h1m1s1ms1us1ns") == 1h + 1min + 1s + 1ms + 1us + 1ns);
    CHECK(parse_duration("1ns") == 1ns);
    CHECK(parse_duration("1us") == 1us);
    // Both micro spellings Go accepts: U+00B5 MICRO SIGN and U+03BC GREEK SMALL LETTER MU.
    CHECK(parse_duration("1\u00B5s") == 1us);
    CHECK(parse_duration("1\u03BCs") == 1us);
    CHECK(parse_duration("2.5\u00B5s") == 2500ns);
}

TEST_CASE("gocompat: parse_duration handles fractions like Go", "[gocompat][duration]") {
    CHECK(parse_duration(".5s") == 500ms);
    CHECK(parse_duration("-.5s") == -500ms);
    // A point with no digits after it is allowed when digits precede it.
    CHECK(parse_duration("1.h") == 1h);
    CHECK(parse_duration("1.s") == 1s);
    CHECK(parse_duration("0.000000001s") == 1ns);
    // Precision beyond nanoseconds is truncated, not rounded.
    CHECK(parse_duration("1.0000000019s") == 1s + 1ns);
    CHECK(parse_duration("0.1h") == 6min);
    CHECK(parse_duration("1.5m1.5s") == 91500ms);
}

TEST_CASE("gocompat: parse_duration covers the int64 range exactly", "[gocompat][duration]") {
    CHECK(parse_duration("9223372036854775807ns") == ns{int64_max});
    CHECK(parse_duration("-9223372036854775808ns") == ns{int64_min});
    CHECK(parse_duration("2562047h") == 2562047h);
    CHECK(duration_error_of("9223372036854775808ns") == R"(time: invalid duration "9223372036854775808ns")");
    CHECK(duration_error_of("2562048h") == R"(time: invalid duration "2562048h")");
    CHECK(duration_error_of("10000000000000000000ns") == R"(time: invalid duration "10000000000000000000ns")");
    CHECK(duration_error_of("9223372036854775807ns1ns") == R"(time: invalid duration "9223372036854775807ns1ns")");
    CHECK(duration_error_of("-9223372036854775809ns") == R"(time: invalid duration "-9223372036854775809ns")");
}

TEST_CASE("gocompat: parse_duration errors carry Go's texts", "[gocompat][duration]") {
    CHECK(duration_error_of("") == R"(time: invalid duration "")");
    CHECK(duration_error_of("abc") == R"(time: invalid duration "abc")");
    CHECK(duration_error_of("-") == R"(time: invalid duration "-")");
    CHECK(duration_error_of("+") == R"(time: invalid duration "+")");
    CHECK(duration_error_of(".") == R"(time: invalid duration ".")");
    CHECK(duration_error_of(".s") == R"(time: invalid duration ".s")");
    CHECK(duration_error_of("-.s") == R"(time: invalid duration "-.s")");
    CHECK(duration_error_of(" 1s") == R"(time: invalid duration " 1s")");
    CHECK(duration_error_of("1") == R"(time: missing unit in duration "1")");
    CHECK(duration_error_of("-1") == R"(time: missing unit in duration "-1")");
    CHECK(duration_error_of("1s2") == R"(time: missing unit in duration "1s2")");
    CHECK(duration_error_of("1.5.5s") == R"(time: missing unit in duration "1.5.5s")");
    CHECK(duration_error_of("1d") == R"(time: unknown unit "d" in duration "1d")");
    CHECK(duration_error_of("1s ") == R"(time: unknown unit "s " in duration "1s ")");
    CHECK(duration_error_of("1e3s") == R"(time: unknown unit "e" in duration "1e3s")");
    CHECK(duration_error_of("1S") == R"(time: unknown unit "S" in duration "1S")");
    CHECK(duration_error_of("soon") == R"(time: invalid duration "soon")");
    CHECK(duration_error_of("not-a-duration") == R"(time: invalid duration "not-a-duration")");
}

TEST_CASE("gocompat: parse_duration quotes like Go's time package", "[gocompat][duration]") {
    // time.quote prints every byte of a non-ASCII rune as \xNN (it is not strconv.Quote).
    CHECK(duration_error_of("1\u00B5x") == R"(time: unknown unit "\xc2\xb5x" in duration "1\xc2\xb5x")");
    CHECK(duration_error_of("\u00E9") == R"(time: invalid duration "\xc3\xa9")");
    CHECK(duration_error_of("1\xFFs") == R"(time: unknown unit "\xffs" in duration "1\xffs")");
    CHECK(duration_error_of("1\xEF\xBF\xBD") == R"(time: unknown unit "\xef\xbf\xbd" in duration "1\xef\xbf\xbd")");
    CHECK(duration_error_of("a\"b\\c") == R"(time: invalid duration "a\"b\\c")");
    CHECK(duration_error_of("1\ts") == R"(time: unknown unit "\x09s" in duration "1\x09s")");
}

TEST_CASE("gocompat: format_duration prints like Duration.String", "[gocompat][duration]") {
    CHECK(format_duration(0s) == "0s");
    CHECK(format_duration(1ns) == "1ns");
    CHECK(format_duration(999ns) == "999ns");
    CHECK(format_duration(1us) == "1\u00B5s");
    CHECK(format_duration(1100ns) == "1.1\u00B5s");
    CHECK(format_duration(1500us) == "1.5ms");
    CHECK(format_duration(300ms) == "300ms");
    CHECK(format_duration(999999999ns) == "999.999999ms");
    CHECK(format_duration(1s) == "1s");
    CHECK(format_duration(1500ms) == "1.5s");
    CHECK(format_duration(1s + 1ns) == "1.000000001s");
    CHECK(format_duration(30s) == "30s");
    CHECK(format_duration(90s) == "1m30s");
    CHECK(format_duration(120s) == "2m0s");
    CHECK(format_duration(2min + 500ms) == "2m0.5s");
    CHECK(format_duration(1h) == "1h0m0s");
    CHECK(format_duration(2h + 45min) == "2h45m0s");
    CHECK(format_duration(-2min) == "-2m0s");
    CHECK(format_duration(-1ns) == "-1ns");
    CHECK(format_duration(-1500ms) == "-1.5s");
    CHECK(format_duration(ns{int64_max}) == "2562047h47m16.854775807s");
    CHECK(format_duration(ns{int64_min}) == "-2562047h47m16.854775808s");
}

TEST_CASE("gocompat: format_duration output parses back to the same value", "[gocompat][duration]") {
    for (const ns d : {ns{0}, ns{1}, ns{1100}, ns{1500000}, ns{std::chrono::nanoseconds(90s)},
                       ns{std::chrono::nanoseconds(-2min)}, ns{int64_max}, ns{int64_min}, ns{3723000000001}}) {
        INFO(format_duration(d));
        CHECK(parse_duration(format_duration(d)) == d);
    }
}

TEST_CASE("gocompat: format_duration takes steady_clock durations", "[gocompat][duration]") {
    CHECK(fiskai::gocompat::format_duration(std::chrono::steady_clock::duration(1500ms)) == "1.5s");
    CHECK(fiskai::gocompat::format_duration(std::chrono::microseconds(12250)) == "12.25ms");
    CHECK(fiskai::gocompat::format_duration(std::chrono::nanoseconds(850)) == "850ns");
}
