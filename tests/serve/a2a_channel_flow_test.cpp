// The reply set of the a2a channel over a real nats-server (serve.md §6.4, §6.6, §6.10):
// the normal streaming run, cancel, keepalives, stream:false, the size cap.
#include "a2a_channel_support.hpp"

#include <fiskai/a2a/protocol.hpp>

#include <fmt/format.h>

#include <thread>

using namespace a2a_channel_test;
namespace llm = fiskai::llm;
namespace agent = fiskai::agent;

TEST_CASE("a2a channel: the normal run with streaming, message by message (§6.10)", "[serve][a2a][nats]") {
    env e;
    auto ch = e.channel(e.options());
    CHECK(ch->description() == "a2a: requests on choria.fisk-ai.request.svc (queue group svc), elicitation off");
    raw_caller caller(*e.caller_conn, "svc");
    auto req = caller.task("T1");
    req.context = "cluster east";
    req.tool_hints = {"stream_ls"};
    req.budget = a2a::budget{1000, 3, "45s"};
    caller.send(req);

    auto w = e.take(*ch);
    const auto session = serve::a2a_session_id("svc", "caller-1", "T1");
    CHECK(w->session_id == session);
    CHECK(w->prompt ==
          "list the streams\n\n<context>\ncluster east\n</context>\n\nThe caller suggests these tools: stream_ls.");
    CHECK_FALSE(w->follow_up);
    CHECK(w->from.name == "caller-1");
    CHECK(w->limits.max_tokens == 1000);
    CHECK(w->limits.max_iterations == 3);
    CHECK(w->limits.call_timeout == 45s);
    CHECK(w->prompter == nullptr);  // elicitation off: default-deny
    CHECK(w->label == "a2a request T1 from caller-1");

    // The ack is already out when next() returns.
    REQUIRE(e.wait_count(caller, 1));
    auto ack = caller.at_as<a2a::task_ack>(0);
    CHECK(ack.accepted);
    CHECK(ack.sequence == 1);

    auto hooks = w->run_context();
    REQUIRE(hooks.events);
    REQUIRE(hooks.stop);
    CHECK_FALSE(hooks.stop->closed());
    hooks.events->status(1, "calling-llm", llm::usage{});
    llm::response first;
    first.content.push_back(llm::text_block{"looking"});
    first.content.push_back(llm::tool_use_block{"toolu_1", "stream_ls", "{}", std::nullopt});
    hooks.events->message(first, false);
    hooks.events->status(1, "executing-tool", llm::usage{10, 5, 0, 0});
    agent::tool_result_trace tr;
    tr.call_id = "toolu_1";
    tr.name = "stream_ls";
    tr.output = "ORDERS\n";
    hooks.events->tool_result(tr);
    hooks.events->status(2, "calling-llm", llm::usage{10, 5, 0, 0});
    llm::response second;
    second.content.push_back(llm::text_block{"one stream: ORDERS"});
    hooks.events->message(second, true);
    auto o = completed("one stream: ORDERS");
    o.counters.tokens = llm::usage{20, 9, 0, 0};
    e.done(*w, o);

    REQUIRE(e.wait_count(caller, 9));
    check_reply_set(caller, "T1", session);
    auto s1 = std::get<a2a::status_block>(caller.at_as<a2a::task_event>(1).block);
    CHECK(s1.iteration == 1);
    CHECK(s1.phase == "calling-llm");
    CHECK(std::get<a2a::text_block>(caller.at_as<a2a::task_event>(2).block).text == "looking");
    CHECK(std::get<a2a::tool_call_block>(caller.at_as<a2a::task_event>(3).block).name == "stream_ls");
    CHECK(std::get<a2a::status_block>(caller.at_as<a2a::task_event>(4).block).phase == "executing-tool");
    CHECK(std::get<a2a::tool_result_block>(caller.at_as<a2a::task_event>(5).block).output == "ORDERS\n");
    CHECK(std::get<a2a::status_block>(caller.at_as<a2a::task_event>(6).block).iteration == 2);
    CHECK(std::get<a2a::text_block>(caller.at_as<a2a::task_event>(7).block).text == "one stream: ORDERS");
    auto result = caller.at_as<a2a::task_result>(8);
    CHECK(result.stop_reason == "end_turn");
    CHECK(result.text == "one stream: ORDERS");
    CHECK(result.usage == a2a::usage{20, 9});

    // Nothing after the terminal: the cancel subject is closed, so a cancel changes nothing.
    caller.cancel();
    a2a_test::run_until(
        e.ioc, [] { return false; }, 300ms);
    CHECK(caller.count() == 9);
    ch->release();
}

TEST_CASE("a2a channel: a cancel mid-run closes the stop gate and the run ends suspended (§6.6)",
          "[serve][a2a][nats]") {
    env e;
    auto ch = e.channel(e.options());
    raw_caller caller(*e.caller_conn, "svc");
    caller.send(caller.task("T2"));
    auto w = e.take(*ch);
    auto hooks = w->run_context();
    hooks.events->status(1, "calling-llm", llm::usage{});
    REQUIRE(e.wait_count(caller, 2));
    caller.cancel();
    REQUIRE(run_until(e.ioc, [&] { return hooks.stop->closed(); }));
    REQUIRE(e.wait_count(caller, 3));
    auto stopping = std::get<a2a::status_block>(caller.at_as<a2a::task_event>(2).block);
    CHECK(stopping.phase == "stopping");
    // A second cancel is a no-op.
    caller.cancel();
    serve::outcome o;
    o.reason = "suspended";
    o.text = "partial";
    e.done(*w, o);
    REQUIRE(e.wait_count(caller, 4));
    check_reply_set(caller, "T2", w->session_id);
    auto r = caller.at_as<a2a::task_result>(3);
    CHECK(r.stop_reason == "suspended");
    CHECK(r.conversation == serve::a2a_session_id("svc", "caller-1", "T2"));
    ch->release();
}

TEST_CASE("a2a channel: a cancel before the run started is kept", "[serve][a2a][nats]") {
    env e;
    auto ch = e.channel(e.options());
    raw_caller caller(*e.caller_conn, "svc");
    caller.send(caller.task("T3"));
    auto w = e.take(*ch);
    caller.cancel();
    REQUIRE(e.wait_count(caller, 2));  // ack, status stopping
    auto hooks = w->run_context();
    CHECK(hooks.stop->closed());
    CHECK(std::get<a2a::status_block>(caller.at_as<a2a::task_event>(1).block).phase == "stopping");
    serve::outcome o;
    o.reason = "suspended";
    e.done(*w, o);
    REQUIRE(e.wait_count(caller, 3));
    check_reply_set(caller, "T3", w->session_id);
    ch->release();
}

TEST_CASE("a2a channel: a cancel published the moment the ack arrives is honoured", "[serve][a2a][nats]") {
    env e;
    auto ch = e.channel(e.options());
    raw_caller caller(*e.caller_conn, "svc");
    caller.cancel_on_ack();
    caller.send(caller.task("T4"));
    auto w = e.take(*ch);
    auto hooks = w->run_context();
    REQUIRE(run_until(e.ioc, [&] { return hooks.stop->closed(); }));
    serve::outcome o;
    o.reason = "suspended";
    e.done(*w, o);
    REQUIRE(e.wait_count(caller, 3));
    check_reply_set(caller, "T4", w->session_id);
    ch->release();
}

TEST_CASE("a2a channel: a cancel that lands while the task is being admitted follows the ack", "[serve][a2a][nats]") {
    env e;
    auto ch = e.channel(e.options());
    // The worker subscribes the task's cancel subject, confirms the subscription with a
    // round trip, then acks: a cancel can land in between. Cancels published over and over,
    // from before the request until a reply comes, land there in most rounds.
    for (int round = 0; round < 30; ++round) {
        raw_caller caller(*e.caller_conn, "svc");
        const auto task = fmt::format("T-early-{}", round);
        a2a::task_cancel c;
        a2a::stamp_request(c, "caller-1", "svc");
        c.request = task;
        c.conversation = task;
        c.sequence = 1;
        c.reason = "at once";
        const auto body = a2a::encode(c);
        REQUIRE(body.has_value());
        std::atomic<bool> replied{false};
        std::thread flood([&] {
            const auto subject = "choria.fisk-ai.cancel.svc." + task;
            while (!replied) {
                natsConnection_Publish(e.caller_conn->native_handle(), subject.c_str(), body->data(),
                                       static_cast<int>(body->size()));
                std::this_thread::sleep_for(20us);  // pacing the flood, not waiting for anything
            }
        });
        caller.send(caller.task(task));
        auto w = e.take(*ch);
        const bool got_reply = e.wait_count(caller, 1);
        replied = true;
        flood.join();
        REQUIRE(got_reply);
        INFO("round " << round);
        CHECK(caller.at_as<a2a::task_ack>(0).sequence == 1);
        // In a round where no cancel of the flood came after the subscription, this one does
        // (a repeat of sequence 1 otherwise, which the worker drops).
        caller.cancel("at once");
        auto hooks = w->run_context();
        REQUIRE(run_until(e.ioc, [&] { return hooks.stop->closed(); }));
        serve::outcome o;
        o.reason = "suspended";
        e.done(*w, o);
        REQUIRE(e.wait_count(caller, 3));  // ack, status stopping, the terminal
        check_reply_set(caller, task, w->session_id);
    }
    ch->release();
}

TEST_CASE("a2a channel: keepalives every interval of silence, from the ack to the terminal", "[serve][a2a][nats]") {
    env e;
    auto o = e.options();
    o.keepalive_interval = 200ms;
    auto ch = e.channel(o);
    raw_caller caller(*e.caller_conn, "svc");
    caller.send(caller.task("T5"));
    auto w = e.take(*ch);  // waiting for a slot: keepalives already flow
    REQUIRE(e.wait_count(caller, 3));
    auto hooks = w->run_context();
    REQUIRE(e.wait_count(caller, 5));
    hooks.events->status(1, "calling-llm", fiskai::llm::usage{});
    REQUIRE(e.wait_count(caller, 7));
    e.done(*w, completed());
    REQUIRE(run_until(e.ioc, [&] {
        auto n = caller.count();
        return std::holds_alternative<a2a::task_result>(caller.at(n - 1));
    }));
    const auto before = caller.count();
    run_until(
        e.ioc, [] { return false; }, 500ms);
    const auto msgs = caller.all();
    CHECK(msgs.size() == before);  // nothing after the terminal
    check_reply_set(caller, "T5", w->session_id);
    // Keepalives come after 200 ms of silence, not sooner; and not much later.
    for (std::size_t i = 1; i + 1 < msgs.size(); ++i) {
        auto m = caller.at(i);
        if (!std::holds_alternative<a2a::task_keepalive>(m)) continue;
        CHECK(std::get<a2a::task_keepalive>(m).question_id.empty());
        const auto gap = msgs[i].at - msgs[i - 1].at;
        CHECK(gap >= 150ms);
        CHECK(gap < 1500ms);
    }
    std::size_t keepalives = 0;
    for (std::size_t i = 0; i < msgs.size(); ++i)
        if (std::holds_alternative<a2a::task_keepalive>(caller.at(i))) ++keepalives;
    CHECK(keepalives >= 4);
    ch->release();
}

TEST_CASE("a2a channel: stream:false suppresses events, nothing else", "[serve][a2a][nats]") {
    env e;
    auto ch = e.channel(e.options());
    raw_caller caller(*e.caller_conn, "svc");
    auto req = caller.task("T6");
    req.stream = false;
    caller.send(req);
    auto w = e.take(*ch);
    auto hooks = w->run_context();
    hooks.events->status(1, "calling-llm", fiskai::llm::usage{});
    fiskai::llm::response r;
    r.content.push_back(fiskai::llm::text_block{"hi"});
    hooks.events->message(r, true);
    e.done(*w, completed("hi"));
    REQUIRE(e.wait_count(caller, 2));
    run_until(
        e.ioc, [] { return false; }, 200ms);
    REQUIRE(caller.count() == 2);
    check_reply_set(caller, "T6", w->session_id);
    CHECK(caller.at_as<a2a::task_result>(1).text == "hi");
    ch->release();
}

TEST_CASE("a2a channel: an oversized output is trimmed to fit, without a gap", "[serve][a2a][nats]") {
    env e;
    auto ch = e.channel(e.options());
    raw_caller caller(*e.caller_conn, "svc");
    caller.send(caller.task("T7"));
    auto w = e.take(*ch);
    auto hooks = w->run_context();
    agent::tool_result_trace tr;
    tr.call_id = "toolu_1";
    tr.output = std::string(a2a::max_message_size + 1000, 'x');
    hooks.events->tool_result(tr);
    e.done(*w, completed(std::string(a2a::max_message_size * 2, 'y')));
    REQUIRE(e.wait_count(caller, 3));
    check_reply_set(caller, "T7", w->session_id);
    for (const auto& m : caller.all()) CHECK(m.data.size() <= a2a::max_message_size);
    auto out = std::get<a2a::tool_result_block>(caller.at_as<a2a::task_event>(1).block).output;
    CHECK(out.find(a2a::trim_marker) != std::string::npos);
    CHECK(caller.at_as<a2a::task_result>(2).text.find(a2a::trim_marker) != std::string::npos);
    ch->release();
}

TEST_CASE("a2a channel: the terminal of each outcome kind reaches the caller", "[serve][a2a][nats]") {
    env e;
    auto ch = e.channel(e.options());
    raw_caller caller(*e.caller_conn, "svc");
    caller.send(caller.task("T8"));
    auto w = e.take(*ch);
    (void)w->run_context();
    serve::outcome o;
    o.reason = "suspended";
    o.interrupted = true;
    e.done(*w, o);
    REQUIRE(e.wait_count(caller, 2));
    auto err = caller.at_as<a2a::task_error>(1);
    CHECK(err.code == "interrupted");
    CHECK(err.stop_reason == "canceled");
    CHECK(err.error == "the worker stopped before the task finished; continue the task to resume it");
    ch->release();
}
