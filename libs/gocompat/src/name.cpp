#include <fiskai/gocompat/name.hpp>

namespace fiskai::gocompat {

// Equivalent to the RE2 pattern ^[a-zA-Z0-9_-]+$; a fixed character class needs no engine.
bool is_valid_name(std::string_view name, std::size_t max_length) noexcept {
    if (name.empty() || name.size() > max_length) return false;
    for (const char c : name) {
        const bool ok =
            (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
        if (!ok) return false;
    }
    return true;
}

}  // namespace fiskai::gocompat
