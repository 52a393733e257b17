#pragma once
// Just enough of the NKeys encoding to connect with a context's `nkey` seed file: nats.c
// 3.4.1 wants the public key next to the seed file, and the Go client derives it from the
// seed. Ed25519 comes from OpenSSL.

#include <optional>
#include <string>
#include <string_view>

namespace fiskai::conns::detail {

// The first user seed (`SU...`) found in `text` (a seed file may carry comments), or nullopt.
[[nodiscard]] std::optional<std::string> find_user_seed(std::string_view text);

// The user public key (`U...`, 56 characters) of a user seed; nullopt when the seed is not a
// well-formed user seed (bad alphabet, length, prefix or checksum).
[[nodiscard]] std::optional<std::string> user_public_key(std::string_view seed);

// The seed (`SU...`) of a raw 32-byte Ed25519 user seed.
[[nodiscard]] std::string encode_user_seed(const unsigned char (&raw)[32]);

// CRC-16/XMODEM as NKeys checksums its encodings.
[[nodiscard]] unsigned crc16(const unsigned char* data, std::size_t size) noexcept;

}  // namespace fiskai::conns::detail
