#pragma once
// Just enough of the NKeys encoding to connect with a context's credentials: the public key
// of an `nkey` seed file (nats.c 3.4.1 wants it beside the seed; the Go client derives it),
// the user JWT of a `creds` file, and the signature of the server's nonce. Ed25519 comes
// from OpenSSL.

#include <array>
#include <optional>
#include <string>
#include <string_view>

namespace fiskai::conns::detail {

// The first user seed (`SU...`) found in `text` (a seed file may carry comments), or nullopt.
[[nodiscard]] std::optional<std::string> find_user_seed(std::string_view text);

// The user public key (`U...`, 56 characters) of a user seed; nullopt when the seed is not a
// well-formed user seed (bad alphabet, length, prefix or checksum).
[[nodiscard]] std::optional<std::string> user_public_key(std::string_view seed);

// The Ed25519 signature of `data` by the user seed `seed` (`SU...`); nullopt when the seed is
// not a well-formed user seed.
[[nodiscard]] std::optional<std::array<unsigned char, 64>> sign(std::string_view seed, std::string_view data);

// The user JWT of a credentials file's text: the first fenced block of the decorated format
// `nsc` writes (`-----BEGIN NATS USER JWT-----`, the JWT, `------END NATS USER JWT------`),
// or the whole text, trimmed, when it has no fenced block (a bare JWT file), as the Go
// client reads it; nullopt when that leaves nothing.
[[nodiscard]] std::optional<std::string> find_user_jwt(std::string_view text);

// The seed (`SU...`) of a raw 32-byte Ed25519 user seed.
[[nodiscard]] std::string encode_user_seed(const unsigned char (&raw)[32]);

// CRC-16/XMODEM as NKeys checksums its encodings.
[[nodiscard]] unsigned crc16(const unsigned char* data, std::size_t size) noexcept;

}  // namespace fiskai::conns::detail
