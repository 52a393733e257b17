#pragma once
// MCP protocol logic that needs no I/O: JSON-RPC framing, version negotiation, the HTTP
// admission checks (Origin, Host, Accept, protocol version header), tool descriptors and
// annotations, result building, and the approval elicitation. Everything here is a pure
// function of its inputs and is tested directly.

#include <fiskai/toolkit/outcome.hpp>
#include <fiskai/toolkit/tool.hpp>

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace fiskai::mcpserver {

// The revision we speak, and the older ones we also accept.
inline constexpr std::string_view latest_protocol_version = "2025-11-25";
inline constexpr std::array<std::string_view, 3> supported_protocol_versions = {"2025-11-25", "2025-06-18",
                                                                                "2025-03-26"};
// What a request without the MCP-Protocol-Version header is assumed to speak.
inline constexpr std::string_view default_header_protocol_version = "2025-03-26";

[[nodiscard]] bool is_supported_protocol_version(std::string_view v) noexcept;
// The version an initialize answer carries: the client's when supported, else the latest.
[[nodiscard]] std::string negotiate_protocol_version(std::string_view requested);

// JSON-RPC error codes.
namespace rpc_error {
inline constexpr int parse_error = -32700;
inline constexpr int invalid_request = -32600;
inline constexpr int method_not_found = -32601;
inline constexpr int invalid_params = -32602;
inline constexpr int internal_error = -32603;
}  // namespace rpc_error

// One JSON-RPC message as received. An id is a string or an integer, kept as JSON so it
// is echoed with its type unchanged.
struct rpc_request {
    boost::json::value id;
    std::string method;
    boost::json::object params;
};
struct rpc_notification {
    std::string method;
    boost::json::object params;
};
struct rpc_response {
    boost::json::value id;
    std::optional<boost::json::value> result;  // absent when error is set
    std::optional<boost::json::object> error;
};
// A message that could not be understood, with the error to send back.
struct rpc_invalid {
    boost::json::value id;  // null when the id could not be read
    int code = rpc_error::invalid_request;
    std::string message;
};
using rpc_message = std::variant<rpc_request, rpc_notification, rpc_response, rpc_invalid>;

// Parses one HTTP body. Batches (JSON arrays) are refused: they were removed from the
// protocol in 2025-06-18 and no supported client sends them.
[[nodiscard]] rpc_message parse_message(std::string_view body);

[[nodiscard]] boost::json::object make_result(const boost::json::value& id, boost::json::value result);
[[nodiscard]] boost::json::object make_error(const boost::json::value& id, int code, std::string message,
                                             std::optional<boost::json::value> data = std::nullopt);
[[nodiscard]] boost::json::object make_notification(std::string method, boost::json::object params);
[[nodiscard]] boost::json::object make_request(const boost::json::value& id, std::string method,
                                               boost::json::object params);

// --- HTTP admission ---------------------------------------------------------------

// An `Origin` header is accepted when absent, when it names a loopback host
// (localhost, 127.0.0.1, [::1], any port, http or https), or when it is listed exactly.
[[nodiscard]] bool origin_allowed(std::string_view origin, const std::vector<std::string>& extra_allowed);
// A `Host` header names a loopback host (with an optional port).
[[nodiscard]] bool host_is_loopback(std::string_view host);
// The Accept header of a POST lists both application/json and text/event-stream
// (wildcards count).
[[nodiscard]] bool accepts_json_and_sse(std::string_view accept);
// The Accept header of a GET lists text/event-stream (wildcards count).
[[nodiscard]] bool accepts_sse(std::string_view accept);
// The Content-Type is application/json (parameters such as charset ignored).
[[nodiscard]] bool is_json_content_type(std::string_view content_type);

// An SSE event id `<stream>-<seq>` as a Last-Event-ID header carries it; nullopt when it
// is not one of ours.
struct event_id {
    std::string stream;
    std::uint64_t seq = 0;
};
[[nodiscard]] std::optional<event_id> parse_event_id(std::string_view text);

// --- tools -------------------------------------------------------------------------

// The MCP annotations a tool's tags justify. Always a `title`; `impact:ro` gives
// readOnlyHint true; `impact:rw` gives readOnlyHint false. The confirm gate is never an
// annotation: annotations are hints a client may ignore, not a control channel.
[[nodiscard]] boost::json::object tool_annotations(const toolkit::tool& t);
// The tools/list entry: name, description, inputSchema, annotations.
[[nodiscard]] boost::json::object tool_descriptor(const toolkit::tool& t);

// CallToolResult for an outcome: a command's envelope as text and as structuredContent;
// an in-process tool's JSON as text verbatim; an error as text with isError.
[[nodiscard]] boost::json::object call_result(const toolkit::outcome& o);
[[nodiscard]] boost::json::object error_result(std::string_view text);

// --- approval by elicitation ---------------------------------------------------------

// Whether the client's initialize capabilities allow a form elicitation: an
// `elicitation` object that is empty (form implied) or declares `form`.
[[nodiscard]] bool client_can_elicit_form(const boost::json::object& client_capabilities);
// Whether the client declared any elicitation at all (form, URL or both). A client that
// declared only URL elicitation cannot approve a command: a gated call is then refused,
// never run ungated (fail closed; the Go original denies it too).
[[nodiscard]] bool client_declares_elicitation(const boost::json::object& client_capabilities);
// The reason an approval cannot be asked of a client that declared elicitation without form.
inline constexpr std::string_view no_form_elicitation_text = "client does not support \"form\" elicitation";

// --- lifecycle -----------------------------------------------------------------------

// Checks initialize params against the InitializeRequest schema: protocolVersion a
// string, capabilities an object, clientInfo an object with a string name (and a string
// version when present). nullopt when they are usable, else the -32602 message.
[[nodiscard]] std::optional<std::string> check_initialize_params(const boost::json::object& params);

// Methods a session may call before the client has sent notifications/initialized.
[[nodiscard]] bool allowed_before_initialized(std::string_view method) noexcept;

// --- progress ------------------------------------------------------------------------

// A progress number as JSON: an integer when the value is integral (Boost.JSON would
// write 0.0 as 0E0, which some clients show verbatim), a double otherwise.
[[nodiscard]] boost::json::value progress_number(double value);
// notifications/progress with the token echoed and `total`/`message` only when given.
[[nodiscard]] boost::json::object progress_notification(const boost::json::value& token, double progress,
                                                        std::optional<double> total, std::string_view message);

// The elicitation/create params that ask a human to approve one command.
[[nodiscard]] boost::json::object approval_elicitation(std::string_view server_name, std::string_view command_line,
                                                       std::string_view trigger_tag);

// What an elicitation answer means for the gated call: nullopt to run it, or the denial
// text. Only action "accept" with content.approve == true runs the command.
[[nodiscard]] std::optional<std::string> interpret_approval(const boost::json::value& elicit_result,
                                                            std::string_view command_line);
[[nodiscard]] std::string approval_failed_text(std::string_view command_line, std::string_view error);
[[nodiscard]] std::string cannot_elicit_text(std::string_view command_line);

// --- elicitation forms ----------------------------------------------------------------

// Builds the requestedSchema of a form elicitation: a flat object of primitive fields, in
// the shapes of MCP 2025-11-25 (including the titled and multi-select enums of SEP-1330
// and defaults of SEP-1034).
class elicitation_form {
public:
    struct option {
        std::string value;
        std::string title;
    };

    elicitation_form& text(std::string name, std::string description, bool required = false,
                           std::optional<std::string> default_value = std::nullopt, std::string format = {});
    elicitation_form& integer(std::string name, std::string description, bool required = false,
                              std::optional<std::int64_t> default_value = std::nullopt);
    elicitation_form& number(std::string name, std::string description, bool required = false,
                             std::optional<double> default_value = std::nullopt);
    elicitation_form& boolean(std::string name, std::string description, bool required = false,
                              std::optional<bool> default_value = std::nullopt);
    // Single choice by value: {type: string, enum: [...]}.
    elicitation_form& choice(std::string name, std::string description, std::vector<std::string> values,
                             bool required = false, std::optional<std::string> default_value = std::nullopt);
    // Single choice with titles: {type: string, oneOf: [{const, title}...]}.
    elicitation_form& titled_choice(std::string name, std::string description, std::vector<option> options,
                                    bool required = false);
    // The deprecated titled form some clients still expect: enum plus enumNames.
    elicitation_form& legacy_titled_choice(std::string name, std::string description, std::vector<option> options,
                                           bool required = false);
    // Several choices: {type: array, items: {type: string, enum: [...]}}.
    elicitation_form& multi_choice(std::string name, std::string description, std::vector<std::string> values,
                                   bool required = false);
    // Several choices with titles: {type: array, items: {anyOf: [{const, title}...]}}.
    elicitation_form& titled_multi_choice(std::string name, std::string description, std::vector<option> options,
                                          bool required = false);

    [[nodiscard]] boost::json::object schema() const;

private:
    elicitation_form& add(std::string name, boost::json::object property, bool required);
    boost::json::object properties_;
    std::vector<std::string> required_;
};

// elicitation/create params for a form.
[[nodiscard]] boost::json::object form_elicitation(std::string message, const elicitation_form& form);

// Checks an ElicitResult against the schema it answers: nullopt when the action is
// known and, for accept, the content satisfies the schema; else what is wrong.
[[nodiscard]] std::optional<std::string> check_elicitation_result(const boost::json::object& requested_schema,
                                                                  const boost::json::value& result);

// --- logging -------------------------------------------------------------------------

enum class log_level { debug, info, notice, warning, error, critical, alert, emergency };
[[nodiscard]] std::optional<log_level> parse_log_level(std::string_view s) noexcept;
[[nodiscard]] std::string_view to_string(log_level l) noexcept;

// --- pagination ----------------------------------------------------------------------

// Opaque cursors over a list: encode an offset, and decode one back (nullopt when the
// cursor is not one of ours).
[[nodiscard]] std::string encode_cursor(std::size_t offset);
[[nodiscard]] std::optional<std::size_t> decode_cursor(std::string_view cursor);

// `claude mcp add --transport http <name> <url>`, with IPv6 hosts bracketed and wildcard
// hosts shown as localhost.
[[nodiscard]] std::string claude_add_hint(std::string_view name, std::string_view host, unsigned short port,
                                          std::string_view path);
[[nodiscard]] std::string endpoint_url(std::string_view host, unsigned short port, std::string_view path);

}  // namespace fiskai::mcpserver
