#include "fiskai/llm/openai_codec.hpp"

#include "json_util.hpp"

#include <fiskai/gocompat/json.hpp>
#include <fiskai/gocompat/quote.hpp>

#include <fmt/format.h>

#include <algorithm>

namespace fiskai::llm::openai {

namespace json = boost::json;
using gocompat::append_json_string;

namespace {

void append_joined(std::string& joined, std::string_view text) {
    if (!joined.empty()) joined += "\n\n";
    joined += text;
}

void append_assistant(std::string& out, const message& m) {
    std::string text;
    bool has_text = false;
    std::vector<const tool_use_block*> calls;
    for (const auto& block : m.content) {
        if (const auto* t = std::get_if<text_block>(&block)) {
            append_joined(text, t->text);
            has_text = true;
        } else if (const auto* u = std::get_if<tool_use_block>(&block)) {
            calls.push_back(u);
        }
        // Thinking and provider blocks are the other provider's; they are not sent back.
    }
    out += R"({"role":"assistant","content":)";
    if (has_text) {
        append_json_string(out, text);
    } else {
        out += "null";
    }
    if (!calls.empty()) {
        out += R"(,"tool_calls":[)";
        for (std::size_t i = 0; i < calls.size(); ++i) {
            if (i > 0) out += ',';
            out += R"({"id":)";
            append_json_string(out, calls[i]->id);
            out += R"(,"type":"function","function":{"name":)";
            append_json_string(out, calls[i]->name);
            out += R"(,"arguments":)";
            append_json_string(out, calls[i]->input.empty() ? std::string_view("{}") : calls[i]->input);
            out += "}}";
        }
        out += ']';
    }
    out += '}';
}

// A neutral user turn: each tool result its own `tool` message (they must follow the
// assistant's calls directly), then the turn's text as one `user` message.
void append_user(std::string& out, const message& m, bool& first) {
    std::string text;
    bool has_text = false;
    for (const auto& block : m.content) {
        if (const auto* r = std::get_if<tool_result_block>(&block)) {
            if (!first) out += ',';
            first = false;
            out += R"({"role":"tool","tool_call_id":)";
            append_json_string(out, r->tool_use_id);
            out += R"(,"content":)";
            append_json_string(out, r->is_error ? "ERROR: " + r->content : r->content);
            out += '}';
        } else if (const auto* t = std::get_if<text_block>(&block)) {
            append_joined(text, t->text);
            has_text = true;
        }
    }
    if (has_text) {
        if (!first) out += ',';
        first = false;
        out += R"({"role":"user","content":)";
        append_json_string(out, text);
        out += '}';
    }
}

}  // namespace

std::int64_t output_cap(const request& req) { return req.max_output_tokens > 0 ? req.max_output_tokens : 8192; }

namespace {
// The request's tools as functions, joined: made once per tool set (tool_set::encoded).
std::string encode_tools(const std::vector<tool_def>& tools) {
    std::string joined;
    for (std::size_t i = 0; i < tools.size(); ++i) {
        if (i > 0) joined += ',';
        joined += R"({"type":"function","function":{"name":)";
        append_json_string(joined, tools[i].name);
        joined += R"(,"description":)";
        append_json_string(joined, tools[i].description);
        joined += R"(,"parameters":)";
        gocompat::append_json(joined, tools[i].input_schema, gocompat::key_order::sorted);
        joined += "}}";
    }
    return joined;
}
}  // namespace

std::string encode_request(const request& req) {
    std::string out;
    out.reserve(4096);
    out += R"({"model":)";
    append_json_string(out, req.model);
    out += R"(,"messages":[)";
    bool first = true;
    if (!req.system.empty()) {
        std::string joined;
        for (const auto& s : req.system) append_joined(joined, s);
        out += R"({"role":"system","content":)";
        append_json_string(out, joined);
        out += '}';
        first = false;
    }
    for (const auto& m : req.messages) {
        if (m.who == role::assistant) {
            if (!first) out += ',';
            first = false;
            append_assistant(out, m);
        } else {
            append_user(out, m, first);
        }
    }
    out += ']';
    if (!req.tools.empty()) {
        out += R"(,"tools":[)";
        out += req.tools.encoded(&encode_tools);
        out += ']';
    }
    out += R"(,"max_tokens":)";
    out += std::to_string(output_cap(req));
    out += R"(,"stream":false})";
    return out;
}

std::string map_finish_reason(std::string_view finish_reason) {
    if (finish_reason == "stop") return "end_turn";
    if (finish_reason == "length") return "max_tokens";
    if (finish_reason == "tool_calls" || finish_reason == "function_call") return "tool_use";
    if (finish_reason == "content_filter") return "refusal";
    return std::string(finish_reason);
}

namespace {

// A tool call's `arguments`: a string holding a JSON object (OpenAI, llama.cpp, vLLM), or
// the object itself (some servers). Anything else becomes `{}` plus the reason, which the
// loop sends back to the model as the call's error result.
void decode_arguments(tool_use_block& use, const json::value* arguments) {
    use.input = "{}";
    if (arguments == nullptr || arguments->is_null()) return;
    if (arguments->is_object()) {
        use.input = gocompat::to_json(*arguments);
        return;
    }
    if (!arguments->is_string()) {
        use.input_error = fmt::format("the arguments of tool call {} are {}, not a JSON object",
                                      gocompat::quote(use.id), gocompat::json_kind_name(*arguments));
        return;
    }
    std::string_view text = arguments->as_string();
    if (text.find_first_not_of(" \t\r\n") == std::string_view::npos) return;
    std::string why;
    auto parsed = detail::parse(text, why);
    if (!parsed) {
        use.input_error = fmt::format("the arguments of tool call {} are not JSON ({}): {}", gocompat::quote(use.id),
                                      why, gocompat::quote_bounded(text, 200));
    } else if (!parsed->is_object()) {
        use.input_error = fmt::format("the arguments of tool call {} are {}, not a JSON object",
                                      gocompat::quote(use.id), gocompat::json_kind_name(*parsed));
    } else {
        use.input = gocompat::to_json(*parsed);
    }
}

}  // namespace

boost::system::result<response, std::string> decode_response(std::string_view body) {
    std::string why;
    auto parsed = detail::parse(body, why);
    if (!parsed) {
        return fmt::format("openai: response body is not JSON ({}): {}", why, gocompat::quote_bounded(body, 200));
    }
    if (!parsed->is_object()) {
        return fmt::format("openai: response body is {}, not a JSON object", gocompat::json_kind_name(*parsed));
    }
    const auto& o = parsed->as_object();
    const auto* choices = o.if_contains("choices");
    if (choices == nullptr || !choices->is_array() || choices->as_array().empty() ||
        !choices->as_array()[0].is_object()) {
        return std::string("openai: response has no choices[0]");
    }
    const auto& choice = choices->as_array()[0].as_object();
    const auto* msg = choice.if_contains("message");
    if (msg == nullptr || !msg->is_object()) return std::string("openai: response choices[0] has no message object");
    const auto& m = msg->as_object();

    response out;
    if (auto reasoning = detail::string_field(m, "reasoning_content"); reasoning && !reasoning->empty()) {
        out.content.emplace_back(thinking_block{std::move(*reasoning), ""});
    }
    if (auto text = detail::string_field(m, "content"); text && !text->empty()) {
        out.content.emplace_back(text_block{std::move(*text)});
    }
    bool any_call = false;
    if (const auto* calls = m.if_contains("tool_calls"); calls != nullptr && calls->is_array()) {
        std::size_t n = 0;
        for (const auto& call : calls->as_array()) {
            const std::size_t index = n++;
            if (!call.is_object()) {
                return fmt::format("openai: tool call {} is {}, not an object", index, gocompat::json_kind_name(call));
            }
            const auto& co = call.as_object();
            tool_use_block use;
            use.id = detail::string_field(co, "id").value_or("");
            // Some servers send no id; the loop needs one to pair the result with the call.
            if (use.id.empty()) use.id = fmt::format("call_{}", index);
            const json::object* function = nullptr;
            if (auto* f = co.if_contains("function"); f != nullptr && f->is_object()) function = &f->as_object();
            if (function == nullptr) return fmt::format("openai: tool call {} has no function object", index);
            use.name = detail::string_field(*function, "name").value_or("");
            decode_arguments(use, function->if_contains("arguments"));
            out.content.emplace_back(std::move(use));
            any_call = true;
        }
    }
    if (auto id = detail::repeated_tool_use_id(out.content)) {
        return fmt::format("openai: response has more than one tool call with id {}", gocompat::quote(*id));
    }
    // Servers disagree on finish_reason with tool calls (gpt-4o says `stop`): the calls decide.
    out.stop_reason = any_call ? std::string("tool_use")
                               : map_finish_reason(detail::string_field(choice, "finish_reason").value_or(""));
    if (const auto* u = o.if_contains("usage"); u != nullptr && u->is_object()) {
        const auto& uo = u->as_object();
        std::int64_t cached = 0;
        if (auto* d = uo.if_contains("prompt_tokens_details"); d != nullptr && d->is_object()) {
            cached = detail::token_count(d->as_object(), "cached_tokens");
        }
        // Both in [0, max_token_count]: the difference cannot overflow. A server that says
        // more were cached than prompted gets no uncached input rather than a negative one.
        out.used.in = std::max<std::int64_t>(detail::token_count(uo, "prompt_tokens") - cached, 0);
        out.used.cache_read = cached;
        out.used.out = detail::token_count(uo, "completion_tokens");
    }
    return out;
}

std::string status_error_text(int status, std::string_view body) {
    std::string message;
    std::string why;
    auto parsed = detail::parse(body, why);
    if (parsed && parsed->is_object()) {
        if (auto* e = parsed->as_object().if_contains("error")) {
            if (e->is_object()) {
                message = detail::bounded_text(detail::string_field(e->as_object(), "message").value_or(""));
            } else if (e->is_string()) {
                message = detail::bounded_text(e->as_string());  // Ollama: {"error":"..."}
            }
        }
    }
    if (message.empty()) message = body.empty() ? std::string("(empty body)") : gocompat::quote_bounded(body, 200);
    return fmt::format("openai: HTTP {}: {}", status, message);
}

}  // namespace fiskai::llm::openai
