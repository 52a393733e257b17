#include <fiskai/gocompat/time.hpp>

#include <catch2/catch.hpp>

using namespace fiskai::gocompat;
using namespace std::chrono;

namespace {
go_time at(year_month_day date, seconds time_of_day, std::uint32_t nanos, minutes offset = minutes{0}) {
    return go_time{sys_days{date} + time_of_day, nanos, offset};
}
}  // namespace

// Expected bytes: t.Format(time.RFC3339Nano) / t.Format(time.RFC3339) in Go.
TEST_CASE("gocompat: RFC 3339 formatting as Go's time package", "[gocompat][time]") {
    const auto t = at(2026y / May / 4, 9h + 15min + 27s, 482'900'000);
    CHECK(format_rfc3339_nano(t) == "2026-05-04T09:15:27.4829Z");
    CHECK(format_rfc3339(t) == "2026-05-04T09:15:27Z");
    CHECK(format_rfc3339_millis(t) == "2026-05-04T09:15:27.482Z");
    CHECK(format_rfc3339_nano(at(2026y / May / 4, 9h, 0)) == "2026-05-04T09:00:00Z");
    CHECK(format_rfc3339_nano(at(2026y / May / 4, 9h, 1)) == "2026-05-04T09:00:00.000000001Z");
    CHECK(format_rfc3339_millis(at(2026y / May / 4, 9h, 0)) == "2026-05-04T09:00:00.000Z");
    // The wall clock at the offset the time carries.
    CHECK(format_rfc3339_nano(at(2026y / May / 4, 23h + 30min, 500'000'000, minutes{150})) ==
          "2026-05-05T02:00:00.5+02:30");
    CHECK(format_rfc3339(at(2026y / January / 1, 0s, 0, minutes{-300})) == "2025-12-31T19:00:00-05:00");
    // Go's zero time.
    CHECK(format_rfc3339_nano(go_time{sys_days{year{1} / January / 1}, 0, minutes{0}}) == "0001-01-01T00:00:00Z");
}

TEST_CASE("gocompat: to_go_time reads the system clock in UTC", "[gocompat][time]") {
    const auto now = system_clock::now();
    const auto t = to_go_time(now);
    CHECK(t.offset == minutes{0});
    CHECK(t.nanos < 1'000'000'000U);
    CHECK(t.seconds + nanoseconds{t.nanos} == time_point_cast<nanoseconds>(now));
}

TEST_CASE("gocompat: parse_rfc3339 is Go's strict RFC 3339 parse", "[gocompat][time]") {
    auto p = parse_rfc3339("2026-05-04T09:15:27.4829Z");
    REQUIRE(p);
    CHECK(*p == at(2026y / May / 4, 9h + 15min + 27s, 482'900'000));
    p = parse_rfc3339("2026-05-05T02:00:00.5+02:30");
    REQUIRE(p);
    CHECK(p->offset == minutes{150});
    CHECK(p->seconds == sys_days{2026y / May / 4} + 23h + 30min);
    CHECK(format_rfc3339_nano(*p) == "2026-05-05T02:00:00.5+02:30");
    p = parse_rfc3339("2026-05-04T09:15:27.1234567899Z");  // digits past nine dropped
    REQUIRE(p);
    CHECK(p->nanos == 123'456'789U);
    CHECK(parse_rfc3339("2024-02-29T00:00:00Z"));
    for (const char* bad :
         {"", "2026-05-04", "2026-05-04 09:15:27Z", "2026-05-04T09:15:27", "2026-05-04T09:15:27z",
          "2026-05-04T09:15:27+0200", "2026-02-30T00:00:00Z", "2025-02-29T00:00:00Z", "2026-13-01T00:00:00Z",
          "2026-05-04T24:00:00Z", "2026-05-04T09:60:00Z", "2026-05-04T09:15:60Z", "2026-05-04T09:15:27.Z",
          "+2026-05-04T09:15:27Z", "2026-05-04T09:15:27+24:00", "2026-05-04T09:15:27Z "}) {
        INFO(bad);
        CHECK_FALSE(parse_rfc3339(bad));
    }
}
