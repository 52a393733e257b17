#pragma once
// The model a fisk application prints on --fisk-introspect, parsed tolerantly: unknown
// keys are ignored, absent keys keep their defaults, key names match case-insensitively
// (as Go's decoder does).

#include <boost/json/object.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fiskai::toolkit {

struct fisk_flag {
    std::string name;
    std::string help;
    std::vector<std::string> defaults;  // `default`
    std::string envar;
    bool required = false;
    bool hidden = false;
    bool boolean = false;
    bool negatable = false;
    bool cumulative = false;
    std::vector<std::string> completions;
};

struct fisk_arg {
    std::string name;
    std::string help;
    std::vector<std::string> defaults;
    bool required = false;
    bool hidden = false;
    bool cumulative = false;
};

struct fisk_command {
    std::string name;
    std::string help;
    std::string help_long;
    bool hidden = false;
    std::vector<std::string> tags;
    std::optional<boost::json::object> restricted_schema;
    std::vector<fisk_flag> flags;
    std::vector<fisk_arg> args;
    std::vector<fisk_command> commands;

    [[nodiscard]] bool is_leaf() const noexcept { return commands.empty(); }
};

struct fisk_application {
    std::string name;
    std::string help;
    std::string version;
    std::vector<fisk_command> commands;
    std::vector<fisk_flag> flags;  // application-level (global) flags
};

// Parses an introspection document. Throws std::runtime_error with the decoder's message
// when the text is not one JSON value or its shape is wrong where it matters (a list
// where an object must be, ...).
[[nodiscard]] fisk_application parse_fisk_model(std::string_view json_text);

}  // namespace fiskai::toolkit
