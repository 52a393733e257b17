#include <fiskai/mcpclient/protocol.hpp>

#include <fiskai/gocompat/duration.hpp>
#include <fiskai/gocompat/quote.hpp>

#include <boost/json/serialize.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <array>

namespace fiskai::mcpclient {
namespace json = boost::json;

namespace {

constexpr std::array<std::string_view, 3> accepted_versions = {"2025-11-25", "2025-06-18", "2025-03-26"};

std::string server_prefix(std::string_view server) { return fmt::format("mcp server {}", gocompat::quote(server)); }

// The error member of a response as `<code> <message>`, or nullopt when it has none.
std::optional<std::string> rpc_error_text(const json::object& response) {
    const auto* error = response.if_contains("error");
    if (error == nullptr) return std::nullopt;
    std::string code = "?";
    std::string message;
    if (const auto* e = error->if_object()) {
        if (const auto* c = e->if_contains("code"); c != nullptr && c->is_number()) code = json::serialize(*c);
        if (const auto* m = e->if_contains("message"); m != nullptr && m->is_string()) message = m->as_string();
    } else {
        message = json::serialize(*error);
    }
    return fmt::format("{} {}", code, message);
}

// The result object of a response, or why there is none.
text_result<const json::object*> result_of(std::string_view server, std::string_view method,
                                           const json::value& response) {
    const auto* message = response.if_object();
    if (message == nullptr) return fmt::format("{}: {} answer is not a JSON object", server_prefix(server), method);
    if (auto error = rpc_error_text(*message))
        return fmt::format("{}: {} failed: {}", server_prefix(server), method, *error);
    const auto* result = message->if_contains("result");
    if (result == nullptr || !result->is_object()) {
        return fmt::format("{}: {} answer has no result object", server_prefix(server), method);
    }
    return &result->get_object();
}

std::string_view string_member(const json::object& o, std::string_view key) {
    const auto* v = o.if_contains(key);
    return v != nullptr && v->is_string() ? std::string_view(v->get_string()) : std::string_view();
}

bool valid_tool_name(std::string_view name) {
    if (name.empty() || name.size() > 128) return false;
    return std::all_of(name.begin(), name.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
    });
}

}  // namespace

bool accepted_protocol_version(std::string_view v) noexcept {
    return std::find(accepted_versions.begin(), accepted_versions.end(), v) != accepted_versions.end();
}

json::object initialize_request(std::int64_t id, std::string_view client_version) {
    return mcpserver::make_request(
        id, "initialize",
        json::object{{"protocolVersion", requested_protocol_version},
                     {"capabilities", json::object{}},
                     {"clientInfo", json::object{{"name", "fisk-ai"}, {"version", client_version}}}});
}

json::object initialized_notification() { return mcpserver::make_notification("notifications/initialized", {}); }

text_result<server_identity> read_initialize_response(std::string_view server, const json::value& response) {
    auto result = result_of(server, "initialize", response);
    if (!result) return {boost::system::in_place_error, result.error()};
    const auto& r = **result;
    server_identity id;
    id.protocol_version = string_member(r, "protocolVersion");
    if (!accepted_protocol_version(id.protocol_version))
        return {boost::system::in_place_error, unsupported_version_text(server, id.protocol_version)};
    if (const auto* info = r.if_contains("serverInfo"); info != nullptr && info->is_object()) {
        id.name = string_member(info->get_object(), "name");
        id.version = string_member(info->get_object(), "version");
    }
    return id;
}

json::object tools_list_request(std::int64_t id, const std::optional<std::string>& cursor) {
    json::object params;
    if (cursor) params["cursor"] = *cursor;
    return mcpserver::make_request(id, "tools/list", std::move(params));
}

text_result<tool_page> read_tools_page(std::string_view server, const json::value& response) {
    auto result = result_of(server, "tools/list", response);
    if (!result) return {boost::system::in_place_error, result.error()};
    const auto& r = **result;
    const auto* tools = r.if_contains("tools");
    if (tools == nullptr || !tools->is_array()) {
        return {boost::system::in_place_error,
                fmt::format("{}: tools/list answer has no tools array", server_prefix(server))};
    }
    tool_page page;
    for (const auto& entry : tools->get_array()) {
        const auto* t = entry.if_object();
        if (t == nullptr || string_member(*t, "name").empty()) {
            return {boost::system::in_place_error, fmt::format("{}: tools/list answer has a tool without a name: {}",
                                                               server_prefix(server), json::serialize(entry))};
        }
        listed_tool tool;
        tool.name = string_member(*t, "name");
        tool.description = string_member(*t, "description");
        const auto* schema = t->if_contains("inputSchema");
        tool.input_schema =
            schema != nullptr && schema->is_object() ? schema->get_object() : json::object{{"type", "object"}};
        page.tools.push_back(std::move(tool));
    }
    // An empty cursor ends the list as an absent one does: a server that echoes "" would
    // otherwise be asked for the same first page for ever.
    if (auto cursor = string_member(r, "nextCursor"); !cursor.empty()) page.next_cursor = std::string(cursor);
    return page;
}

std::optional<std::string> local_tool_name(std::string_view alias, std::string_view tool) {
    auto name = fmt::format("{}_{}", alias, tool);
    if (!valid_tool_name(name)) return std::nullopt;
    return name;
}

std::string skipping_tool_text(std::string_view server, std::string_view tool) {
    return fmt::format("{}: skipping tool {}: not a valid tool name", server_prefix(server), gocompat::quote(tool));
}

json::object tools_call_request(std::int64_t id, std::string_view tool, const json::value& arguments) {
    json::object params{{"name", tool}};
    params["arguments"] = arguments.is_object() ? arguments : json::value(json::object{});
    return mcpserver::make_request(id, "tools/call", std::move(params));
}

toolkit::outcome call_outcome(std::string_view server, std::string_view tool, const json::value& response) {
    const auto prefix = fmt::format("{} tool {}", server_prefix(server), gocompat::quote(tool));
    const auto* message = response.if_object();
    if (message == nullptr) return toolkit::outcome::failure(prefix + ": the answer is not a JSON object");
    if (auto error = rpc_error_text(*message)) return toolkit::outcome::failure(fmt::format("{}: {}", prefix, *error));
    const auto* result = message->if_contains("result");
    if (result == nullptr || !result->is_object()) {
        return toolkit::outcome::failure(prefix + ": the answer has no result object");
    }
    const auto& r = result->get_object();
    json::array content;
    if (const auto* c = r.if_contains("content"); c != nullptr && c->is_array()) content = c->get_array();
    std::optional<json::object> structured;
    if (const auto* s = r.if_contains("structuredContent"); s != nullptr && s->is_object())
        structured = s->get_object();
    bool is_error = false;
    if (const auto* e = r.if_contains("isError"); e != nullptr && e->is_bool()) is_error = e->get_bool();
    return toolkit::outcome::from_content(std::move(content), std::move(structured), is_error);
}

json::object cancelled_notification(std::int64_t request_id, std::string_view reason) {
    return mcpserver::make_notification("notifications/cancelled",
                                        json::object{{"requestId", request_id}, {"reason", reason}});
}

incoming classify(std::string_view text) {
    incoming in;
    auto parsed = mcpserver::parse_message(text);
    if (auto* response = std::get_if<mcpserver::rpc_response>(&parsed)) {
        in.what = incoming::kind::response;
        if (response->id.is_int64()) in.id = response->id.get_int64();
        if (response->id.is_uint64() && response->id.get_uint64() <= INT64_MAX) {
            in.id = static_cast<std::int64_t>(response->id.get_uint64());
        }
        json::object message{{"jsonrpc", "2.0"}, {"id", response->id}};
        if (response->result) message["result"] = std::move(*response->result);
        if (response->error) message["error"] = std::move(*response->error);
        in.message = std::move(message);
    } else if (auto* request = std::get_if<mcpserver::rpc_request>(&parsed)) {
        in.what = incoming::kind::request;
        in.method = request->method;
        // We declared no capabilities, so sampling, elicitation and roots are all unknown
        // here; ping would be answerable, but nothing requires it of a client.
        in.reply = mcpserver::make_error(request->id, mcpserver::rpc_error::method_not_found,
                                         fmt::format("Method not found: {}", request->method));
    } else if (auto* note = std::get_if<mcpserver::rpc_notification>(&parsed)) {
        in.what = incoming::kind::notification;
        in.method = note->method;
    } else {
        in.problem = std::get<mcpserver::rpc_invalid>(parsed).message;
    }
    return in;
}

std::string not_running_text(std::string_view server, std::string_view why) {
    return fmt::format("{} is not running: {}", server_prefix(server), why);
}

std::string unsupported_version_text(std::string_view server, std::string_view version) {
    return fmt::format("{}: unsupported protocol version {}", server_prefix(server), gocompat::quote(version));
}

std::string no_answer_text(std::string_view server, std::string_view method, std::chrono::nanoseconds waited) {
    return fmt::format("{}: no answer to {} within {}", server_prefix(server), method,
                       gocompat::format_duration(waited));
}

std::string call_timeout_text(std::string_view server, std::string_view tool, std::chrono::nanoseconds waited) {
    return fmt::format("{} tool {}: no answer within {}", server_prefix(server), gocompat::quote(tool),
                       gocompat::format_duration(waited));
}

std::string describe_call(std::string_view server, std::string_view tool, const json::value& arguments) {
    return fmt::format("{} {} {}", server, tool, json::serialize(arguments));
}

}  // namespace fiskai::mcpclient
