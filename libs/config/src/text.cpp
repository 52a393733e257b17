#include "text.hpp"

namespace fiskai::config::detail {

std::string ascii_lower(std::string_view s) {
    std::string out(s);
    for (auto& c : out) {
        if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    }
    return out;
}

std::string base_name(std::string_view path) {
    if (path.empty()) return ".";
    while (path.size() > 1 && path.back() == '/') path.remove_suffix(1);
    if (path == "/") return "/";
    if (const auto slash = path.rfind('/'); slash != std::string_view::npos) {
        path.remove_prefix(slash + 1);
    }
    return std::string(path);
}

}  // namespace fiskai::config::detail
