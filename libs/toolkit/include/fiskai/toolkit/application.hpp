#pragma once
// Loading a fisk application's tools: introspect, parse, derive, filter.

#include <fiskai/toolkit/derive.hpp>
#include <fiskai/toolkit/fisk_model.hpp>
#include <fiskai/toolkit/tool.hpp>

#include <boost/asio/awaitable.hpp>

#include <chrono>
#include <stdexcept>
#include <string>
#include <vector>

namespace fiskai::toolkit {

inline constexpr std::chrono::seconds default_introspect_timeout{30};

class introspection_error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// Runs `<application_path> --fisk-introspect` and parses what it prints. Throws
// introspection_error with one of the four texts (timed out, could not run or exited
// non-zero, output over 16 MiB, not a JSON document).
boost::asio::awaitable<fisk_application> introspect(
    std::string application_path, std::vector<std::string> secret_env_names = {},
    std::chrono::steady_clock::duration timeout = default_introspect_timeout);

struct application_options {
    std::string application_path;  // empty: no application, no tools (not an error)
    std::vector<std::string> secret_env_names;
    derive_options derive;
    std::chrono::steady_clock::duration introspect_timeout = default_introspect_timeout;
};

struct application_tools {
    fisk_application model;
    tool_list tools;                       // command tools, derivation order
    std::vector<dropped_command> dropped;  // why each command was left out
};

// Introspects and derives; throws introspection_error or derive_error.
boost::asio::awaitable<application_tools> load_application_tools(application_options options);

}  // namespace fiskai::toolkit
