#include "nkeys.hpp"

#include <openssl/crypto.h>
#include <openssl/evp.h>

#include <algorithm>
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

namespace {

// The 32 raw bytes of a user seed, checked (alphabet, length, prefix, checksum), as an
// OpenSSL key.
using key_ptr = std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)>;

key_ptr user_seed_key(std::string_view seed) {
    key_ptr none(nullptr, &EVP_PKEY_free);
    auto raw = base32_decode(seed);
    if (!raw || raw->size() != 36) return none;
    auto& b = *raw;
    const unsigned kind = ((b[0] & 0x07u) << 5) | ((b[1] & 0xF8u) >> 3);
    const unsigned stored = static_cast<unsigned>(b[34]) | (static_cast<unsigned>(b[35]) << 8);
    const bool valid = (b[0] & 0xF8) == prefix_seed && kind == prefix_user && crc16(b.data(), 34) == stored;
    key_ptr key(valid ? EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, nullptr, b.data() + 2, 32) : nullptr,
                &EVP_PKEY_free);
    OPENSSL_cleanse(b.data(), b.size());
    return key;
}

}  // namespace

std::optional<std::string> user_public_key(std::string_view seed) {
    const auto key = user_seed_key(seed);
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

std::optional<std::array<unsigned char, 64>> sign(std::string_view seed, std::string_view data) {
    const auto key = user_seed_key(seed);
    if (!key) return std::nullopt;
    std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(), &EVP_MD_CTX_free);
    std::array<unsigned char, 64> signature{};
    std::size_t len = signature.size();
    // Ed25519 hashes internally: no digest is named, and the data is signed in one call.
    if (!ctx || EVP_DigestSignInit(ctx.get(), nullptr, nullptr, nullptr, key.get()) != 1 ||
        EVP_DigestSign(ctx.get(), signature.data(), &len, reinterpret_cast<const unsigned char*>(data.data()),
                       data.size()) != 1 ||
        len != signature.size())
        return std::nullopt;
    return signature;
}

std::optional<std::string> find_user_jwt(std::string_view text) {
    // A fence: a line that starts and ends with at least three dashes.
    const auto is_fence = [](std::string_view line) {
        while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.remove_suffix(1);
        while (!line.empty() && line.front() == ' ') line.remove_prefix(1);
        return line.size() >= 6 && line.substr(0, 3) == "---" && line.substr(line.size() - 3) == "---";
    };
    const auto trim = [](std::string_view s) {
        while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
        while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
        return s;
    };
    std::vector<std::string_view> lines;
    for (std::size_t start = 0; start <= text.size();) {
        auto end = text.find('\n', start);
        if (end == std::string_view::npos) end = text.size();
        lines.push_back(text.substr(start, end - start));
        start = end + 1;
    }
    for (std::size_t i = 0; i + 2 < lines.size(); ++i) {
        if (!is_fence(lines[i]) || !is_fence(lines[i + 2])) continue;
        const auto content = trim(lines[i + 1]);
        const bool token = !content.empty() && std::all_of(content.begin(), content.end(), [](char c) {
            return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.' || c == '=';
        });
        if (token) return std::string(content);
    }
    const auto whole = trim(text);
    if (whole.empty() || whole.find("---") != std::string_view::npos) return std::nullopt;
    return std::string(whole);
}

}  // namespace fiskai::conns::detail
