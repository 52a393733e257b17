#pragma once
// The client side of MCP without I/O: the messages a session sends (initialize, tools/list,
// tools/call, notifications), and what it makes of the answers (version negotiation, tool
// pages, call results as toolkit outcomes, the reply to a server's own request). The
// JSON-RPC shapes come from mcpserver::protocol; only the client's decisions live here.

#include <fiskai/mcpserver/protocol.hpp>
#include <fiskai/toolkit/outcome.hpp>

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <boost/system/result.hpp>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fiskai::mcpclient {

// What we ask for, and the older revisions a server may answer with.
inline constexpr std::string_view requested_protocol_version = mcpserver::latest_protocol_version;
[[nodiscard]] bool accepted_protocol_version(std::string_view v) noexcept;

template <class T>
using text_result = boost::system::result<T, std::string>;

// initialize with no client capabilities (no sampling, elicitation or roots).
[[nodiscard]] boost::json::object initialize_request(std::int64_t id, std::string_view client_version);
[[nodiscard]] boost::json::object initialized_notification();

struct server_identity {
    std::string protocol_version;
    std::string name;     // serverInfo.name, may be empty
    std::string version;  // serverInfo.version, may be empty
};
// The answer to initialize: the negotiated revision, or why the session cannot go on.
[[nodiscard]] text_result<server_identity> read_initialize_response(std::string_view server,
                                                                    const boost::json::value& response);

struct listed_tool {
    std::string name;
    std::string description;
    boost::json::object input_schema;  // `{"type":"object"}` when the server's is not an object
};
struct tool_page {
    std::vector<listed_tool> tools;
    std::optional<std::string> next_cursor;
};
[[nodiscard]] boost::json::object tools_list_request(std::int64_t id, const std::optional<std::string>& cursor);
[[nodiscard]] text_result<tool_page> read_tools_page(std::string_view server, const boost::json::value& response);

// `<alias>_<tool>`, or nullopt when that is not a valid local tool name.
[[nodiscard]] std::optional<std::string> local_tool_name(std::string_view alias, std::string_view tool);
[[nodiscard]] std::string skipping_tool_text(std::string_view server, std::string_view tool);

[[nodiscard]] boost::json::object tools_call_request(std::int64_t id, std::string_view tool,
                                                     const boost::json::value& arguments);
// A tools/call answer as an outcome: content and structuredContent as content (isError an
// error outcome); a JSON-RPC error as a failure naming the server, the tool, code and message.
[[nodiscard]] toolkit::outcome call_outcome(std::string_view server, std::string_view tool,
                                            const boost::json::value& response);

// notifications/cancelled for a request we gave up on.
[[nodiscard]] boost::json::object cancelled_notification(std::int64_t request_id, std::string_view reason);

// What one message from the server asks of us.
struct incoming {
    enum class kind {
        response,      // an answer to our request `id`
        request,       // a server request: send `reply` (always -32601: we offer no capabilities)
        notification,  // logged and ignored (tools/list_changed included: the tool set is fixed)
        invalid,       // not JSON-RPC: logged and dropped
    };
    kind what = kind::invalid;
    std::optional<std::int64_t> id;  // response: our id (nullopt when it is not one of ours)
    boost::json::value message;      // the whole message (response, notification)
    boost::json::object reply;       // request: the error reply
    std::string method;              // request, notification
    std::string problem;             // invalid: why
};
[[nodiscard]] incoming classify(std::string_view text);

// --- texts ---------------------------------------------------------------------------
[[nodiscard]] std::string not_running_text(std::string_view server, std::string_view why);
[[nodiscard]] std::string unsupported_version_text(std::string_view server, std::string_view version);
[[nodiscard]] std::string no_answer_text(std::string_view server, std::string_view method,
                                         std::chrono::nanoseconds waited);
[[nodiscard]] std::string call_timeout_text(std::string_view server, std::string_view tool,
                                            std::chrono::nanoseconds waited);
// The approval display: `<server> <tool> <compact JSON arguments>`.
[[nodiscard]] std::string describe_call(std::string_view server, std::string_view tool,
                                        const boost::json::value& arguments);

}  // namespace fiskai::mcpclient
