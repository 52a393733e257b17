#include <fiskai/toolkit/tool.hpp>

namespace fiskai::toolkit {

std::optional<std::string> tool::check_arguments(const boost::json::value&) const { return std::nullopt; }

std::string tool::describe_call(const boost::json::value&) const { return name(); }

bool is_valid_name(std::string_view name) noexcept {
    if (name.empty()) return false;
    for (const char c : name) {
        const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
                        c == '-';
        if (!ok) return false;
    }
    return true;
}

}  // namespace fiskai::toolkit
