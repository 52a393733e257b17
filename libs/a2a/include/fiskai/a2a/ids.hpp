#pragma once
// Message ids: KSUIDs, as segmentio/ksuid makes them. 20 bytes (a 4-byte big-endian
// timestamp in seconds since 1 400 000 000 and 16 random bytes), written in base 62
// (`0-9A-Za-z`), left-padded with `0` to 27 characters. Received ids are opaque strings.

#include <array>
#include <chrono>
#include <cstdint>
#include <string>

namespace fiskai::a2a {

inline constexpr std::int64_t ksuid_epoch = 1'400'000'000;
inline constexpr std::size_t ksuid_length = 27;

// A fresh KSUID: now, and 16 bytes from OpenSSL's RAND_bytes. Throws if the RNG fails.
[[nodiscard]] std::string new_id();

// The KSUID of a given timestamp and payload (deterministic; for tests and tools).
[[nodiscard]] std::string make_ksuid(std::uint32_t timestamp, const std::array<std::uint8_t, 16>& payload);

// The KSUID timestamp of a time point (seconds since ksuid_epoch, wrapped to 32 bits).
[[nodiscard]] std::uint32_t ksuid_timestamp(std::chrono::system_clock::time_point t) noexcept;

}  // namespace fiskai::a2a
