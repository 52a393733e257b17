#pragma once
// Tool derivation: from a fisk application model to the command tools it offers.
// Pure logic, no I/O.

#include <fiskai/toolkit/fisk_model.hpp>
#include <fiskai/toolkit/tool.hpp>

#include <boost/json/object.hpp>

#include <stdexcept>
#include <string>
#include <vector>

namespace fiskai::toolkit {

// A filter selects tools by RE2 regexes searched (unanchored) in the underscore name, or
// by exact tags; the tag "" matches a tool with no tags at all.
struct tool_filter {
    std::vector<std::string> tools;
    std::vector<std::string> tags;

    [[nodiscard]] bool empty() const noexcept { return tools.empty() && tags.empty(); }
};

struct derive_options {
    // Extra tags treated exactly like `ai:confirm` (harness.confirm_tags).
    std::vector<std::string> confirm_tags;
    // Application-level flags to expose (global_flags), names without dashes.
    std::vector<std::string> global_flags;
    tool_filter include;
    tool_filter exclude;
    // A second, narrowing pass for serving surfaces (expose.agent.tools).
    tool_filter serve_include;
    tool_filter serve_exclude;
};

// Everything needed to present and run one leaf command.
struct command_spec {
    std::vector<std::string> path;  // command words: {"stream", "info"}
    std::string name;               // path joined with '_'
    std::string title;              // path joined with ' '
    std::string description;        // for people
    std::string model_description;  // help plus the Tags: line
    std::vector<std::string> tags;
    boost::json::object input_schema;     // restricted_schema with exposed globals merged
    std::vector<fisk_flag> flags;         // the leaf's own flags, declared order
    std::vector<fisk_arg> args;           // the leaf's positionals, declared order
    std::vector<fisk_flag> global_flags;  // exposed globals that apply to this leaf
    confirm_requirement confirm;
};

// A command that did not become a tool, and why (for stderr and `info`).
struct dropped_command {
    std::string command;  // space path
    std::string reason;
};

struct derivation {
    std::vector<command_spec> tools;
    std::vector<dropped_command> dropped;
};

class derive_error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// Walks the tree depth-first in document order, keeps non-hidden leaves, removes
// `ai:deny`, applies the filters in order (include, exclude, serve include, serve
// exclude) and resolves global flags. Throws derive_error for an invalid filter
// pattern, an unresolvable global flag, a leaf without restricted_schema, or two
// commands that map to one tool name.
[[nodiscard]] derivation derive_tools(const fisk_application& app, const derive_options& options);

// Model description rules (help and help_long combined, then "Tags: a, b").
[[nodiscard]] std::string model_description(const std::string& help, const std::string& help_long,
                                            const std::vector<std::string>& tags);

// The application-level flags that global_flags may name: not hidden, not framework.
[[nodiscard]] std::vector<fisk_flag> exposable_global_flags(const fisk_application& app);

}  // namespace fiskai::toolkit
