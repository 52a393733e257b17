#include "fiskai/llm/anthropic_codec.hpp"

#include "json_util.hpp"

#include <fiskai/gocompat/json.hpp>
#include <fiskai/gocompat/quote.hpp>

#include <fmt/format.h>

#include <algorithm>

namespace fiskai::llm::anthropic {

namespace json = boost::json;
using gocompat::append_json_string;

namespace {

void append_cache_control(std::string& out, bool interactive) {
    out += interactive ? R"({"ttl":"1h","type":"ephemeral"})" : R"({"type":"ephemeral"})";
}

// Go's toolkit.AnnotateOptional on a copy: each property not in `required` gets
// ` (optional)` after its description, or `Optional.` when it has none.
json::value annotate_optional(const json::value& properties, const std::vector<std::string>& required) {
    if (!properties.is_object()) return properties;
    json::object out;
    for (const auto& [name, raw] : properties.as_object()) {
        const bool is_required = std::find(required.begin(), required.end(), name) != required.end();
        if (!raw.is_object() || is_required) {
            out[name] = raw;
            continue;
        }
        json::object clone = raw.as_object();
        std::string description;
        if (auto* d = clone.if_contains("description"); d != nullptr && d->is_string()) description = d->as_string();
        clone["description"] = description.empty() ? std::string("Optional.") : description + " (optional)";
        out[name] = std::move(clone);
    }
    return out;
}

// The SDK's ToolInputSchemaParam: properties, required, type, then every other schema key
// (the SDK appends them in map order; sorted here so the bytes are stable).
void append_schema(std::string& out, const json::object& schema) {
    std::optional<std::vector<std::string>> required;
    if (auto* r = schema.if_contains("required"); r != nullptr && r->is_array()) {
        required.emplace();
        for (const auto& item : r->as_array()) {
            if (item.is_string()) required->emplace_back(item.as_string());
        }
    }
    out += '{';
    bool first = true;
    auto key = [&](std::string_view name) {
        if (!first) out += ',';
        first = false;
        append_json_string(out, name);
        out += ':';
    };
    if (auto* p = schema.if_contains("properties"); p != nullptr && !p->is_null()) {
        key("properties");
        gocompat::append_json(out, annotate_optional(*p, required.value_or(std::vector<std::string>{})),
                              gocompat::key_order::sorted);
    }
    if (required) {
        key("required");
        out += '[';
        for (std::size_t i = 0; i < required->size(); ++i) {
            if (i > 0) out += ',';
            append_json_string(out, (*required)[i]);
        }
        out += ']';
    }
    key("type");
    out += R"("object")";
    std::vector<std::string_view> extras;
    for (const auto& [name, value] : schema) {
        if (name != "type" && name != "properties" && name != "required") extras.push_back(name);
    }
    std::sort(extras.begin(), extras.end());
    for (auto name : extras) {
        key(name);
        gocompat::append_json(out, schema.at(name), gocompat::key_order::sorted);
    }
    out += '}';
}

void append_block(std::string& out, const content_block& block) {
    std::visit(
        [&](const auto& b) {
            using T = std::decay_t<decltype(b)>;
            if constexpr (std::is_same_v<T, text_block>) {
                out += R"({"text":)";
                append_json_string(out, b.text);
                out += R"(,"type":"text"})";
            } else if constexpr (std::is_same_v<T, thinking_block>) {
                out += R"({"signature":)";
                append_json_string(out, b.signature);
                out += R"(,"thinking":)";
                append_json_string(out, b.text);
                out += R"(,"type":"thinking"})";
            } else if constexpr (std::is_same_v<T, tool_use_block>) {
                out += R"({"id":)";
                append_json_string(out, b.id);
                out += R"(,"input":)";
                out += b.input.empty() ? std::string_view("{}") : std::string_view(b.input);
                out += R"(,"name":)";
                append_json_string(out, b.name);
                out += R"(,"type":"tool_use"})";
            } else if constexpr (std::is_same_v<T, tool_result_block>) {
                out += R"({"tool_use_id":)";
                append_json_string(out, b.tool_use_id);
                out += b.is_error ? R"(,"is_error":true)" : R"(,"is_error":false)";
                out += R"(,"content":[{"text":)";
                append_json_string(out, b.content);
                out += R"(,"type":"text"}],"type":"tool_result"})";
            } else {
                // Server-side blocks (tool search calls and results, redacted thinking) go back
                // exactly as the API sent them.
                out += b.raw;
            }
        },
        block);
}

}  // namespace

std::int64_t output_cap(const request& req) {
    if (req.max_output_tokens > 0) return req.max_output_tokens;
    return req.thinking ? 16384 : 8192;
}

std::string encode_tool(const tool_def& tool) {
    std::string out = R"({"input_schema":)";
    append_schema(out, tool.input_schema);
    out += R"(,"name":)";
    append_json_string(out, tool.name);
    out += tool.defer_loading ? R"(,"defer_loading":true)" : R"(,"defer_loading":false)";
    out += R"(,"description":)";
    append_json_string(out, tool.description);
    out += R"(,"type":"custom"})";
    return out;
}

std::string encode_block(const content_block& block) {
    std::string out;
    append_block(out, block);
    return out;
}

namespace {
// The request's tools, joined: made once per tool set (tool_set::encoded).
std::string encode_tools(const std::vector<tool_def>& tools) {
    std::string joined;
    for (std::size_t i = 0; i < tools.size(); ++i) {
        if (i > 0) joined += ',';
        joined += encode_tool(tools[i]);
    }
    return joined;
}
}  // namespace

std::string encode_request(const request& req) {
    std::string out;
    out.reserve(4096);
    out += R"({"max_tokens":)";
    out += std::to_string(output_cap(req));
    out += R"(,"messages":[)";
    for (std::size_t i = 0; i < req.messages.size(); ++i) {
        const auto& m = req.messages[i];
        if (i > 0) out += ',';
        out += '{';
        if (!m.content.empty()) {
            out += R"("content":[)";
            for (std::size_t j = 0; j < m.content.size(); ++j) {
                if (j > 0) out += ',';
                append_block(out, m.content[j]);
            }
            out += "],";
        }
        out += m.who == role::user ? R"("role":"user"})" : R"("role":"assistant"})";
    }
    out += R"(],"model":)";
    append_json_string(out, req.model);
    if (req.prompt_cache) {
        out += R"(,"cache_control":)";
        append_cache_control(out, req.interactive);
    }
    out += R"(,"system":[)";
    for (std::size_t i = 0; i < req.system.size(); ++i) {
        if (i > 0) out += ',';
        out += R"({"text":)";
        append_json_string(out, req.system[i]);
        // The tools+system breakpoint: on the last system block, in the bytes only (the
        // neutral system list, which the fingerprint hashes, is untouched).
        if (req.prompt_cache && i + 1 == req.system.size()) {
            out += R"(,"cache_control":)";
            append_cache_control(out, req.interactive);
        }
        out += R"(,"type":"text"})";
    }
    out += ']';
    if (req.thinking) out += R"(,"thinking":{"display":"summarized","type":"adaptive"})";
    out += R"(,"tools":[)";
    out += req.tools.encoded(&encode_tools);
    // The search tool only when a tool really ended up deferred.
    if (req.tool_search) {
        if (!req.tools.empty()) out += ',';
        out += R"({"type":"tool_search_tool_bm25","name":"tool_search_tool_bm25"})";
    }
    out += "]}";
    return out;
}

namespace {

boost::system::result<content_block, std::string> block_from_json(const json::value& v, std::size_t index) {
    if (!v.is_object()) {
        return fmt::format("anthropic: response content block {} is {}, not an object", index,
                           gocompat::json_kind_name(v));
    }
    const auto& o = v.as_object();
    auto type = detail::string_field(o, "type");
    if (!type || type->empty()) return fmt::format("anthropic: response content block {} has no type", index);
    if (*type == "text") return content_block{text_block{detail::string_field(o, "text").value_or("")}};
    if (*type == "thinking") {
        return content_block{thinking_block{detail::string_field(o, "thinking").value_or(""),
                                            detail::string_field(o, "signature").value_or("")}};
    }
    if (*type == "tool_use") {
        tool_use_block use{detail::string_field(o, "id").value_or(""), detail::string_field(o, "name").value_or(""),
                           "{}", std::nullopt};
        const auto* input = o.if_contains("input");
        if (input != nullptr && input->is_object()) {
            use.input = gocompat::to_json(*input);
        } else {
            use.input_error =
                fmt::format("the arguments of tool call {} are {}, not a JSON object", gocompat::quote(use.id),
                            input == nullptr ? "missing" : gocompat::json_kind_name(*input));
        }
        return content_block{std::move(use)};
    }
    if (*type == "tool_result") {
        const auto* content = o.if_contains("content");
        if (content != nullptr && content->is_array() && content->as_array().size() == 1 &&
            content->as_array()[0].is_object() &&
            detail::string_field(content->as_array()[0].as_object(), "type") == std::optional<std::string>("text")) {
            const auto* is_error = o.if_contains("is_error");
            return content_block{
                tool_result_block{detail::string_field(o, "tool_use_id").value_or(""),
                                  detail::string_field(content->as_array()[0].as_object(), "text").value_or(""),
                                  is_error != nullptr && is_error->is_bool() && is_error->as_bool()}};
        }
    }
    return content_block{provider_block{*type, gocompat::to_json(v)}};
}

}  // namespace

boost::system::result<content_block, std::string> decode_block(std::string_view block_json) {
    std::string why;
    auto v = detail::parse(block_json, why);
    if (!v) return fmt::format("anthropic: content block is not JSON: {}", why);
    return block_from_json(*v, 0);
}

boost::system::result<response, std::string> decode_response(std::string_view body) {
    std::string why;
    auto parsed = detail::parse(body, why);
    if (!parsed) {
        return fmt::format("anthropic: response body is not JSON ({}): {}", why, gocompat::quote_bounded(body, 200));
    }
    if (!parsed->is_object()) {
        return fmt::format("anthropic: response body is {}, not a JSON object", gocompat::json_kind_name(*parsed));
    }
    const auto& o = parsed->as_object();
    response out;
    if (const auto* content = o.if_contains("content"); content != nullptr && !content->is_null()) {
        if (!content->is_array()) {
            return fmt::format("anthropic: response content is {}, not an array", gocompat::json_kind_name(*content));
        }
        std::size_t index = 0;
        for (const auto& block : content->as_array()) {
            auto decoded = block_from_json(block, index++);
            if (!decoded) return decoded.error();
            out.content.push_back(std::move(*decoded));
        }
        if (auto id = detail::repeated_tool_use_id(out.content)) {
            return fmt::format("anthropic: response has more than one tool call with id {}", gocompat::quote(*id));
        }
    }
    out.stop_reason = detail::string_field(o, "stop_reason").value_or("");
    if (const auto* u = o.if_contains("usage"); u != nullptr && u->is_object()) {
        const auto& uo = u->as_object();
        out.used = usage{detail::token_count(uo, "input_tokens"), detail::token_count(uo, "output_tokens"),
                         detail::token_count(uo, "cache_read_input_tokens"),
                         detail::token_count(uo, "cache_creation_input_tokens")};
    }
    return out;
}

std::string status_error_text(int status, std::string_view body, std::optional<std::string_view> request_id) {
    std::string text = fmt::format("anthropic: HTTP {}", status);
    std::string why;
    auto parsed = detail::parse(body, why);
    const json::object* err = nullptr;
    if (parsed && parsed->is_object()) {
        if (auto* e = parsed->as_object().if_contains("error"); e != nullptr && e->is_object()) err = &e->as_object();
    }
    if (err != nullptr) {
        auto type = detail::string_field(*err, "type").value_or("");
        if (!type.empty()) text += " " + detail::bounded_text(type);
        text += ": " + detail::bounded_text(detail::string_field(*err, "message").value_or(""));
    } else if (!body.empty()) {
        text += ": " + gocompat::quote_bounded(body, 200);
    }
    if (request_id && !request_id->empty()) text += fmt::format(" (request {})", *request_id);
    return text;
}

}  // namespace fiskai::llm::anthropic
