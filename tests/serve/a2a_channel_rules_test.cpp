// The a2a channel's protocol decisions (serve.md §6.3, §6.4, §6.7, Amendments 9, 11, 17),
// tested without I/O.
#include <fiskai/a2a/codec.hpp>
#include <fiskai/a2a/protocol.hpp>
#include <fiskai/a2a/stamp.hpp>
#include <fiskai/a2a_nats/task_transport.hpp>
#include <fiskai/serve/a2a_rules.hpp>
#include <fiskai/serve/session_ids.hpp>

#include <catch2/catch.hpp>

using namespace fiskai;
namespace a2a_nats = fiskai::a2a_nats;
namespace rules = fiskai::serve::a2a_rules;
using namespace std::chrono_literals;

namespace {

a2a::task_request request(std::string task = "T1", std::string id = "") {
    a2a::task_request r;
    a2a::stamp_request(r, "caller-1", "svc", task);
    if (!id.empty()) r.id = id;
    r.prompt = "do it";
    return r;
}

rules::admit_options opts(std::span<const std::string> tools = {}) {
    rules::admit_options o;
    o.identity = "svc";
    o.accept_window = 60s;
    o.now = std::chrono::system_clock::now();
    o.tool_names = tools;
    return o;
}

}  // namespace

TEST_CASE("admit: a new task becomes a work with a derived session id", "[serve][a2a]") {
    auto r = request();
    auto d = rules::admit(r, opts());
    auto* a = std::get_if<rules::admitted>(&d);
    REQUIRE(a);
    CHECK(a->task == "T1");
    CHECK(a->id == "T1");
    CHECK_FALSE(a->continuation);
    CHECK(a->session_id == serve::a2a_session_id("svc", "caller-1", "T1"));
    CHECK(a->prompt == "do it");
    CHECK(a->stream);
}

TEST_CASE("admit: a continuation names the task it continues", "[serve][a2a]") {
    auto d = rules::admit(request("T1", "C2"), opts());
    auto* a = std::get_if<rules::admitted>(&d);
    REQUIRE(a);
    CHECK(a->continuation);
    CHECK(a->id == "C2");
    CHECK(a->session_id == serve::a2a_session_id("svc", "caller-1", "T1"));
}

TEST_CASE("admit: the prompt carries the context block and the hints naming real tools", "[serve][a2a]") {
    auto r = request();
    r.context = "ctx line";
    r.tool_hints = {"stream_ls", "nope", "stream_rm"};
    const std::vector<std::string> tools{"stream_ls", "stream_rm"};
    auto d = rules::admit(r, opts(tools));
    REQUIRE(std::holds_alternative<rules::admitted>(d));
    CHECK(std::get<rules::admitted>(d).prompt ==
          "do it\n\n<context>\nctx line\n</context>\n\nThe caller suggests these tools: stream_ls, stream_rm.");
    CHECK(rules::compose_prompt("p", "", std::vector<std::string>{"x"}, tools) == "p");
}

TEST_CASE("admit: a budget whose call_timeout is no Go duration is refused invalid_budget", "[serve][a2a]") {
    auto r = request();
    r.budget = a2a::budget{10, 2, "ten seconds"};
    auto d = rules::admit(r, opts());
    auto* ref = std::get_if<rules::refusal>(&d);
    REQUIRE(ref);
    CHECK(ref->code == "invalid_budget");
    CHECK(ref->reason == "invalid budget.call_timeout \"ten seconds\": time: invalid duration \"ten seconds\"");

    r.budget = a2a::budget{10, 2, "90s"};
    auto ok = rules::admit(r, opts());
    REQUIRE(std::holds_alternative<rules::admitted>(ok));
    CHECK(std::get<rules::admitted>(ok).limits.call_timeout == 90s);
    CHECK(std::get<rules::admitted>(ok).limits.max_tokens == 10);
}

TEST_CASE("admit: a request older than the accept window is refused expired (Amendment 9)", "[serve][a2a]") {
    auto r = request();
    auto o = opts();
    o.now = std::chrono::system_clock::now() + 125s;
    auto d = rules::admit(r, o);
    auto* ref = std::get_if<rules::refusal>(&d);
    REQUIRE(ref);
    CHECK(ref->code == "expired");
    CHECK(ref->reason.starts_with("the task waited 2m"));
    CHECK(ref->reason.ends_with(" before a worker could take it; the caller has given up; send it again"));
}

TEST_CASE("admit: times at the ends of the wire's range are compared without overflow", "[serve][a2a]") {
    // Year 1 (Go's zero time) is far outside what nanoseconds since the epoch can hold: it
    // is simply old, so it expired; a time in year 9999 has not waited at all.
    auto old_request = request();
    old_request.time = a2a::timestamp();
    auto d = rules::admit(old_request, opts());
    auto* ref = std::get_if<rules::refusal>(&d);
    REQUIRE(ref);
    CHECK(ref->code == "expired");

    auto future_request = request();
    auto parsed = a2a::timestamp::parse("9999-12-31T23:59:59Z");
    REQUIRE(parsed);
    future_request.time = *parsed;
    CHECK(std::holds_alternative<rules::admitted>(rules::admit(future_request, opts())));

    // Without a window (the queue) age never refuses.
    auto o = opts();
    o.accept_window = std::nullopt;
    CHECK(std::holds_alternative<rules::admitted>(rules::admit(old_request, o)));
}

TEST_CASE("admit: hostile ids and senders are malformed, never subjects", "[serve][a2a]") {
    for (const std::string& bad : std::vector<std::string>{"a.b", "*", ">", std::string(65, 'x'), ""}) {
        auto r = request();
        r.request = bad;
        CHECK(std::holds_alternative<rules::malformed>(rules::admit(r, opts())));
        auto r2 = request();
        r2.id = bad;
        CHECK(std::holds_alternative<rules::malformed>(rules::admit(r2, opts())));
    }
    auto r = request();
    r.sender.name = "a b";
    CHECK(std::holds_alternative<rules::malformed>(rules::admit(r, opts())));
}

TEST_CASE("follow_up_rule: duplicate, unknown and busy (Amendment 11)", "[serve][a2a]") {
    rules::admitted fresh;
    fresh.task = "T1";
    rules::admitted cont = fresh;
    cont.continuation = true;
    CHECK_FALSE(rules::follow_up_rule(fresh, false, false));
    CHECK_FALSE(rules::follow_up_rule(cont, true, false));
    auto dup = rules::follow_up_rule(fresh, true, false);
    REQUIRE(dup);
    CHECK(*dup ==
          rules::refusal{"duplicate_task", "task \"T1\" was already taken here; continue it with --continue T1"});
    auto unknown = rules::follow_up_rule(cont, false, false);
    REQUIRE(unknown);
    CHECK(*unknown == rules::refusal{"unknown_task", "task \"T1\" is not known to this worker"});
    auto busy = rules::follow_up_rule(cont, true, true);
    REQUIRE(busy);
    CHECK(*busy ==
          rules::refusal{"session_busy",
                         "task \"T1\" is still running here; wait for its terminal message before continuing it"});
}

namespace {

template <class T>
T as(const a2a::message& m) {
    REQUIRE(std::holds_alternative<T>(m));
    return std::get<T>(m);
}

}  // namespace

TEST_CASE("terminal_for: the §6.4 terminal mapping table", "[serve][a2a]") {
    serve::outcome o;
    o.reason = "completed";
    o.text = "all done";
    o.counters.tokens = llm::usage{10, 5, 3, 2};
    auto r = as<a2a::task_result>(rules::terminal_for(o));
    CHECK(r.stop_reason == "end_turn");
    CHECK(r.text == "all done");
    CHECK(r.usage == a2a::usage{15, 5});
    o.model_stop_reason = "stop_sequence";
    CHECK(as<a2a::task_result>(rules::terminal_for(o)).stop_reason == "stop_sequence");

    serve::outcome s;
    s.reason = "suspended";
    s.error = "approval for \"x\" was not given in time";
    s.text = "last words";
    auto sr = as<a2a::task_result>(rules::terminal_for(s));
    CHECK(sr.stop_reason == "suspended");
    CHECK(sr.text == s.error);
    s.error.clear();
    CHECK(as<a2a::task_result>(rules::terminal_for(s)).text == "last words");
    s.interrupted = true;
    auto si = as<a2a::task_error>(rules::terminal_for(s));
    CHECK(si.stop_reason == "canceled");
    CHECK(si.code == "interrupted");
    CHECK(si.error == "the worker stopped before the task finished; continue the task to resume it");

    auto check_error = [](serve::outcome x, std::string stop, std::string code) {
        auto e = as<a2a::task_error>(rules::terminal_for(x));
        CHECK(e.stop_reason == stop);
        CHECK(e.code == code);
        CHECK(e.error == x.error);
    };
    check_error({.reason = "budget", .error = "token budget exhausted"}, "budget_exhausted", "budget");
    check_error({.reason = "max_iterations", .error = "max iterations"}, "max_iterations", "max_iterations");
    check_error({.reason = "error", .error = std::string(agent::text::refused)}, "refusal", "refusal");
    check_error({.reason = "error", .error = std::string(agent::text::truncated)}, "max_tokens", "truncated");
    check_error({.reason = "error", .error = "llm call: boom"}, "error", "run_failed");
    check_error({.error = "bug", .crashed = true}, "error", "crashed");
    check_error({.error = "the worker stopped before this work started", .abandoned = true}, "canceled", "abandoned");
    check_error({.error = "no", .rejected = true}, "error", "rejected");

    auto refusal = rules::refusal_terminal({"shutting_down", std::string(rules::text::shutting_down)});
    CHECK(refusal.stop_reason == "error");
    CHECK(refusal.code == "shutting_down");
    CHECK(refusal.error == "the agent is shutting down and takes no new tasks; send it again");
    auto crashed = rules::crashed_terminal();
    CHECK(crashed.code == "crashed");
    CHECK(crashed.error == "internal error: the reply could not be encoded");
}

TEST_CASE("question_slot: resolve is the only transition", "[serve][a2a]") {
    using slot = rules::question_slot;
    slot a;
    CHECK(a.resolve(slot::verdict::answer) == slot::effect::delivered);
    CHECK(a.current() == slot::state::delivered);
    CHECK(a.resolve(slot::verdict::answer) == slot::effect::ignored);
    CHECK(a.resolve(slot::verdict::give_up) == slot::effect::ignored);
    CHECK(a.current() == slot::state::delivered);

    slot g;
    CHECK(g.resolve(slot::verdict::give_up) == slot::effect::given_up);
    CHECK(g.resolve(slot::verdict::give_up) == slot::effect::ignored);
    CHECK(g.resolve(slot::verdict::answer) == slot::effect::late);
    CHECK(g.resolve(slot::verdict::answer) == slot::effect::ignored);
    CHECK(g.current() == slot::state::given_up);
}

TEST_CASE("answer_mismatch: answers must fit the question's kind", "[serve][a2a]") {
    a2a::task_answer a;
    a.question_id = "Q";
    a.value = "text";
    CHECK(rules::answer_mismatch({"confirm", 0}, a) == "a confirm question takes confirmed or declined, not value");
    CHECK_FALSE(rules::answer_mismatch({"input", 0}, a));
    a2a::task_answer sel;
    sel.selected = 3;
    CHECK(rules::answer_mismatch({"select", 3}, sel) == "selected 3 is out of range (3 options)");
    sel.selected = 2;
    CHECK_FALSE(rules::answer_mismatch({"select", 3}, sel));
    a2a::task_answer dec;
    dec.declined = true;
    dec.reason = "no";
    CHECK_FALSE(rules::answer_mismatch({"approval", 0}, dec));
    CHECK(rules::approval_reply_from(dec).status == toolkit::reply_status::declined);
    a2a::task_answer once;
    once.decision = "run";
    CHECK(rules::approval_reply_from(once).choice == toolkit::approval::allow_for_run);
    a2a::task_answer f;
    f.confirmed = false;
    auto qr = rules::question_reply_from(f);
    CHECK(qr.status == toolkit::reply_status::answered);
    CHECK_FALSE(qr.confirmed);
}

TEST_CASE("event blocks from run events (§6.4)", "[serve][a2a]") {
    llm::response reply;
    reply.content.push_back(llm::thinking_block{"hmm", "sig"});
    reply.content.push_back(llm::text_block{""});
    reply.content.push_back(llm::text_block{"hello"});
    reply.content.push_back(llm::provider_block{"server_tool_use", "{}"});
    reply.content.push_back(llm::tool_use_block{"toolu_1", "stream_ls", R"({"a": 1})", std::nullopt});
    auto blocks = rules::response_events(reply, "anthropic");
    REQUIRE(blocks.size() == 3);
    CHECK(std::get<a2a::thinking_block>(blocks[0]) == a2a::thinking_block{"hmm", "sig", "anthropic"});
    CHECK(std::get<a2a::text_block>(blocks[1]).text == "hello");
    auto call = std::get<a2a::tool_call_block>(blocks[2]);
    CHECK(call.id == "toolu_1");
    REQUIRE(call.input);
    CHECK(call.input->text() == R"({"a":1})");

    auto st = rules::status_event(2, "calling-llm", llm::usage{1, 2, 3, 4});
    CHECK(st.iteration == 2);
    CHECK(st.phase == "calling-llm");
    CHECK(st.usage == a2a::usage{8, 2});

    agent::tool_result_trace t;
    t.call_id = "toolu_1";
    t.output = "out";
    t.is_error = true;
    auto tr = rules::tool_result_event(t);
    CHECK(tr.call_id == "toolu_1");
    CHECK(tr.is_error);
    CHECK(tr.output == "out");
    CHECK_FALSE(tr.exec);

    // A command that ran (locally or on a peer) is reported with what ran and how it ended.
    t.is_error = false;
    t.exec = agent::exec_info{"stream info ORDERS", 1, true};
    auto ran = rules::tool_result_event(t);
    REQUIRE(ran.exec);
    CHECK(ran.exec->command == "stream info ORDERS");
    CHECK(ran.exec->exit_code == 1);
    CHECK(ran.exec->truncated);
}

TEST_CASE("questions: window floor, sanitizing and the approval shape", "[serve][a2a]") {
    CHECK(rules::question_window(10s, 30s) == 30s);
    CHECK(rules::question_window(5min, 30s) == 5min);
    CHECK(rules::sanitize("a\x01"
                          "b\tc",
                          10) == "a b c");
    CHECK(rules::sanitize("héllo wörld", 4) == "héll");

    toolkit::approval_request ar{"stream_rm", "stream rm ORDERS", "ai:confirm", "toolu_4"};
    auto q = rules::approval_question(ar, "Q1", 5min);
    CHECK(q.kind == "approval");
    CHECK(q.question == R"(confirmation required: "stream_rm" carries tag "ai:confirm")");
    CHECK(q.tool == "stream_rm");
    CHECK(q.command == "stream rm ORDERS");
    CHECK(q.tag == "ai:confirm");
    CHECK(q.call_id == "toolu_4");
    CHECK(q.window == "5m0s");
    a2a::stamp_request(q, "svc", "caller");
    CHECK(a2a::encode(q).has_value());

    toolkit::question tq;
    tq.what = toolkit::question::kind::select;
    tq.text = "which?";
    tq.options = {"a", "b"};
    auto sq = rules::tool_question(tq, "Q2", 30s);
    CHECK(sq.kind == "select");
    CHECK(sq.options.size() == 2);
    CHECK(sq.window == "30s");
}

// ---- the caller-to-worker arrival filter (a2a_nats::inbound_filter, §6.5) ----

namespace {

template <class M>
std::string inbound_body(M m, std::uint64_t seq, std::string task = "T1", std::string sender = "caller-1") {
    a2a::stamp_request(m, sender, "svc");
    m.request = std::move(task);
    m.sequence = seq;
    auto body = a2a::encode(m);
    REQUIRE(body.has_value());
    return *body;
}

}  // namespace

TEST_CASE("inbound_filter: in order, duplicates, gaps, strangers and the wrong subject", "[serve][a2a]") {
    a2a_nats::inbound_filter f("T1", "caller-1");
    using a2a::task_route;
    auto v1 = f.receive(task_route::elicit, inbound_body(a2a::task_keepalive{}, 1));
    REQUIRE(v1.accepted);
    CHECK(v1.warning.empty());
    // A repeat is ignored.
    auto dup = f.receive(task_route::elicit, inbound_body(a2a::task_keepalive{}, 1));
    CHECK_FALSE(dup.accepted);
    CHECK(dup.why == "duplicate message 1 of task T1");
    // A gap is let through with the WARN text.
    auto gap = f.receive(task_route::cancel, inbound_body(a2a::task_cancel{}, 4));
    REQUIRE(gap.accepted);
    CHECK(gap.warning == "gap in task T1 from caller-1: expected 2, got 4");
    // Another task's, another sender's, the wrong kind for the subject, garbage: dropped.
    CHECK_FALSE(f.receive(task_route::elicit, inbound_body(a2a::task_keepalive{}, 5, "T2")).accepted);
    CHECK_FALSE(f.receive(task_route::elicit, inbound_body(a2a::task_keepalive{}, 5, "T1", "mallory")).accepted);
    auto wrong = f.receive(task_route::cancel, inbound_body(a2a::task_keepalive{}, 5));
    CHECK_FALSE(wrong.accepted);
    CHECK(wrong.why.find("protocol mismatch") != std::string::npos);
    CHECK_FALSE(f.receive(task_route::elicit, R"({"protocol":"io.choria.fisk-ai.v1.nope"})").accepted);
    CHECK_FALSE(f.receive(task_route::elicit, std::string(a2a::max_message_size + 1, ' ')).accepted);
    CHECK_FALSE(f.receive(task_route::elicit, "{").accepted);
    // Still in order after the drops.
    CHECK(f.receive(task_route::elicit, inbound_body(a2a::task_keepalive{}, 5)).accepted);
}

TEST_CASE("held_approvals: taken once, expire after the TTL, bounded", "[serve][a2a]") {
    const auto t0 = std::chrono::steady_clock::now();
    rules::held_approvals held(2, std::chrono::hours(24));
    held.hold("s1", "c1", toolkit::approval::allow_once, t0);
    CHECK(held.take("s1", "c2", t0) == std::nullopt);
    CHECK(held.take("s2", "c1", t0) == std::nullopt);
    CHECK(held.take("s1", "c1", t0) == toolkit::approval::allow_once);
    CHECK(held.take("s1", "c1", t0) == std::nullopt);  // once

    held.hold("s1", "c1", toolkit::approval::allow_for_run, t0);
    CHECK(held.take("s1", "c1", t0 + std::chrono::hours(25)) == std::nullopt);  // expired
    CHECK(held.size() == 0);

    held.hold("a", "1", toolkit::approval::deny, t0);
    held.hold("b", "1", toolkit::approval::deny, t0 + 1s);
    held.hold("c", "1", toolkit::approval::allow_once, t0 + 2s);  // the oldest goes
    CHECK(held.size() == 2);
    CHECK(held.take("a", "1", t0 + 3s) == std::nullopt);
    CHECK(held.take("c", "1", t0 + 3s) == toolkit::approval::allow_once);
}

TEST_CASE("answerable: a reply subject with a wildcard or an empty token is not answered", "[serve][a2a]") {
    for (const auto* ok : {"_INBOX.abc123", "_INBOX.a.b", "x", "reply-to.caller_1"}) {
        INFO(ok);
        CHECK(rules::answerable(ok));
    }
    for (const auto* bad :
         {"", ">", "*", "_INBOX.*", "_INBOX.>", "foo.*.bar", "a..b", ".a", "a.", "a b", "a\tb", "a\x7f"}) {
        INFO(bad);
        CHECK_FALSE(rules::answerable(bad));
    }
}
