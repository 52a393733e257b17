// Key rules, write validation, capacity and the stored value format, shared by every
// backend (Go's internal/memory texts).
#include <fiskai/memory/store.hpp>

#include "collapse_line.hpp"

#include <fiskai/gocompat/quote.hpp>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <array>
#include <cctype>

namespace fiskai::memory {

result<void> validate_key(std::string_view key) {
    if (key.empty()) return make_error(errc::invalid_key, "memory key must not be empty");
    // The charset is ASCII, so a longer key in bytes is only too long when it also has
    // more runes: count them as Go does.
    std::size_t runes = 0;
    for (std::size_t i = 0; i < key.size();) {
        i += gocompat::decode_rune(key, i).size;
        ++runes;
    }
    if (runes > max_key_chars) {
        return make_error(errc::invalid_key,
                          fmt::format("memory key is too long: at most {} characters", max_key_chars));
    }
    const bool charset_ok = std::all_of(key.begin(), key.end(), [](char c) {
        return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
               c == '=' || c == '-';
    });
    if (!charset_ok) {
        return make_error(errc::invalid_key,
                          fmt::format("memory key {} is invalid: use only letters, digits and '.', '_', '=' or '-' (no "
                                      "slashes or spaces)",
                                      gocompat::quote(key)));
    }
    if (key.front() == '.' || key.back() == '.') {
        return make_error(errc::invalid_key, fmt::format("memory key {} is invalid: it must not start or end with '.'",
                                                         gocompat::quote(key)));
    }
    if (key.find("..") != std::string_view::npos) {
        return make_error(errc::invalid_key,
                          fmt::format("memory key {} is invalid: it must not contain '..'", gocompat::quote(key)));
    }
    return {};
}

result<std::string> validate_write(std::string_view key, std::string_view description, std::string_view content) {
    if (auto k = validate_key(key); !k) return k.error();
    bool cut = false;
    std::string normalized = detail::collapse_line(description, max_description_runes, cut);
    // A cut can leave the joining space at the end; Go keeps it (it truncates the joined text).
    if (normalized.empty()) return make_error(errc::invalid_write, "a memory description must not be empty");
    if (content.size() > max_content_bytes) {
        return make_error(errc::invalid_write, fmt::format("memory content is too large: {} bytes, limit is {}",
                                                           content.size(), max_content_bytes));
    }
    return normalized;
}

result<void> check_capacity(std::size_t count) {
    if (count >= max_entries) {
        return make_error(
            errc::full, fmt::format("memory is full: {} entries, limit is {}; delete an entry before creating another",
                                    count, max_entries));
    }
    return {};
}

namespace {

bool looks_numeric(std::string_view s) {
    std::string_view t = s;
    if (!t.empty() && (t.front() == '+' || t.front() == '-')) t.remove_prefix(1);
    if (t.empty()) return false;
    if (t.substr(0, 2) == "0x" || t.substr(0, 2) == "0o" || t.substr(0, 2) == "0b") return true;
    if (t == ".inf" || t == ".Inf" || t == ".INF" || t == ".nan" || t == ".NaN" || t == ".NAN") return true;
    bool digit = false;
    for (char c : t) {
        if (std::isdigit(static_cast<unsigned char>(c))) {
            digit = true;
        } else if (c != '.' && c != 'e' && c != 'E' && c != '+' && c != '-' && c != '_' && c != ':') {
            return false;
        }
    }
    return digit;
}

// Whether a one-line string can be written as a plain YAML scalar and read back as the
// same string. Conservative: anything doubtful is quoted, which only changes the bytes
// of the header, never what it reads back as.
bool plain_safe(std::string_view s) {
    if (s.empty()) return false;
    constexpr std::string_view indicators = "-?:,[]{}#&*!|>'\"%@`";
    if (indicators.find(s.front()) != std::string_view::npos) return false;
    if (s.front() == ' ' || s.back() == ' ' || s.back() == ':') return false;
    if (s.find(": ") != std::string_view::npos || s.find(" #") != std::string_view::npos) return false;
    for (unsigned char c : s) {
        if (c < 0x20 || c == 0x7f) return false;
    }
    std::string lower(s);
    std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
    static constexpr std::array<std::string_view, 12> reserved{"true", "false", "yes", "no", "on", "off",
                                                               "null", "~",     "y",   "n",  "=",  "<<"};
    if (std::find(reserved.begin(), reserved.end(), lower) != reserved.end()) return false;
    return !looks_numeric(s);
}

}  // namespace

std::string serialize(std::string_view description, std::string_view content) {
    std::string out = "---\ndescription: ";
    // A double-quoted YAML scalar accepts every escape Go's %q writes.
    out += plain_safe(description) ? std::string(description) : gocompat::quote(description);
    out += "\n---\n\n";
    out += content;
    return out;
}

entry parse(std::string_view value) {
    constexpr std::string_view opening = "---\n";
    if (value.substr(0, opening.size()) != opening) return {"", std::string(value)};
    const auto rest = value.substr(opening.size());
    constexpr std::string_view closing = "\n---\n";
    std::string_view header;
    std::string_view content;
    if (const auto idx = rest.find(closing); idx != std::string_view::npos) {
        header = rest.substr(0, idx + 1);
        content = rest.substr(idx + closing.size());
    } else if (rest.size() >= 4 && rest.substr(rest.size() - 4) == "\n---") {
        // The document ends right after the closing delimiter: empty content.
        header = rest.substr(0, rest.size() - 3);
    } else {
        return {"", std::string(value)};
    }
    if (!content.empty() && content.front() == '\n') content.remove_prefix(1);
    try {
        const YAML::Node doc = YAML::Load(std::string(header));
        std::string description;
        if (doc.IsMap()) {
            const YAML::Node d = doc["description"];
            if (d && !d.IsNull()) {
                if (!d.IsScalar()) return {"", std::string(value)};
                description = d.as<std::string>();
            }
        } else if (!doc.IsNull()) {
            return {"", std::string(value)};
        }
        return {std::move(description), std::string(content)};
    } catch (const YAML::Exception&) {
        return {"", std::string(value)};
    }
}

}  // namespace fiskai::memory
