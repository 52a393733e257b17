#pragma once
// The retry policy both providers share, free of I/O: the Anthropic SDK's default (which
// fisk-ai's Go original inherits). Which failures are retried, how long to wait before the
// next attempt, and whether that wait still fits before the call's deadline.

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace fiskai::llm {

// The response headers the policy reads, taken from a response (names case-insensitive).
struct retry_hints {
    std::optional<std::string> should_retry;    // x-should-retry
    std::optional<std::string> retry_after_ms;  // retry-after-ms
    std::optional<std::string> retry_after;     // retry-after (seconds or an HTTP date)

    [[nodiscard]] static retry_hints from_headers(const std::vector<std::pair<std::string, std::string>>& headers);
};

// status 0 means there was no response (the connection failed or was closed): retried.
// `x-should-retry: true|false` decides first; then 408, 409, 429 and >= 500 are retried.
[[nodiscard]] bool should_retry(int status, const retry_hints& hints);

// The wait before retry number `retry` (0 for the first retry). A server's
// retry-after-ms / retry-after in [0, 60 s) is honoured; otherwise 0.5 s * 2^retry capped
// at 8 s, minus jitter (jitter01 in [0, 1) scales up to 25 % off). `now` resolves an
// HTTP-date retry-after.
[[nodiscard]] std::chrono::nanoseconds retry_delay(int retry, const retry_hints& hints, double jitter01,
                                                   std::chrono::system_clock::time_point now);

// The wait to take, or nothing when sleeping it would pass the call's deadline (the
// caller then stops retrying).
[[nodiscard]] std::optional<std::chrono::nanoseconds> fit_before_deadline(
    std::chrono::nanoseconds delay, std::chrono::steady_clock::time_point now,
    std::chrono::steady_clock::time_point deadline);

}  // namespace fiskai::llm
