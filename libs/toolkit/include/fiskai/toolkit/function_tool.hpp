#pragma once
// Tools backed by a C++ callable: built-ins and library users' own tools.

#include <fiskai/toolkit/tool.hpp>

#include <boost/json/object.hpp>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace fiskai::toolkit {

// The handler gets the validated arguments (always an object) and the call options.
// Returning an outcome lets it choose between verbatim JSON and a failure; a thrown
// exception becomes a failure carrying its message.
using function_handler =
    std::function<boost::asio::awaitable<outcome>(const boost::json::object& arguments, const call_options& options)>;

struct function_tool_spec {
    std::string name;
    std::string title;  // defaults to name
    std::string description;
    std::vector<std::string> tags;
    boost::json::object input_schema;  // defaults to {"type":"object"}
    // Where the tool may be served. Required: a spec that leaves this unset is refused,
    // so a tool cannot end up served nowhere (or everywhere) by forgetting.
    std::optional<exposure> exposed;
    // Whether the tool needs approval. Required for the same reason.
    std::optional<confirm_posture> confirm;
    tool_kind kind = tool_kind::function;
    function_handler handler;
    // What a call would do, for logs and approval prompts (Go's Trace); unset: the name.
    std::function<std::string(const boost::json::value& arguments)> describe;
};

// Throws std::invalid_argument when the spec is incomplete (no name, invalid name, no
// handler, unset exposure or confirm posture, an uncompilable schema).
[[nodiscard]] tool_ptr make_function_tool(function_tool_spec spec);

}  // namespace fiskai::toolkit
