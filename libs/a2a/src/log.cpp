#include <fiskai/a2a/log.hpp>

namespace fiskai::a2a {

std::string_view to_string(log_level l) noexcept {
    switch (l) {
    case log_level::debug: return "DEBUG";
    case log_level::info: return "INFO";
    case log_level::warn: return "WARN";
    case log_level::error: return "ERROR";
    }
    return "INFO";
}

}  // namespace fiskai::a2a
