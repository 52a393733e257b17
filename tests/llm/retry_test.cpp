// The retry policy as tables: which statuses are retried, the delays, the deadline clamp.

#include <fiskai/llm/retry.hpp>

#include <catch2/catch.hpp>

using namespace fiskai::llm;
using namespace std::chrono_literals;

TEST_CASE("should_retry table", "[llm][retry]") {
    struct row {
        int status;
        std::optional<std::string> header;
        bool retried;
    };
    const std::vector<row> table{
        {0, std::nullopt, true},    {200, std::nullopt, false}, {400, std::nullopt, false}, {401, std::nullopt, false},
        {404, std::nullopt, false}, {408, std::nullopt, true},  {409, std::nullopt, true},  {429, std::nullopt, true},
        {500, std::nullopt, true},  {529, std::nullopt, true},  {503, "false", false},      {400, "true", true},
        {429, "false", false},      {400, "maybe", false},      {0, "false", true},
    };
    for (const auto& r : table) {
        INFO(r.status << " x-should-retry=" << r.header.value_or("(none)"));
        retry_hints hints;
        hints.should_retry = r.header;
        CHECK(should_retry(r.status, hints) == r.retried);
    }
}

TEST_CASE("retry delay: server hints and exponential backoff", "[llm][retry]") {
    const auto now = std::chrono::system_clock::from_time_t(1'700'000'000);
    retry_hints none;
    // 0.5 s * 2^n capped at 8 s, jitter takes up to 25 % off.
    CHECK(retry_delay(0, none, 0.0, now) == 500ms);
    CHECK(retry_delay(1, none, 0.0, now) == 1s);
    CHECK(retry_delay(3, none, 0.0, now) == 4s);
    CHECK(retry_delay(4, none, 0.0, now) == 8s);
    CHECK(retry_delay(9, none, 0.0, now) == 8s);
    CHECK(retry_delay(0, none, 0.5, now) == 437'500us);
    CHECK(retry_delay(2, none, 0.999999, now) > 1500ms);

    retry_hints ms;
    ms.retry_after_ms = "250";
    ms.retry_after = "30";
    CHECK(retry_delay(0, ms, 0.3, now) == 250ms);  // retry-after-ms wins
    retry_hints seconds;
    seconds.retry_after = "2";
    CHECK(retry_delay(5, seconds, 0.3, now) == 2s);
    retry_hints zero;
    zero.retry_after = "0";
    CHECK(retry_delay(1, zero, 0.3, now) == 0s);
    retry_hints date;
    date.retry_after = "Tue, 14 Nov 2023 22:13:30 GMT";  // now + 10 s
    CHECK(retry_delay(0, date, 0.0, now) == 10s);
    retry_hints too_long;
    too_long.retry_after = "60";  // at or over a minute: ignored, backoff instead
    CHECK(retry_delay(1, too_long, 0.0, now) == 1s);
    retry_hints negative;
    negative.retry_after_ms = "-5";
    CHECK(retry_delay(0, negative, 0.0, now) == 500ms);
    retry_hints garbage;
    garbage.retry_after = "soon";
    CHECK(retry_delay(0, garbage, 0.0, now) == 500ms);
}

TEST_CASE("retry hints from headers are case-insensitive", "[llm][retry]") {
    auto hints =
        retry_hints::from_headers({{"Retry-After-Ms", "10"}, {"X-Should-Retry", "false"}, {"retry-after", "1"}});
    CHECK(hints.retry_after_ms == std::optional<std::string>("10"));
    CHECK(hints.should_retry == std::optional<std::string>("false"));
    CHECK(hints.retry_after == std::optional<std::string>("1"));
}

TEST_CASE("a sleep that would pass the deadline is not taken", "[llm][retry]") {
    const auto now = std::chrono::steady_clock::now();
    CHECK(fit_before_deadline(1s, now, now + 2s) == std::optional<std::chrono::nanoseconds>(1s));
    CHECK_FALSE(fit_before_deadline(2s, now, now + 2s));
    CHECK_FALSE(fit_before_deadline(3s, now, now + 2s));
    CHECK(fit_before_deadline(0s, now, now + 1ms) == std::optional<std::chrono::nanoseconds>(0s));
}

TEST_CASE("retry delay: a server hint too large for any clock falls back to backoff", "[llm][retry]") {
    const auto now = std::chrono::system_clock::from_time_t(1'700'000'000);
    const auto backoff = [&](std::optional<std::string> ms, std::optional<std::string> after) {
        retry_hints hints;
        hints.retry_after_ms = std::move(ms);
        hints.retry_after = std::move(after);
        return retry_delay(0, hints, 0.0, now);
    };
    CHECK(backoff(std::nullopt, "1e300") == 500ms);
    CHECK(backoff(std::nullopt, "-1e300") == 500ms);
    CHECK(backoff("1e300", std::nullopt) == 500ms);
    CHECK(backoff("9223372036854775807", std::nullopt) == 500ms);
    CHECK(backoff(std::nullopt, "Sat, 01 Jan 2263 00:00:00 GMT") == 500ms);
    CHECK(backoff(std::nullopt, "Fri, 31 Dec 9999 23:59:59 GMT") == 500ms);
    CHECK(backoff(std::nullopt, "Mon, 01 Jan 1000 00:00:00 GMT") == 500ms);
    // Just inside the window still counts.
    CHECK(backoff("59999", std::nullopt) == 59'999ms);
}
