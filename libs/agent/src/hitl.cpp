#include <fiskai/agent/hitl.hpp>
#include <fiskai/memory/builtins.hpp>
#include <fiskai/toolkit/confirm_gate.hpp>
#include <fiskai/toolkit/function_tool.hpp>
#include <fiskai/toolkit/prompter.hpp>

#include <boost/json.hpp>
#include <fmt/format.h>

namespace fiskai::agent {
namespace {

namespace json = boost::json;
using toolkit::outcome;
using toolkit::reply_status;

constexpr std::size_t max_prompt_runes = 500;
constexpr std::size_t max_select_options = 25;

std::string sanitize_prompt(std::string_view s) { return memory::sanitize_for_terminal(s, max_prompt_runes); }

// A model-supplied string argument; absent is "" (Go's zero value), another type refuses.
std::optional<std::string> string_arg(const json::object& args, std::string_view key, std::string& error) {
    const auto* v = args.if_contains(key);
    if (v == nullptr || v->is_null()) return std::string();
    if (!v->is_string()) {
        error = fmt::format("json: cannot unmarshal {} into Go struct field .{} of type string",
                            v->is_number()  ? "number"
                            : v->is_bool()  ? "bool"
                            : v->is_array() ? "array"
                                            : "object",
                            key);
        return std::nullopt;
    }
    return std::string(v->get_string());
}

// `{"<key>":<value>,"reason":"<reason>"}` with reason omitted when empty (Go omitempty).
outcome answer(std::string_view key, json::value value, const std::string& reason = {}) {
    json::object o;
    o[key] = std::move(value);
    if (!reason.empty()) o["reason"] = reason;
    return outcome::from_json(std::move(o));
}

outcome deferral(std::string_view key, const std::string& question_id) {
    json::object o;
    o[key] = nullptr;
    o["deferred"] = true;
    o["question_id"] = question_id;
    o["reason"] = deferral_reason();
    return outcome::deferral(std::move(o), question_id);
}

// The no-answer outcomes every question shares; nullopt when the reply was answered.
std::optional<outcome> unanswered(const toolkit::question_reply& reply, std::string_view key, json::value declined,
                                  std::string_view ended_verb, std::string_view did_not) {
    switch (reply.status) {
        case reply_status::answered: return std::nullopt;
        case reply_status::silent: return deferral(key, reply.question_id);
        case reply_status::unavailable:
            return answer(key, std::move(declined), std::string(toolkit::reason_no_operator));
        case reply_status::cancelled:
            return answer(key, std::move(declined),
                          fmt::format("the run ended before the operator could {}: {}", ended_verb, reply.reason));
        case reply_status::declined: break;
    }
    return answer(key, std::move(declined), fmt::format("the operator did not {}: {}", did_not, reply.reason));
}

json::object schema(std::string_view text) { return json::parse(text).as_object(); }

toolkit::function_tool_spec base_spec(std::string name, std::string description, json::object input_schema) {
    toolkit::function_tool_spec spec;
    spec.name = std::move(name);
    spec.description = std::move(description);
    spec.input_schema = std::move(input_schema);
    spec.exposed = toolkit::exposure{toolkit::surface::agent};
    spec.confirm = toolkit::confirm_posture::not_required;
    spec.kind = toolkit::tool_kind::builtin;
    return spec;
}

toolkit::prompter& asker_of(const toolkit::call_options& options) {
    return options.asker != nullptr ? *options.asker : toolkit::default_deny_prompter();
}

boost::asio::awaitable<outcome> ask_confirm(const json::object& args, const toolkit::call_options& options) {
    std::string error;
    auto raw = string_arg(args, "question", error);
    if (!raw) co_return outcome::failure("invalid ask_human_confirm input: " + error);
    auto question = sanitize_prompt(*raw);
    if (question.empty()) co_return outcome::failure("ask_human_confirm requires a non-empty question");
    auto& asker = asker_of(options);
    if (!asker.can_prompt()) co_return answer("confirmed", false, std::string(toolkit::reason_no_operator));
    toolkit::question q;
    q.what = toolkit::question::kind::confirm;
    q.text = question;
    q.tool_name = "ask_human_confirm";
    auto reply = co_await asker.ask(std::move(q));
    if (auto other = unanswered(reply, "confirmed", false, "answer", "confirm")) co_return std::move(*other);
    co_return answer("confirmed", reply.confirmed);
}

boost::asio::awaitable<outcome> ask_select(const json::object& args, const toolkit::call_options& options) {
    std::string error;
    auto raw = string_arg(args, "question", error);
    if (!raw) co_return outcome::failure("invalid ask_human_select input: " + error);
    std::vector<std::string> choices;
    if (const auto* o = args.if_contains("options"); o != nullptr && !o->is_null()) {
        if (!o->is_array())
            co_return outcome::failure("invalid ask_human_select input: options must be an array of strings");
        for (const auto& item : o->get_array()) {
            if (!item.is_string()) {
                co_return outcome::failure("invalid ask_human_select input: options must be an array of strings");
            }
            choices.push_back(sanitize_prompt(item.get_string()));
        }
    }
    auto question = sanitize_prompt(*raw);
    if (question.empty()) co_return outcome::failure("ask_human_select requires a non-empty question");
    if (choices.empty()) co_return outcome::failure("ask_human_select requires at least one option");
    if (choices.size() > max_select_options) {
        co_return outcome::failure(
            fmt::format("ask_human_select supports at most {} options, got {}", max_select_options, choices.size()));
    }
    auto& asker = asker_of(options);
    if (!asker.can_prompt()) co_return answer("selected", nullptr, std::string(toolkit::reason_no_operator));
    toolkit::question q;
    q.what = toolkit::question::kind::select;
    q.text = question;
    q.options = choices;
    q.tool_name = "ask_human_select";
    auto reply = co_await asker.ask(std::move(q));
    if (auto other = unanswered(reply, "selected", nullptr, "choose", "choose")) co_return std::move(*other);
    if (reply.selected < 0 || static_cast<std::size_t>(reply.selected) >= choices.size()) {
        co_return answer("selected", nullptr, "no option was chosen");
    }
    co_return answer("selected", json::string(choices[static_cast<std::size_t>(reply.selected)]));
}

boost::asio::awaitable<outcome> ask_input(const json::object& args, const toolkit::call_options& options) {
    std::string error;
    auto raw = string_arg(args, "question", error);
    if (!raw) co_return outcome::failure("invalid ask_human_input input: " + error);
    auto fallback = string_arg(args, "default", error);
    if (!fallback) co_return outcome::failure("invalid ask_human_input input: " + error);
    auto question = sanitize_prompt(*raw);
    if (question.empty()) co_return outcome::failure("ask_human_input requires a non-empty question");
    auto& asker = asker_of(options);
    if (!asker.can_prompt()) co_return answer("value", nullptr, std::string(toolkit::reason_no_operator));
    toolkit::question q;
    q.what = toolkit::question::kind::input;
    q.text = question;
    q.default_value = sanitize_prompt(*fallback);
    q.tool_name = "ask_human_input";
    auto reply = co_await asker.ask(std::move(q));
    if (auto other = unanswered(reply, "value", nullptr, "answer", "answer")) co_return std::move(*other);
    co_return answer("value", json::string(reply.value));
}

}  // namespace

const std::string& deferral_reason() {
    static const std::string reason =
        "the operator has not answered yet; the question stays open and their answer will reach you as a later "
        "message in this conversation. Do not ask it again now: finish what does not depend on the answer, then "
        "end your turn.";
    return reason;
}

std::string hitl_system_note(const std::vector<std::string>& names) {
    if (names.empty()) return {};
    return fmt::format(
        "You are running as a non-interactive agent: the operator cannot see your intermediate messages and cannot "
        "reply to them, so a question written as plain text will not reach them and only ends the run. The only "
        "way to get an answer or a decision from the operator is to call one of these tools: {}. Use them whenever "
        "your instructions tell you to check with the operator: to confirm an action, to choose between options, "
        "to collect a value, or to decide whether to continue, repeat, or stop.",
        fmt::join(names, ", "));
}

// Descriptions and schemas are Go's verbatim: they are hashed into the fingerprint.
toolkit::tool_list hitl_tools() {
    toolkit::tool_list out;
    auto confirm = base_spec(
        "ask_human_confirm",
        "Ask the human operator a yes/no question at the terminal and wait for their answer. Use this only for a "
        "decision you should not make alone: confirming an irreversible or destructive action before you take it "
        "(deleting data, overwriting, restarting a service), or resolving a genuine ambiguity that turns on the "
        "operator's intent. Do not use it for anything you can determine yourself, to narrate progress, or to ask "
        "permission for ordinary read-only steps. The operator is a person at a terminal and each call interrupts "
        "them, so ask only when their answer changes what you do next. It returns {\"confirmed\": true} only when "
        "the operator answered yes; any other outcome (a no, or no operator could be reached) returns "
        "{\"confirmed\": false} with a reason. A false result is authoritative and must not be retried.",
        schema(
            R"({"type":"object","properties":{"question":{"type":"string","description":"The yes/no question to put to the operator, phrased so the consequence of yes is clear, e.g. \"Delete stream ORDERS? This cannot be undone.\""}},"required":["question"]})"));
    confirm.handler = ask_confirm;
    out.push_back(toolkit::make_function_tool(std::move(confirm)));

    auto select = base_spec(
        "ask_human_select",
        "Ask the human operator to choose one option from a list you provide, at the terminal, and wait for their "
        "choice. Use this when the decision depends on the operator's intent or knowledge and you have a concrete, "
        "bounded set of options to pick among (which environment, which of several matching resources, which "
        "approach). Do not use it for a yes/no question (use ask_human_confirm) or for anything you can determine "
        "yourself. It returns {\"selected\": \"<the chosen option>\"}; if the operator cancels or none could be "
        "reached it returns {\"selected\": null} with a reason, which is authoritative and must not be retried.",
        schema(
            R"({"type":"object","properties":{"question":{"type":"string","description":"The question to put to the operator, naming what they are choosing."},"options":{"type":"array","items":{"type":"string"},"description":"The options to choose from, in the order to show them. At least one, at most 25."}},"required":["question","options"]})"));
    select.handler = ask_select;
    out.push_back(toolkit::make_function_tool(std::move(select)));

    auto input = base_spec(
        "ask_human_input",
        "Ask the human operator to type a free-text value at the terminal and wait for their answer. Use this for a "
        "value you genuinely cannot determine yourself and that depends on the operator (a name, a path, an "
        "identifier, a short reason). You may provide a default the operator can accept or edit, which is the "
        "preferred way to let them correct a value you drafted. Do not use it for a yes/no question (use "
        "ask_human_confirm), for choosing among known options (use ask_human_select), or to collect a secret or "
        "password. It returns {\"value\": \"<the text>\"} (which may be empty if the operator entered nothing); if "
        "the operator cancels or none could be reached it returns {\"value\": null} with a reason.",
        schema(
            R"({"type":"object","properties":{"question":{"type":"string","description":"The question to put to the operator, naming the value you need."},"default":{"type":"string","description":"A value shown pre-filled for the operator to accept or edit."}},"required":["question"]})"));
    input.handler = ask_input;
    out.push_back(toolkit::make_function_tool(std::move(input)));
    return out;
}

}  // namespace fiskai::agent
