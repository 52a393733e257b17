#include <fiskai/gocompat/duration.hpp>
#include <fiskai/gocompat/quote.hpp>
#include <fiskai/serve/a2a_rules.hpp>
#include <fiskai/serve/session_ids.hpp>

#include <fmt/format.h>

#include <algorithm>

namespace fiskai::serve::a2a_rules {

namespace {

bool token_ok(std::string_view s, std::size_t max) {
    if (s.empty() || s.size() > max) return false;
    return std::all_of(s.begin(), s.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
    });
}

}  // namespace

std::string compose_prompt(std::string_view prompt, std::string_view context, std::span<const std::string> hints,
                           std::span<const std::string> tool_names) {
    std::string out(prompt);
    if (!context.empty()) out += fmt::format("\n\n<context>\n{}\n</context>", context);
    std::vector<std::string> named;
    for (const auto& h : hints) {
        const bool exists = std::find(tool_names.begin(), tool_names.end(), h) != tool_names.end();
        if (exists && std::find(named.begin(), named.end(), h) == named.end()) named.push_back(h);
    }
    if (!named.empty()) out += fmt::format("\n\nThe caller suggests these tools: {}.", fmt::join(named, ", "));
    return out;
}

namespace {
// An age as a Go duration can show it: ages past ~292 years (Go's zero time) are capped.
std::chrono::seconds shown_age(std::chrono::seconds waited) {
    return std::min(waited, std::chrono::duration_cast<std::chrono::seconds>(std::chrono::nanoseconds::max()));
}
}  // namespace

std::variant<admitted, refusal, malformed> admit(const a2a::task_request& request, const admit_options& options) {
    // The ids become subject tokens; the validator checked them, this keeps the rule local.
    if (!token_ok(request.request, 64))
        return malformed{fmt::format("invalid task id {}: it must match ^[a-zA-Z0-9_-]{{1,64}}$",
                                     gocompat::quote_bounded(request.request))};
    if (!token_ok(request.id, 64))
        return malformed{fmt::format("invalid request id {}: it must match ^[a-zA-Z0-9_-]{{1,64}}$",
                                     gocompat::quote_bounded(request.id))};
    if (!token_ok(request.sender.name, 128))
        return malformed{fmt::format("invalid sender name {}: it must match ^[a-zA-Z0-9_-]{{1,128}}$",
                                     gocompat::quote_bounded(request.sender.name))};

    admitted a;
    a.task = request.request;
    a.id = request.id;
    a.sender = request.sender.name;
    a.continuation = request.request != request.id;
    a.session_id = a2a_session_id(options.identity, a.sender, a.task);
    a.stream = request.wants_stream();
    if (request.budget) {
        a.limits.max_tokens = request.budget->max_tokens;
        a.limits.max_iterations = request.budget->max_iterations;
        if (!request.budget->call_timeout.empty()) {
            try {
                a.limits.call_timeout = gocompat::parse_duration(request.budget->call_timeout);
            } catch (const gocompat::duration_error& e) {
                return refusal{std::string(code::invalid_budget),
                               fmt::format("invalid budget.call_timeout {}: {}",
                                           gocompat::quote_bounded(request.budget->call_timeout), e.what())};
            }
            if (a.limits.call_timeout.count() < 0)
                return refusal{std::string(code::invalid_budget),
                               fmt::format("invalid budget.call_timeout {}: it must not be negative",
                                           gocompat::quote_bounded(request.budget->call_timeout))};
        }
    }
    // Amendment 9: a request that waited longer than the accept window has a caller that
    // gave up on it.
    // In whole seconds: nanoseconds since the epoch overflow for the years the wire allows
    // (0000-9999), and a hostile `time` must not reach signed overflow.
    const auto waited = std::chrono::floor<std::chrono::seconds>(options.now) - request.time.seconds();
    if (options.accept_window && waited > std::chrono::ceil<std::chrono::seconds>(*options.accept_window)) {
        return refusal{std::string(code::expired),
                       fmt::format("the task waited {} before a worker could take it; the caller has given up; send it "
                                   "again",
                                   gocompat::format_duration(shown_age(waited)))};
    }
    a.prompt = compose_prompt(request.prompt, request.context, request.tool_hints, options.tool_names);
    return a;
}

std::optional<refusal> follow_up_rule(const admitted& a, bool session_exists, bool session_busy) {
    if (session_busy)
        return refusal{std::string(code::session_busy),
                       fmt::format("task {} is still running here; wait for its terminal message before continuing it",
                                   gocompat::quote(a.task))};
    if (!a.continuation && session_exists)
        return refusal{std::string(code::duplicate_task),
                       fmt::format("task {} was already taken here; continue it with --continue {}",
                                   gocompat::quote(a.task), a.task)};
    if (a.continuation && !session_exists)
        return refusal{std::string(code::unknown_task),
                       fmt::format("task {} is not known to this worker", gocompat::quote(a.task))};
    return std::nullopt;
}

a2a::usage to_wire_usage(const llm::usage& u) noexcept {
    return a2a::usage{u.in + u.cache_read + u.cache_create, u.out};
}

namespace {

a2a::task_error error_terminal(std::string_view stop_reason, std::string_view c, std::string_view text) {
    a2a::task_error e;
    e.stop_reason = std::string(stop_reason);
    e.code = std::string(c);
    e.error = std::string(text);
    return e;
}

}  // namespace

a2a::message terminal_for(const outcome& o) {
    if (o.crashed) return error_terminal("error", "crashed", o.error.empty() ? agent::text::crashed : o.error);
    if (o.abandoned) return error_terminal("canceled", "abandoned", o.error.empty() ? serve::text::abandoned : o.error);
    if (o.rejected) return error_terminal("error", "rejected", o.error);
    if (o.reason == "completed") {
        a2a::task_result r;
        r.stop_reason = o.model_stop_reason.empty() ? "end_turn" : o.model_stop_reason;
        r.text = o.text;
        r.usage = to_wire_usage(o.counters.tokens);
        return r;
    }
    if (o.reason == "suspended") {
        if (o.interrupted) return error_terminal("canceled", "interrupted", text::interrupted);
        a2a::task_result r;
        r.stop_reason = "suspended";
        r.text = o.error.empty() ? o.text : o.error;
        r.usage = to_wire_usage(o.counters.tokens);
        return r;
    }
    if (o.reason == "budget") return error_terminal("budget_exhausted", "budget", o.error);
    if (o.reason == "max_iterations") return error_terminal("max_iterations", "max_iterations", o.error);
    if (o.reason == "error") {
        if (o.error == agent::text::refused) return error_terminal("refusal", "refusal", o.error);
        if (o.error == agent::text::truncated) return error_terminal("max_tokens", "truncated", o.error);
        return error_terminal("error", "run_failed", o.error);
    }
    // A reason this mapping does not know is a bug upstream: the caller still gets a terminal.
    return error_terminal("error", "crashed", o.error.empty() ? agent::text::crashed : o.error);
}

a2a::task_error refusal_terminal(const refusal& r) { return error_terminal("error", r.code, r.reason); }

a2a::task_error crashed_terminal() { return error_terminal("error", "crashed", text::encode_failed); }

a2a::status_block status_event(std::int64_t iteration, std::string_view phase, const llm::usage& u) {
    a2a::status_block s;
    s.iteration = iteration;
    s.phase = std::string(phase);
    s.usage = to_wire_usage(u);
    return s;
}

std::vector<a2a::block> response_events(const llm::response& reply, std::string_view provider) {
    std::vector<a2a::block> out;
    for (const auto& b : reply.content) {
        if (const auto* t = std::get_if<llm::thinking_block>(&b)) {
            out.emplace_back(a2a::thinking_block{t->text, t->signature, std::string(provider)});
        } else if (const auto* x = std::get_if<llm::text_block>(&b)) {
            if (!x->text.empty()) out.emplace_back(a2a::text_block{x->text});
        } else if (const auto* u = std::get_if<llm::tool_use_block>(&b)) {
            a2a::tool_call_block c;
            c.id = u->id;
            c.name = u->name;
            if (auto raw = a2a::raw_json::parse(u->input); raw && raw->is_object()) c.input = std::move(*raw);
            out.emplace_back(std::move(c));
        }
    }
    return out;
}

a2a::tool_result_block tool_result_event(const agent::tool_result_trace& trace) {
    a2a::tool_result_block r;
    r.call_id = trace.call_id;
    r.is_error = trace.is_error;
    r.output = trace.output;
    // exec for command tools and for remote tools whose peer ran a command (§6.4).
    if (trace.exec) r.exec = a2a::exec_result{trace.exec->command, trace.exec->exit_code, trace.exec->truncated};
    return r;
}

question_slot::effect question_slot::resolve(verdict v) noexcept {
    switch (state_) {
        case state::open:
            if (v == verdict::answer) {
                state_ = state::delivered;
                return effect::delivered;
            }
            state_ = state::given_up;
            return effect::given_up;
        case state::given_up:
            if (v == verdict::answer && !late_taken_) {
                late_taken_ = true;
                return effect::late;
            }
            return effect::ignored;
        case state::delivered: return effect::ignored;
    }
    return effect::ignored;
}

namespace {

std::string_view answer_field(const a2a::task_answer& a) {
    if (a.declined) return "declined";
    if (a.confirmed) return "confirmed";
    if (a.selected) return "selected";
    if (a.value) return "value";
    if (a.decision) return "decision";
    return "no answer";
}

}  // namespace

std::optional<std::string> answer_mismatch(const question_shape& q, const a2a::task_answer& a) {
    if (a.declined) return std::nullopt;
    const auto field = answer_field(a);
    std::string_view wanted;
    if (q.kind == "confirm") wanted = "confirmed";
    if (q.kind == "select") wanted = "selected";
    if (q.kind == "input") wanted = "value";
    if (q.kind == "approval") wanted = "decision";
    if (field != wanted) return fmt::format("a {} question takes {} or declined, not {}", q.kind, wanted, field);
    if (a.selected && *a.selected >= q.options)
        return fmt::format("selected {} is out of range ({} options)", *a.selected, q.options);
    return std::nullopt;
}

toolkit::question_reply question_reply_from(const a2a::task_answer& a) {
    toolkit::question_reply r;
    if (a.declined) {
        r.status = toolkit::reply_status::declined;
        r.reason = a.reason;
        return r;
    }
    r.status = toolkit::reply_status::answered;
    if (a.confirmed) r.confirmed = *a.confirmed;
    if (a.selected) r.selected = static_cast<int>(*a.selected);
    if (a.value) r.value = *a.value;
    return r;
}

toolkit::approval_reply approval_reply_from(const a2a::task_answer& a) {
    toolkit::approval_reply r;
    if (a.declined) {
        r.status = toolkit::reply_status::declined;
        r.reason = a.reason;
        return r;
    }
    r.status = toolkit::reply_status::answered;
    const std::string d = a.decision.value_or("deny");
    r.choice = d == "once" ? toolkit::approval::allow_once
                           : (d == "run" ? toolkit::approval::allow_for_run : toolkit::approval::deny);
    return r;
}

void held_approvals::prune(std::chrono::steady_clock::time_point now) {
    std::erase_if(held_, [&](const auto& e) { return e.second.expires <= now; });
}

void held_approvals::hold(const std::string& session, const std::string& call_id, toolkit::approval choice,
                          std::chrono::steady_clock::time_point now) {
    prune(now);
    const auto key = std::make_pair(session, call_id);
    if (held_.size() >= capacity_ && !held_.contains(key) && !held_.empty()) {
        auto oldest = std::min_element(held_.begin(), held_.end(), [](const auto& a, const auto& b) {
            return a.second.expires < b.second.expires;
        });
        held_.erase(oldest);
    }
    held_[key] = entry{choice, now + ttl_};
}

std::optional<toolkit::approval> held_approvals::take(const std::string& session, const std::string& call_id,
                                                      std::chrono::steady_clock::time_point now) {
    prune(now);
    auto it = held_.find({session, call_id});
    if (it == held_.end()) return std::nullopt;
    auto choice = it->second.choice;
    held_.erase(it);
    return choice;
}

std::chrono::nanoseconds question_window(std::chrono::nanoseconds question_timeout, std::chrono::nanoseconds floor) {
    return std::max(question_timeout, floor);
}

bool answerable(std::string_view reply_subject) noexcept {
    if (reply_subject.empty()) return false;
    std::size_t start = 0;
    for (;;) {
        const auto dot = reply_subject.find('.', start);
        const auto token =
            reply_subject.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start);
        if (token.empty() || token == "*" || token == ">") return false;
        for (const char c : token) {
            const auto u = static_cast<unsigned char>(c);
            if (u <= 0x20 || u == 0x7f) return false;
        }
        if (dot == std::string_view::npos) return true;
        start = dot + 1;
    }
}

std::string sanitize(std::string_view s, std::size_t max_runes) {
    std::string out;
    out.reserve(std::min(s.size(), max_runes * 4));
    std::size_t runes = 0;
    for (std::size_t i = 0; i < s.size(); ++i) {
        const auto c = static_cast<unsigned char>(s[i]);
        const bool starts_rune = (c & 0xC0) != 0x80;
        if (starts_rune) {
            if (runes == max_runes) break;
            ++runes;
        }
        if (c < 0x20 || c == 0x7F) {
            out.push_back(c == '\n' ? '\n' : ' ');
        } else {
            out.push_back(static_cast<char>(c));
        }
    }
    return out;
}

a2a::task_question approval_question(const toolkit::approval_request& r, std::string question_id,
                                     std::chrono::nanoseconds window) {
    a2a::task_question q;
    q.question_id = std::move(question_id);
    q.kind = "approval";
    // Go's confirm-gate header (survey_prompter printGateHeader), naming the gated tool.
    q.question = sanitize(fmt::format("confirmation required: {} carries tag {}", gocompat::quote(r.tool_name),
                                      gocompat::quote(r.trigger_tag)),
                          500);
    q.call_id = r.call_id;
    q.tool = r.tool_name;
    q.command = sanitize(r.command_line.empty() ? r.tool_name : r.command_line, 2000);
    q.tag = r.trigger_tag;
    q.window = gocompat::format_duration(window);
    return q;
}

a2a::task_question tool_question(const toolkit::question& in, std::string question_id,
                                 std::chrono::nanoseconds window) {
    a2a::task_question q;
    q.question_id = std::move(question_id);
    switch (in.what) {
        case toolkit::question::kind::confirm: q.kind = "confirm"; break;
        case toolkit::question::kind::select: q.kind = "select"; break;
        case toolkit::question::kind::input: q.kind = "input"; break;
    }
    q.question = sanitize(in.text, 500);
    if (in.what == toolkit::question::kind::select) {
        for (std::size_t i = 0; i < in.options.size() && i < 25; ++i) q.options.push_back(sanitize(in.options[i], 500));
    }
    if (in.what == toolkit::question::kind::input) q.default_value = in.default_value;
    q.call_id = in.call_id;
    q.window = gocompat::format_duration(window);
    return q;
}

}  // namespace fiskai::serve::a2a_rules
