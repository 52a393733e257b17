#include "nkeys.hpp"

#include <openssl/evp.h>

#include <array>
#include <cctype>
#include <memory>
#include <vector>

namespace fiskai::conns::detail {

namespace {

constexpr std::string_view alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
constexpr unsigned char prefix_seed = 18 << 3;  // 'S'
constexpr unsigned char prefix_user = 20 << 3;  // 'U'

std::optional<std::vector<unsigned char>> base32_decode(std::string_view s) {
    std::vector<unsigned char> out;
    unsigned buffer = 0;
    int bits = 0;
    for (char c : s) {
        const auto pos = alphabet.find(c);
        if (pos == std::string_view::npos) return std::nullopt;
        buffer = (buffer << 5) | static_cast<unsigned>(pos);
        bits += 5;
        if (bits >= 8) {
            bits -= 8;
            out.push_back(static_cast<unsigned char>((buffer >> bits) & 0xFF));
        }
    }
    return out;
}

std::string base32_encode(const std::vector<unsigned char>& data) {
    std::string out;
    unsigned buffer = 0;
    int bits = 0;
    for (unsigned char b : data) {
        buffer = (buffer << 8) | b;
        bits += 8;
        while (bits >= 5) {
            bits -= 5;
            out.push_back(alphabet[(buffer >> bits) & 0x1F]);
        }
    }
    if (bits > 0) out.push_back(alphabet[(buffer << (5 - bits)) & 0x1F]);
    return out;
}

}  // namespace

unsigned crc16(const unsigned char* data, std::size_t size) noexcept {
    unsigned crc = 0;
    for (std::size_t i = 0; i < size; ++i) {
        crc ^= static_cast<unsigned>(data[i]) << 8;
        for (int b = 0; b < 8; ++b) crc = (crc & 0x8000) ? ((crc << 1) ^ 0x1021) : (crc << 1);
        crc &= 0xFFFF;
    }
    return crc;
}

std::string encode_user_seed(const unsigned char (&raw)[32]) {
    std::vector<unsigned char> out;
    out.push_back(static_cast<unsigned char>(prefix_seed | (prefix_user >> 5)));
    out.push_back(static_cast<unsigned char>((prefix_user & 31) << 3));
    out.insert(out.end(), raw, raw + 32);
    const unsigned crc = crc16(out.data(), out.size());
    out.push_back(static_cast<unsigned char>(crc & 0xFF));
    out.push_back(static_cast<unsigned char>(crc >> 8));
    return base32_encode(out);
}

std::optional<std::string> find_user_seed(std::string_view text) {
    std::size_t i = 0;
    while (i < text.size()) {
        while (i < text.size() && !std::isalnum(static_cast<unsigned char>(text[i]))) ++i;
        std::size_t j = i;
        while (j < text.size() && std::isalnum(static_cast<unsigned char>(text[j]))) ++j;
        const auto token = text.substr(i, j - i);
        if (token.size() == 58 && token.substr(0, 2) == "SU") return std::string(token);
        i = j;
    }
    return std::nullopt;
}

std::optional<std::string> user_public_key(std::string_view seed) {
    const auto raw = base32_decode(seed);
    if (!raw || raw->size() != 36) return std::nullopt;
    const auto& b = *raw;
    if ((b[0] & 0xF8) != prefix_seed) return std::nullopt;
    const unsigned kind = ((b[0] & 0x07u) << 5) | ((b[1] & 0xF8u) >> 3);
    if (kind != prefix_user) return std::nullopt;
    const unsigned stored = static_cast<unsigned>(b[34]) | (static_cast<unsigned>(b[35]) << 8);
    if (crc16(b.data(), 34) != stored) return std::nullopt;

    std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)> key(
        EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, nullptr, b.data() + 2, 32), &EVP_PKEY_free);
    if (!key) return std::nullopt;
    std::array<unsigned char, 32> pub{};
    std::size_t len = pub.size();
    if (EVP_PKEY_get_raw_public_key(key.get(), pub.data(), &len) != 1 || len != pub.size()) return std::nullopt;

    std::vector<unsigned char> out;
    out.push_back(prefix_user);
    out.insert(out.end(), pub.begin(), pub.end());
    const unsigned crc = crc16(out.data(), out.size());
    out.push_back(static_cast<unsigned char>(crc & 0xFF));
    out.push_back(static_cast<unsigned char>(crc >> 8));
    return base32_encode(out);
}

}  // namespace fiskai::conns::detail
