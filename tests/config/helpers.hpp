#pragma once
// Shared helpers for the config tests: the error text a parse produces, or a marker.

#include <fiskai/config/config.hpp>

#include <exception>
#include <string>
#include <string_view>

namespace config_test {

// The exact what() of the config_error thrown by parse, "<no error>" on success, and a
// marker when some other exception type escapes (which would itself be a bug).
inline std::string parse_error(std::string_view yaml, fiskai::config::mode m = fiskai::config::mode::lenient) {
    try {
        (void)fiskai::config::parse(yaml, m);
    } catch (const fiskai::config::config_error& e) {
        return e.what();
    } catch (const std::exception& e) {
        return std::string("<unexpected exception> ") + e.what();
    }
    return "<no error>";
}

inline std::string validate_error(const fiskai::config::config& c, fiskai::config::mode m) {
    try {
        fiskai::config::validate_for_mode(c, m);
    } catch (const fiskai::config::config_error& e) {
        return e.what();
    }
    return "<no error>";
}

// Enough for every mode but server/serve: a prompt, a model and an MCP block.
inline constexpr std::string_view minimal_agent = "system_prompt: hi\nllm: {model: m}\n";

}  // namespace config_test
