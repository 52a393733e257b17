#include "script.hpp"

#include <fiskai/gocompat/json.hpp>
#include <fiskai/gocompat/quote.hpp>

#include <fmt/format.h>

#include <algorithm>

namespace fiskai::fake_llm {

namespace json = boost::json;
using gocompat::quote;

namespace {

std::optional<std::string> str(const json::object& o, std::string_view key) {
    if (auto* v = o.if_contains(key); v != nullptr && v->is_string()) return std::string(v->as_string());
    return std::nullopt;
}

std::int64_t integer(const json::object& o, std::string_view key) {
    auto* v = o.if_contains(key);
    if (v == nullptr) return 0;
    if (v->is_int64()) return v->as_int64();
    if (v->is_uint64()) return static_cast<std::int64_t>(v->as_uint64());
    return 0;
}

// A body given as an object is sent as its JSON; given as a string, as those bytes (for
// bodies that are not JSON).
std::string body_text(const json::value& v) { return v.is_string() ? std::string(v.as_string()) : json::serialize(v); }

boost::system::result<fault, std::string> parse_fault(const json::value& v, const std::string& where) {
    if (!v.is_object()) return fmt::format("{} must be an object", where);
    const auto& o = v.as_object();
    fault f;
    for (const auto& [key, value] : o) {
        if (key == "status") {
            if (!value.is_int64() || value.as_int64() < 100 || value.as_int64() > 599) {
                return fmt::format("{}.status must be an HTTP status (100-599), got {}", where, json::serialize(value));
            }
            f.status = static_cast<int>(value.as_int64());
        } else if (key == "headers") {
            if (!value.is_object()) return fmt::format("{}.headers must be an object of strings", where);
            for (const auto& [name, header] : value.as_object()) {
                if (!header.is_string()) return fmt::format("{}.headers.{} must be a string", where, std::string(name));
                f.headers.emplace_back(std::string(name), std::string(header.as_string()));
            }
        } else if (key == "body") {
            f.body = body_text(value);
        } else if (key == "delay_ms") {
            if (!value.is_int64() || value.as_int64() < 0) {
                return fmt::format("{}.delay_ms must be a non-negative integer", where);
            }
            f.delay_ms = static_cast<int>(value.as_int64());
        } else if (key == "hang") {
            f.hang = value.is_bool() && value.as_bool();
        } else if (key == "close") {
            f.close = value.is_bool() && value.as_bool();
        } else {
            return fmt::format("{} has an unknown key {} (known: status, headers, body, delay_ms, hang, close)", where,
                               quote(key));
        }
    }
    if (f.status == 0 && f.delay_ms == 0 && !f.hang && !f.close) {
        return fmt::format("{} does nothing: give status, delay_ms, hang or close", where);
    }
    return f;
}

boost::system::result<std::vector<std::string>, std::string> string_list(const json::value& v,
                                                                         const std::string& where) {
    if (!v.is_array()) return fmt::format("{} must be an array of strings", where);
    std::vector<std::string> out;
    for (const auto& item : v.as_array()) {
        if (!item.is_string()) return fmt::format("{} must be an array of strings", where);
        out.emplace_back(item.as_string());
    }
    return out;
}

boost::system::result<step, std::string> parse_step(const json::value& v, const std::string& where) {
    if (!v.is_object()) return fmt::format("{} must be an object", where);
    step s;
    for (const auto& [key, value] : v.as_object()) {
        if (key == "expect") {
            if (!value.is_object()) return fmt::format("{}.expect must be an object", where);
            for (const auto& [ek, ev] : value.as_object()) {
                if (ek == "tools_include") {
                    auto names = string_list(ev, where + ".expect.tools_include");
                    if (!names) return names.error();
                    s.expect.tools_include = std::move(*names);
                } else if (ek == "last_tool_result_contains" && ev.is_string()) {
                    s.expect.last_tool_result_contains = std::string(ev.as_string());
                } else if (ek == "system_contains" && ev.is_string()) {
                    s.expect.system_contains = std::string(ev.as_string());
                } else {
                    return fmt::format(
                        "{}.expect has an unknown or mistyped key {} (known: tools_include, "
                        "last_tool_result_contains, system_contains)",
                        where, quote(ek));
                }
            }
        } else if (key == "faults") {
            if (!value.is_array()) return fmt::format("{}.faults must be an array", where);
            std::size_t i = 0;
            for (const auto& f : value.as_array()) {
                auto parsed = parse_fault(f, fmt::format("{}.faults[{}]", where, i++));
                if (!parsed) return parsed.error();
                s.faults.push_back(std::move(*parsed));
            }
        } else if (key == "reply") {
            if (!value.is_object()) return fmt::format("{}.reply must be an object", where);
            const auto& reply = value.as_object();
            if (auto* content = reply.if_contains("content"); content != nullptr) {
                if (!content->is_array()) return fmt::format("{}.reply.content must be an array", where);
                std::size_t i = 0;
                for (const auto& block : content->as_array()) {
                    const auto type = block.is_object() ? str(block.as_object(), "type") : std::nullopt;
                    static const std::vector<std::string> kinds{"text", "thinking", "tool_use", "provider"};
                    if (!type || std::find(kinds.begin(), kinds.end(), *type) == kinds.end()) {
                        return fmt::format("{}.reply.content[{}] needs a type of text, thinking, tool_use or provider",
                                           where, i);
                    }
                    ++i;
                }
            }
            s.reply = reply;
        } else {
            return fmt::format("{} has an unknown key {} (known: expect, faults, reply)", where, quote(key));
        }
    }
    return s;
}

// Text of a content field that is a string or an array of blocks (their `text` joined).
std::string content_text(const json::value* content) {
    if (content == nullptr) return {};
    if (content->is_string()) return std::string(content->as_string());
    std::string out;
    if (content->is_array()) {
        for (const auto& block : content->as_array()) {
            if (!block.is_object()) continue;
            if (auto text = str(block.as_object(), "text")) out += *text;
        }
    }
    return out;
}

}  // namespace

boost::system::result<script, std::string> parse_script(std::string_view text) {
    boost::system::error_code ec;
    auto v = json::parse(text, ec);
    if (ec) return fmt::format("script is not JSON: {}", ec.message());
    if (!v.is_object()) return std::string("script must be a JSON object with \"conversations\"");
    script out;
    for (const auto& [key, value] : v.as_object()) {
        if (key == "conversations") {
            if (!value.is_array()) return std::string("conversations must be an array");
            std::size_t i = 0;
            for (const auto& c : value.as_array()) {
                const std::string where = fmt::format("conversations[{}]", i++);
                if (!c.is_object()) return where + " must be an object";
                conversation conv;
                const auto& co = c.as_object();
                auto name = str(co, "name");
                if (!name || name->empty()) return where + ".name must be a non-empty string";
                conv.name = *name;
                if (auto* when = co.if_contains("when")) {
                    if (!when->is_object()) return where + ".when must be an object";
                    for (const auto& [wk, wv] : when->as_object()) {
                        if (wk != "prompt_contains" || !wv.is_string()) {
                            return fmt::format("{}.when has an unknown or mistyped key {} (known: prompt_contains)",
                                               where, quote(wk));
                        }
                        conv.prompt_contains = std::string(wv.as_string());
                    }
                }
                auto* steps = co.if_contains("steps");
                if (steps == nullptr || !steps->is_array()) return where + ".steps must be an array";
                std::size_t j = 0;
                for (const auto& s : steps->as_array()) {
                    auto parsed = parse_step(s, fmt::format("{}.steps[{}]", where, j++));
                    if (!parsed) return parsed.error();
                    conv.steps.push_back(std::move(*parsed));
                }
                out.conversations.push_back(std::move(conv));
            }
        } else if (key == "unmatched") {
            if (!value.is_object()) return std::string("unmatched must be an object {status, body}");
            out.unmatched_status = static_cast<int>(integer(value.as_object(), "status"));
            if (out.unmatched_status < 100 || out.unmatched_status > 599) {
                return std::string("unmatched.status must be an HTTP status (100-599)");
            }
            if (auto* body = value.as_object().if_contains("body")) out.unmatched_body = body_text(*body);
        } else {
            return fmt::format("script has an unknown key {} (known: conversations, unmatched)", quote(key));
        }
    }
    return out;
}

boost::system::result<request_view, std::string> analyze(endpoint where, std::string_view body) {
    // request_view is constructible from a string (its first member), so errors are placed explicitly.
    auto fail = [](std::string why) {
        return boost::system::result<request_view, std::string>(boost::system::in_place_error, std::move(why));
    };
    boost::system::error_code ec;
    auto v = json::parse(body, ec);
    if (ec) return fail(fmt::format("request body is not JSON: {}", ec.message()));
    if (!v.is_object()) return fail("request body must be a JSON object");
    const auto& o = v.as_object();
    request_view view;
    view.model = str(o, "model").value_or("");
    const auto* messages = o.if_contains("messages");
    if (messages == nullptr || !messages->is_array()) return fail("request has no messages array");
    bool seen_user = false;
    if (where == endpoint::anthropic) {
        if (auto* system = o.if_contains("system")) view.system = content_text(system);
        if (auto* tools = o.if_contains("tools"); tools != nullptr && tools->is_array()) {
            for (const auto& t : tools->as_array()) {
                if (t.is_object()) view.tools.push_back(str(t.as_object(), "name").value_or(""));
            }
        }
    } else if (auto* tools = o.if_contains("tools"); tools != nullptr && tools->is_array()) {
        for (const auto& t : tools->as_array()) {
            if (!t.is_object()) continue;
            if (auto* f = t.as_object().if_contains("function"); f != nullptr && f->is_object()) {
                view.tools.push_back(str(f->as_object(), "name").value_or(""));
            }
        }
    }
    for (const auto& m : messages->as_array()) {
        if (!m.is_object()) continue;
        const auto& mo = m.as_object();
        const auto role = str(mo, "role").value_or("");
        const auto* content = mo.if_contains("content");
        if (role == "assistant") ++view.assistant_turns;
        if (role == "system") view.system += content_text(content);
        if (role == "tool") view.last_tool_result = content_text(content);
        if (role != "user") continue;
        if (!seen_user) {
            // The first text of the first user message; Anthropic content may be an array
            // mixing tool results, so only text blocks count.
            if (content != nullptr && content->is_string()) {
                view.first_user_text = std::string(content->as_string());
                seen_user = true;
            } else if (content != nullptr && content->is_array()) {
                for (const auto& block : content->as_array()) {
                    if (block.is_object() && str(block.as_object(), "type") == std::optional<std::string>("text")) {
                        view.first_user_text = str(block.as_object(), "text").value_or("");
                        seen_user = true;
                        break;
                    }
                }
            }
        }
        if (content != nullptr && content->is_array()) {
            for (const auto& block : content->as_array()) {
                if (block.is_object() && str(block.as_object(), "type") == std::optional<std::string>("tool_result")) {
                    view.last_tool_result = content_text(block.as_object().if_contains("content"));
                }
            }
        }
    }
    return view;
}

std::string error_body(endpoint where, std::string_view type, std::string_view message) {
    json::object err{{"type", type}, {"message", message}};
    if (where == endpoint::anthropic) return json::serialize(json::object{{"type", "error"}, {"error", err}});
    return json::serialize(json::object{{"error", err}});
}

void engine::replace(script s) {
    script_ = std::move(s);
    attempts_.clear();
}

action engine::handle(endpoint where, std::string_view body) {
    action out;
    ++sequence_;
    const std::string request_id = fmt::format("req_fake_{}", sequence_);
    out.headers.emplace_back(where == endpoint::anthropic ? "request-id" : "x-request-id", request_id);
    auto refuse = [&](int status, std::string_view type, const std::string& message) {
        out.status = status;
        out.body = error_body(where, type, "fake-llm: " + message);
        return out;
    };
    auto view = analyze(where, body);
    if (!view) return refuse(400, "invalid_request_error", view.error());

    const conversation* conv = nullptr;
    for (const auto& c : script_.conversations) {
        if (!c.prompt_contains || view->first_user_text.find(*c.prompt_contains) != std::string::npos) {
            conv = &c;
            break;
        }
    }
    if (conv == nullptr) {
        out.status = script_.unmatched_status;
        out.body = script_.unmatched_body.value_or(
            error_body(where, "api_error", "fake-llm: no scripted conversation matches"));
        return out;
    }
    out.conversation = conv->name;
    // Stateless step: a resumed or redelivered conversation lands on the right step.
    out.step = view->assistant_turns;
    out.attempt = ++attempts_[{conv->name, out.step}];
    if (out.step >= static_cast<int>(conv->steps.size())) {
        return refuse(
            500, "api_error",
            fmt::format("conversation {} has no step {} (it has {})", quote(conv->name), out.step, conv->steps.size()));
    }
    const step& s = conv->steps[static_cast<std::size_t>(out.step)];

    if (out.attempt <= static_cast<int>(s.faults.size())) {
        const fault& f = s.faults[static_cast<std::size_t>(out.attempt - 1)];
        if (f.hang) {
            out.what = action::kind::hang;
            return out;
        }
        if (f.close) {
            out.what = action::kind::close;
            return out;
        }
        out.delay_ms = f.delay_ms;
        if (f.status != 0) {
            out.status = f.status;
            for (const auto& h : f.headers) out.headers.push_back(h);
            out.body = f.body.value_or(
                error_body(where, f.status == 529 ? "overloaded_error" : "api_error",
                           fmt::format("fake-llm: scripted fault {} (attempt {})", f.status, out.attempt)));
            return out;
        }
        // A bare delay answers normally once it has passed.
    }

    for (const auto& name : s.expect.tools_include) {
        if (std::find(view->tools.begin(), view->tools.end(), name) == view->tools.end()) {
            return refuse(400, "invalid_request_error",
                          fmt::format("expect tools_include {} failed in conversation {} step {}", quote(name),
                                      quote(conv->name), out.step));
        }
    }
    if (s.expect.last_tool_result_contains &&
        view->last_tool_result.value_or("").find(*s.expect.last_tool_result_contains) == std::string::npos) {
        return refuse(400, "invalid_request_error",
                      fmt::format("expect last_tool_result_contains {} failed in conversation {} step {}: got {}",
                                  quote(*s.expect.last_tool_result_contains), quote(conv->name), out.step,
                                  gocompat::quote_bounded(view->last_tool_result.value_or("(none)"), 200)));
    }
    if (s.expect.system_contains && view->system.find(*s.expect.system_contains) == std::string::npos) {
        return refuse(400, "invalid_request_error",
                      fmt::format("expect system_contains {} failed in conversation {} step {}",
                                  quote(*s.expect.system_contains), quote(conv->name), out.step));
    }
    out.status = 200;
    out.body = render_reply(where, s.reply, conv->name, out.step, view->model);
    return out;
}

namespace {

std::string reverse_finish_reason(std::string_view stop_reason) {
    if (stop_reason == "end_turn") return "stop";
    if (stop_reason == "max_tokens") return "length";
    if (stop_reason == "tool_use") return "tool_calls";
    if (stop_reason == "refusal") return "content_filter";
    return std::string(stop_reason);
}

}  // namespace

std::string render_reply(endpoint where, const json::object& reply, const std::string& conversation, int step,
                         const std::string& model) {
    json::array blocks;
    if (auto* c = reply.if_contains("content"); c != nullptr && c->is_array()) blocks = c->as_array();
    const std::string stop_reason = str(reply, "stop_reason").value_or("end_turn");
    json::object usage_in;
    if (auto* u = reply.if_contains("usage"); u != nullptr && u->is_object()) usage_in = u->as_object();
    const auto in = integer(usage_in, "input_tokens");
    const auto out_tokens = integer(usage_in, "output_tokens");
    const auto cache_read = integer(usage_in, "cache_read_input_tokens");
    const auto cache_create = integer(usage_in, "cache_creation_input_tokens");

    if (where == endpoint::anthropic) {
        json::array content;
        std::size_t i = 0;
        for (const auto& b : blocks) {
            const auto& bo = b.as_object();
            const auto type = str(bo, "type").value_or("");
            if (type == "text") {
                content.push_back(json::object{{"type", "text"}, {"text", str(bo, "text").value_or("")}});
            } else if (type == "thinking") {
                content.push_back(json::object{{"type", "thinking"},
                                               {"thinking", str(bo, "thinking").value_or(str(bo, "text").value_or(""))},
                                               {"signature", str(bo, "signature").value_or("")}});
            } else if (type == "tool_use") {
                json::value input = json::object{};
                if (auto raw = str(bo, "input_raw")) {
                    boost::system::error_code ec;
                    auto parsed = json::parse(*raw, ec);
                    input = ec ? json::value(*raw) : parsed;
                } else if (auto* given = bo.if_contains("input")) {
                    input = *given;
                }
                content.push_back(
                    json::object{{"type", "tool_use"},
                                 {"id", str(bo, "id").value_or(fmt::format("toolu_{}_{}_{}", conversation, step, i))},
                                 {"name", str(bo, "name").value_or("")},
                                 {"input", input}});
            } else if (type == "provider") {
                if (auto* raw = bo.if_contains("raw")) content.push_back(*raw);
            }
            ++i;
        }
        json::object body{{"id", fmt::format("msg_{}_{}", conversation, step)},
                          {"type", "message"},
                          {"role", "assistant"},
                          {"model", model},
                          {"content", std::move(content)},
                          {"stop_reason", stop_reason},
                          {"stop_sequence", nullptr},
                          {"usage", json::object{{"input_tokens", in},
                                                 {"output_tokens", out_tokens},
                                                 {"cache_read_input_tokens", cache_read},
                                                 {"cache_creation_input_tokens", cache_create}}}};
        return json::serialize(body);
    }

    std::string text;
    bool has_text = false;
    std::string reasoning;
    json::array calls;
    std::size_t i = 0;
    for (const auto& b : blocks) {
        const auto& bo = b.as_object();
        const auto type = str(bo, "type").value_or("");
        if (type == "text") {
            text += str(bo, "text").value_or("");
            has_text = true;
        } else if (type == "thinking") {
            reasoning += str(bo, "thinking").value_or(str(bo, "text").value_or(""));
        } else if (type == "tool_use") {
            std::string arguments = "{}";
            if (auto raw = str(bo, "input_raw")) {
                arguments = *raw;
            } else if (auto* given = bo.if_contains("input")) {
                arguments = json::serialize(*given);
            }
            json::object call{
                {"type", "function"},
                {"function", json::object{{"name", str(bo, "name").value_or("")}, {"arguments", arguments}}}};
            // `"no_id": true` plays a server that sends calls without ids.
            if (auto* no_id = bo.if_contains("no_id"); no_id == nullptr || !no_id->is_bool() || !no_id->as_bool()) {
                call["id"] = str(bo, "id").value_or(fmt::format("call_{}_{}_{}", conversation, step, i));
            }
            calls.push_back(std::move(call));
        }
        ++i;
    }
    json::object message{{"role", "assistant"}, {"content", has_text ? json::value(text) : json::value(nullptr)}};
    if (!reasoning.empty()) message["reasoning_content"] = reasoning;
    if (!calls.empty()) message["tool_calls"] = std::move(calls);
    const std::string finish = str(reply, "finish_reason").value_or(reverse_finish_reason(stop_reason));
    json::object body{{"id", fmt::format("chatcmpl-{}-{}", conversation, step)},
                      {"object", "chat.completion"},
                      {"created", 0},
                      {"model", model},
                      {"choices", json::array{json::object{
                                      {"index", 0}, {"message", std::move(message)}, {"finish_reason", finish}}}},
                      {"usage", json::object{{"prompt_tokens", in + cache_read},
                                             {"completion_tokens", out_tokens},
                                             {"total_tokens", in + cache_read + out_tokens},
                                             {"prompt_tokens_details", json::object{{"cached_tokens", cache_read}}}}}};
    return json::serialize(body);
}

}  // namespace fiskai::fake_llm
