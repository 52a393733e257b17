#pragma once
// From JSON arguments to argv, exactly as fisk's own ArgsFromJSON renders them, so the
// wrapped binary parses back what the model meant. Never a shell.

#include <fiskai/toolkit/derive.hpp>

#include <boost/json/fwd.hpp>

#include <stdexcept>
#include <string>
#include <vector>

namespace fiskai::toolkit {

class argv_error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// The argv after the binary path: command words, global flag tokens, the command's flag
// tokens, then `--` and positionals. Null or absent arguments count as {}. Numbers keep
// their exact decimal text. Throws argv_error with fisk's message texts, wrapped as
// `building command line for "<path>": ...` or `building global flags for "<path>": ...`.
[[nodiscard]] std::vector<std::string> render_argv(const command_spec& spec, const boost::json::value& arguments);

// argv joined with single spaces, unquoted: the `command` of a CommandResult.
[[nodiscard]] std::string command_line(const std::vector<std::string>& argv);

// argv for a person deciding whether to approve it: an argument that is empty or holds
// anything beyond letters, digits and `_-./:=,@%+` is shown Go-quoted (`"a b\nc"`), so
// argument boundaries, line breaks and control characters cannot be faked by a value.
[[nodiscard]] std::string display_command_line(const std::vector<std::string>& argv);

}  // namespace fiskai::toolkit
