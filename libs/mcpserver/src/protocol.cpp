#include <fiskai/mcpserver/protocol.hpp>
#include <fiskai/gocompat/quote.hpp>

#include <boost/json/array.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>

namespace fiskai::mcpserver {
namespace {

namespace json = boost::json;

std::string lower(std::string_view s) {
    std::string out(s);
    std::transform(out.begin(), out.end(), out.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return out;
}

std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
    return s;
}

// The media types of an Accept header, lower-cased, parameters dropped.
std::vector<std::string> media_types(std::string_view header) {
    std::vector<std::string> out;
    while (!header.empty()) {
        const auto comma = header.find(',');
        auto item = header.substr(0, comma);
        header = comma == std::string_view::npos ? std::string_view{} : header.substr(comma + 1);
        if (const auto semi = item.find(';'); semi != std::string_view::npos) item = item.substr(0, semi);
        item = trim(item);
        if (!item.empty()) out.push_back(lower(item));
    }
    return out;
}

bool accepts(const std::vector<std::string>& types, std::string_view wanted) {
    const auto slash = wanted.find('/');
    const std::string family = std::string(wanted.substr(0, slash)) + "/*";
    return std::any_of(types.begin(), types.end(),
                       [&](const std::string& t) { return t == wanted || t == family || t == "*/*"; });
}

// Splits "host:port", "[v6]:port", "host" into the host part.
std::string_view host_part(std::string_view hostport) {
    if (hostport.starts_with('[')) {
        const auto close = hostport.find(']');
        if (close == std::string_view::npos) return {};
        const auto rest = hostport.substr(close + 1);
        if (!rest.empty() && (rest.front() != ':' || rest.size() == 1)) return {};
        return hostport.substr(0, close + 1);
    }
    const auto colon = hostport.find(':');
    if (colon == std::string_view::npos) return hostport;
    const auto port = hostport.substr(colon + 1);
    if (port.empty() || !std::all_of(port.begin(), port.end(), [](char c) { return c >= '0' && c <= '9'; })) return {};
    return hostport.substr(0, colon);
}

bool loopback_name(std::string_view host) {
    const auto h = lower(host);
    return h == "localhost" || h == "127.0.0.1" || h == "[::1]";
}

json::value id_of(const json::object& o) {
    if (auto it = o.find("id"); it != o.end()) return it->value();
    return nullptr;
}

bool valid_id(const json::value& id) { return id.is_string() || id.is_int64() || id.is_uint64(); }

}  // namespace

bool is_supported_protocol_version(std::string_view v) noexcept {
    return std::find(supported_protocol_versions.begin(), supported_protocol_versions.end(), v) !=
           supported_protocol_versions.end();
}

std::string negotiate_protocol_version(std::string_view requested) {
    return std::string(is_supported_protocol_version(requested) ? requested : latest_protocol_version);
}

rpc_message parse_message(std::string_view body) {
    boost::system::error_code ec;
    json::parse_options opts;
    opts.max_depth = 64;  // a hostile body must not exhaust the stack or the allocator
    json::value v = json::parse(body, ec, {}, opts);
    if (ec) return rpc_invalid{nullptr, rpc_error::parse_error, "Parse error: " + ec.message()};
    if (v.is_array()) {
        return rpc_invalid{nullptr, rpc_error::invalid_request,
                           "Invalid Request: batches are not supported (removed in MCP 2025-06-18); send one "
                           "JSON-RPC message per POST"};
    }
    if (!v.is_object())
        return rpc_invalid{nullptr, rpc_error::invalid_request, "Invalid Request: expected a JSON object"};
    auto& o = v.get_object();
    const json::value id = id_of(o);
    const bool has_id = o.contains("id");
    const auto* version = o.if_contains("jsonrpc");
    if (!version || !version->is_string() || version->get_string() != "2.0") {
        return rpc_invalid{valid_id(id) ? id : json::value(nullptr), rpc_error::invalid_request,
                           "Invalid Request: jsonrpc must be \"2.0\""};
    }
    if (has_id && !valid_id(id)) {
        return rpc_invalid{nullptr, rpc_error::invalid_request, "Invalid Request: id must be a string or an integer"};
    }
    if (const auto* method = o.if_contains("method")) {
        if (!method->is_string())
            return rpc_invalid{id, rpc_error::invalid_request, "Invalid Request: method must be a string"};
        json::object params;
        if (const auto* p = o.if_contains("params"); p && !p->is_null()) {
            if (!p->is_object())
                return rpc_invalid{id, rpc_error::invalid_params, "Invalid params: params must be an object"};
            params = p->get_object();
        }
        if (has_id) return rpc_request{id, std::string(method->get_string()), std::move(params)};
        return rpc_notification{std::string(method->get_string()), std::move(params)};
    }
    if (has_id && (o.contains("result") || o.contains("error"))) {
        rpc_response r{id, std::nullopt, std::nullopt};
        if (const auto* e = o.if_contains("error")) {
            if (!e->is_object())
                return rpc_invalid{id, rpc_error::invalid_request, "Invalid Request: error must be an object"};
            r.error = e->get_object();
        } else {
            r.result = o.at("result");
        }
        return r;
    }
    return rpc_invalid{valid_id(id) ? id : json::value(nullptr), rpc_error::invalid_request,
                       "Invalid Request: not a request, notification or response"};
}

json::object make_result(const json::value& id, json::value result) {
    return json::object{{"jsonrpc", "2.0"}, {"id", id}, {"result", std::move(result)}};
}

json::object make_error(const json::value& id, int code, std::string message, std::optional<json::value> data) {
    json::object err{{"code", code}, {"message", std::move(message)}};
    if (data) err["data"] = std::move(*data);
    return json::object{{"jsonrpc", "2.0"}, {"id", id}, {"error", std::move(err)}};
}

json::object make_notification(std::string method, json::object params) {
    json::object o{{"jsonrpc", "2.0"}, {"method", std::move(method)}};
    if (!params.empty()) o["params"] = std::move(params);
    return o;
}

json::object make_request(const json::value& id, std::string method, json::object params) {
    return json::object{{"jsonrpc", "2.0"}, {"id", id}, {"method", std::move(method)}, {"params", std::move(params)}};
}

bool origin_allowed(std::string_view origin, const std::vector<std::string>& extra_allowed) {
    if (std::find(extra_allowed.begin(), extra_allowed.end(), origin) != extra_allowed.end()) return true;
    for (std::string_view scheme : {"http://", "https://"}) {
        if (lower(origin.substr(0, scheme.size())) == scheme) {
            const auto rest = origin.substr(scheme.size());
            if (rest.find('/') != std::string_view::npos) return false;  // an Origin has no path
            return loopback_name(host_part(rest));
        }
    }
    return false;
}

bool host_is_loopback(std::string_view host) { return loopback_name(host_part(host)); }

bool accepts_json_and_sse(std::string_view accept) {
    const auto types = media_types(accept);
    return accepts(types, "application/json") && accepts(types, "text/event-stream");
}

bool accepts_sse(std::string_view accept) { return accepts(media_types(accept), "text/event-stream"); }

bool is_json_content_type(std::string_view content_type) {
    auto mt = media_types(content_type);
    return mt.size() == 1 && mt[0] == "application/json";
}

json::object tool_annotations(const toolkit::tool& t) {
    json::object a{{"title", t.title()}};
    const auto& tags = t.tags();
    if (std::find(tags.begin(), tags.end(), "impact:ro") != tags.end()) {
        a["readOnlyHint"] = true;
    } else if (std::find(tags.begin(), tags.end(), "impact:rw") != tags.end()) {
        a["readOnlyHint"] = false;
    }
    return a;
}

json::object tool_descriptor(const toolkit::tool& t) {
    json::object d{{"name", t.name()}, {"description", t.model_description()}};
    json::object schema = t.input_schema();
    if (schema.empty()) schema["type"] = "object";  // clients reject a schema without a type
    d["inputSchema"] = std::move(schema);
    d["annotations"] = tool_annotations(t);
    return d;
}

json::object call_result(const toolkit::outcome& o) {
    switch (o.type()) {
        case toolkit::outcome::kind::command:
            return json::object{{"content", json::array{json::object{{"type", "text"}, {"text", o.render()}}}},
                                {"structuredContent", toolkit::to_json_object(*o.command())}};
        case toolkit::outcome::kind::json:
            return json::object{{"content", json::array{json::object{{"type", "text"}, {"text", o.render()}}}}};
        case toolkit::outcome::kind::error: return error_result(o.error_message());
        case toolkit::outcome::kind::content: {
            json::object r{{"content", *o.content()}};
            if (o.structured()) r["structuredContent"] = *o.structured();
            if (o.is_error()) r["isError"] = true;
            return r;
        }
    }
    return error_result(o.error_message());
}

json::object error_result(std::string_view text) {
    return json::object{{"content", json::array{json::object{{"type", "text"}, {"text", text}}}}, {"isError", true}};
}

bool client_can_elicit_form(const json::object& caps) {
    const auto* e = caps.if_contains("elicitation");
    if (!e || !e->is_object()) return false;
    const auto& o = e->get_object();
    // An empty object means form mode only; otherwise form must be declared.
    return o.empty() || o.contains("form");
}

std::optional<event_id> parse_event_id(std::string_view text) {
    const auto dash = text.rfind('-');
    if (dash == std::string_view::npos || dash == 0) return std::nullopt;
    const auto seq_text = text.substr(dash + 1);
    event_id id{std::string(text.substr(0, dash))};
    const auto [p, ec] = std::from_chars(seq_text.data(), seq_text.data() + seq_text.size(), id.seq);
    if (seq_text.empty() || ec != std::errc{} || p != seq_text.data() + seq_text.size()) return std::nullopt;
    return id;
}

bool client_declares_elicitation(const json::object& caps) {
    const auto* e = caps.if_contains("elicitation");
    return e && e->is_object();
}

std::optional<std::string> check_initialize_params(const json::object& params) {
    const auto* version = params.if_contains("protocolVersion");
    if (!version) {
        return fmt::format("Invalid params: initialize needs protocolVersion, a string such as \"{}\"",
                           latest_protocol_version);
    }
    if (!version->is_string()) {
        return fmt::format("Invalid params: protocolVersion must be a string such as \"{}\", not {}",
                           latest_protocol_version, json::serialize(*version));
    }
    const auto* caps = params.if_contains("capabilities");
    if (!caps || !caps->is_object()) {
        return fmt::format("Invalid params: capabilities must be an object (send {{}} for none), not {}",
                           caps ? json::serialize(*caps) : std::string("missing"));
    }
    const auto* info = params.if_contains("clientInfo");
    if (!info || !info->is_object()) {
        return fmt::format("Invalid params: clientInfo must be an object with a string name and version, not {}",
                           info ? json::serialize(*info) : std::string("missing"));
    }
    const auto* name = info->get_object().if_contains("name");
    if (!name || !name->is_string()) {
        return "Invalid params: clientInfo.name must be a string naming the client";
    }
    if (const auto* v = info->get_object().if_contains("version"); v && !v->is_string()) {
        return fmt::format("Invalid params: clientInfo.version must be a string, not {}", json::serialize(*v));
    }
    return std::nullopt;
}

bool allowed_before_initialized(std::string_view method) noexcept { return method == "initialize" || method == "ping"; }

json::value progress_number(double value) {
    // Integral and exactly representable as int64: send it as an integer.
    if (std::isfinite(value) && std::trunc(value) == value && value >= -9.0e15 && value <= 9.0e15) {
        return static_cast<std::int64_t>(value);
    }
    return value;
}

json::object progress_notification(const json::value& token, double progress, std::optional<double> total,
                                   std::string_view message) {
    json::object p{{"progressToken", token}, {"progress", progress_number(progress)}};
    if (total) p["total"] = progress_number(*total);
    if (!message.empty()) p["message"] = message;
    return make_notification("notifications/progress", std::move(p));
}

json::object approval_elicitation(std::string_view server_name, std::string_view command_line,
                                  std::string_view trigger_tag) {
    json::object approve{{"type", "boolean"},
                         {"title", "Approve this command"},
                         {"description", "Set to true to run the command now, or false to refuse it."}};
    json::object schema{{"properties", json::object{{"approve", std::move(approve)}}},
                        {"required", json::array{"approve"}},
                        {"type", "object"}};
    return json::object{
        {"mode", "form"},
        {"message", fmt::format("{} wants to run a command that requires your approval.\n\nCommand: {}\nGated by: "
                                "{}\n\nApprove to run it now, or refuse to skip it.",
                                server_name, command_line, trigger_tag)},
        {"requestedSchema", std::move(schema)}};
}

std::optional<std::string> interpret_approval(const json::value& result, std::string_view command_line) {
    const auto quoted = gocompat::quote(command_line);
    if (!result.is_object()) return approval_failed_text(command_line, "the client's answer is not an object");
    const auto& r = result.get_object();
    const auto* action = r.if_contains("action");
    const std::string_view a = action && action->is_string() ? std::string_view(action->get_string()) : "";
    if (a == "accept") {
        const auto* content = r.if_contains("content");
        const auto* approve = content && content->is_object() ? content->get_object().if_contains("approve") : nullptr;
        if (!approve || !approve->is_bool()) {
            return approval_failed_text(command_line,
                                        "elicitation result content does not match requested schema: approve must "
                                        "be a boolean");
        }
        if (approve->get_bool()) return std::nullopt;
        return fmt::format(
            "Not approved: the user reviewed {} and chose not to run it. This was their decision, not "
            "an error; do not retry.",
            quoted);
    }
    if (a == "decline") {
        return fmt::format(
            "Not approved: the user declined to run {}. This was their decision, not an error; do not "
            "retry, ask how they want to proceed.",
            quoted);
    }
    return fmt::format(
        "Approval not completed: the user dismissed the approval prompt for {} without deciding. The "
        "command did not run; you may ask again if it is still needed.",
        quoted);
}

std::string approval_failed_text(std::string_view command_line, std::string_view error) {
    return fmt::format("Not approved: requesting approval to run {} failed: {}. The command did not run.",
                       gocompat::quote(command_line), error);
}

std::string cannot_elicit_text(std::string_view command_line) {
    return fmt::format(
        "Not approved: running {} requires approval, but this client cannot be asked (it does not "
        "support elicitation). The command did not run.",
        gocompat::quote(command_line));
}

std::optional<log_level> parse_log_level(std::string_view s) noexcept {
    constexpr std::array<std::string_view, 8> names = {"debug", "info",     "notice", "warning",
                                                       "error", "critical", "alert",  "emergency"};
    for (std::size_t i = 0; i < names.size(); ++i) {
        if (names[i] == s) return static_cast<log_level>(i);
    }
    return std::nullopt;
}

std::string_view to_string(log_level l) noexcept {
    constexpr std::array<std::string_view, 8> names = {"debug", "info",     "notice", "warning",
                                                       "error", "critical", "alert",  "emergency"};
    return names[static_cast<std::size_t>(l)];
}

std::string encode_cursor(std::size_t offset) { return fmt::format("offset:{}", offset); }

std::optional<std::size_t> decode_cursor(std::string_view cursor) {
    constexpr std::string_view prefix = "offset:";
    if (!cursor.starts_with(prefix)) return std::nullopt;
    cursor.remove_prefix(prefix.size());
    std::size_t value = 0;
    auto [end, ec] = std::from_chars(cursor.data(), cursor.data() + cursor.size(), value);
    if (ec != std::errc{} || end != cursor.data() + cursor.size() || cursor.empty()) return std::nullopt;
    return value;
}

std::string endpoint_url(std::string_view host, unsigned short port, std::string_view path) {
    std::string h(host);
    if (h.empty() || h == "0.0.0.0" || h == "::") h = "localhost";
    if (h.find(':') != std::string::npos && !h.starts_with('[')) h = "[" + h + "]";
    return fmt::format("http://{}:{}{}", h, port, path);
}

std::string claude_add_hint(std::string_view name, std::string_view host, unsigned short port, std::string_view path) {
    return fmt::format("claude mcp add --transport http {} {}", name.empty() ? "fisk-ai" : name,
                       endpoint_url(host, port, path));
}

}  // namespace fiskai::mcpserver
