// a2a_nats::task_caller against a scripted worker on a real nats-server: the reply set in
// order, refusals, the two unavailable texts, the idle limit and its floor, gaps, repeats,
// invalid arrivals, continuation subjects, questions with keepalives, and cancel.

#include "fake_task_worker.hpp"
#include "nats_support.hpp"

#include <fiskai/a2a/validator.hpp>
#include <fiskai/a2a_nats/task_caller.hpp>

#include <atomic>
#include <mutex>
#include <thread>

template <typename T>
struct Catch::StringMaker<boost::system::result<T, fiskai::a2a_nats::task_problem>> {
    static std::string convert(const boost::system::result<T, fiskai::a2a_nats::task_problem>& r) {
        return r ? std::string("{value}") : "{error: " + r.error().message + "}";
    }
};

using namespace nats_test;
using a2a_nats::task_caller;
using a2a_nats::task_caller_options;
using a2a_nats::task_failure;
using task_test::fake_task_worker;
using task_test::inbound_message;
using task_test::task_run;

namespace {

// Warnings the caller logs, collected.
struct log_capture {
    std::shared_ptr<std::mutex> mutex = std::make_shared<std::mutex>();
    std::shared_ptr<std::vector<std::string>> lines = std::make_shared<std::vector<std::string>>();
    fiskai::gocompat::logger logger() {
        return
            [m = mutex, l = lines](fiskai::gocompat::log_level, std::string_view text, fiskai::gocompat::log_fields) {
                std::lock_guard lock(*m);
                l->emplace_back(text);
            };
    }
    bool contains(const std::string& s) {
        std::lock_guard lock(*mutex);
        for (const auto& l : *lines) {
            if (l.find(s) != std::string::npos) return true;
        }
        return false;
    }
};

task_caller_options caller_options(std::string prompt = "hello") {
    task_caller_options o;
    o.agent = "svc";
    o.self = "tester";
    o.prompt = std::move(prompt);
    o.accept_timeout = 10s;
    return o;
}

struct started {
    std::unique_ptr<task_caller> caller;
    a2a_nats::task_result<a2a::task_ack> ack;
};

started start(nats_env& env, task_caller_options o) {
    auto c = std::make_unique<task_caller>(*env.client_conn, env.ioc.get_executor(), std::move(o));
    auto ack = a2a_test::run(env.ioc, c->start(), 30s);
    return {std::move(c), std::move(ack)};
}

// Every arrival up to and including the terminal.
std::vector<a2a_nats::task_arrival> read_all(nats_env& env, task_caller& c) {
    std::vector<a2a_nats::task_arrival> out;
    for (;;) {
        auto a = a2a_test::run(env.ioc, c.next(), 30s);
        REQUIRE(a);
        out.push_back(std::move(*a));
        if (out.back().is_terminal()) return out;
    }
}

template <class T>
const T& as(const a2a_nats::task_arrival& a) {
    REQUIRE(std::holds_alternative<T>(a.message));
    return std::get<T>(a.message);
}

// A status reply (a micro service error) on the task's reply path, as an intake sends it.
void publish_service_error(task_run& t, const char* code, const char* text) {
    natsMsg* m = nullptr;
    natsMsg_Create(&m, t.reply_subject.c_str(), nullptr, "", 0);
    natsMsgHeader_Set(m, "Nats-Service-Error", text);
    natsMsgHeader_Set(m, "Nats-Service-Error-Code", code);
    natsConnection_PublishMsg(t.worker->connection().native_handle(), m);
    natsMsg_Destroy(m);
}

}  // namespace

TEST_CASE("task_caller delivers the reply set in order", "[task_caller][nats]") {
    nats_env env;
    fake_task_worker worker(*env.server_conn, "svc", [](task_run& t) {
        t.ack();
        t.event(a2a::status_block{1, "calling-llm", {}});
        t.send(a2a::task_keepalive{});
        t.event(a2a::text_block{"thinking about it"});
        t.event(a2a::tool_call_block{"toolu_1", "ls", a2a::raw_json::parse(R"({"path":"/"})").value()});
        t.event(a2a::tool_result_block{"toolu_1", false, "a b", std::nullopt});
        t.event(
            a2a::unknown_block::from_raw(a2a::raw_json::parse(R"({"type":"chart","points":[1,2]})").value()).value());
        t.result("paused_for_lunch", "done: a b");
    });
    auto s = start(env, caller_options("list /"));
    REQUIRE(s.ack);
    CHECK(s.ack->accepted);
    CHECK(s.ack->sequence == 1);
    const auto set = read_all(env, *s.caller);
    REQUIRE(set.size() == 7);
    for (std::size_t i = 0; i < set.size(); ++i) CHECK(a2a::header_of(set[i].message).sequence == i + 2);
    CHECK(std::get<a2a::status_block>(as<a2a::task_event>(set[0]).block).phase == "calling-llm");
    as<a2a::task_keepalive>(set[1]);
    CHECK(std::get<a2a::text_block>(as<a2a::task_event>(set[2]).block).text == "thinking about it");
    CHECK(std::get<a2a::tool_call_block>(as<a2a::task_event>(set[3]).block).name == "ls");
    // An unknown event kind and an unknown stop reason are carried, not refused.
    const auto& chart = std::get<a2a::unknown_block>(as<a2a::task_event>(set[5]).block);
    CHECK(chart.type() == "chart");
    CHECK(chart.raw().text() == R"({"type":"chart","points":[1,2]})");
    CHECK(as<a2a::task_result>(set[6]).text == "done: a b");
    CHECK(as<a2a::task_result>(set[6]).stop_reason == "paused_for_lunch");
    CHECK(set[6].body.find("\"done: a b\"") != std::string::npos);

    // The request went out stamped: a new task is its own id, prompt as given.
    const auto reqs = worker.requests();
    REQUIRE(reqs.size() == 1);
    CHECK(reqs[0].prompt == "list /");
    CHECK(reqs[0].id == reqs[0].request);
    CHECK(reqs[0].sender.name == "tester");
    CHECK(s.caller->task_id() == reqs[0].request);

    // The set is over after its terminal.
    auto after = a2a_test::run(env.ioc, s.caller->next());
    REQUIRE_FALSE(after);
    CHECK(after.error().kind == task_failure::closed);
}

TEST_CASE("task_caller: a refusal is a negative ack followed by a terminal error", "[task_caller][nats]") {
    nats_env env;
    const std::string reason = "the agent is shutting down and takes no new tasks; send it again";
    fake_task_worker worker(*env.server_conn, "svc", [&](task_run& t) {
        t.ack(false, reason);
        t.error("error", "shutting_down", reason);
    });
    auto s = start(env, caller_options());
    REQUIRE(s.ack);
    CHECK_FALSE(s.ack->accepted);
    CHECK(s.ack->reason == reason);
    auto next = a2a_test::run(env.ioc, s.caller->next());
    REQUIRE(next);
    CHECK(next->is_terminal());
    CHECK(as<a2a::task_error>(*next).code == "shutting_down");
}

TEST_CASE("task_caller: no responders and no ack have their exact texts", "[task_caller][nats]") {
    nats_env env;
    SECTION("nobody serves the agent") {
        auto s = start(env, caller_options());
        REQUIRE_FALSE(s.ack);
        CHECK(s.ack.error().kind == task_failure::unavailable);
        CHECK(s.ack.error().message ==
              "remote agent unavailable: no reply on \"choria.fisk-ai.request.svc\": nats: no responders available "
              "for request");
    }
    SECTION("a worker that never acks") {
        fake_task_worker worker(*env.server_conn, "svc", [](task_run&) {});
        auto o = caller_options();
        o.accept_timeout = 300ms;
        auto s = start(env, o);
        REQUIRE_FALSE(s.ack);
        CHECK(s.ack.error().kind == task_failure::unavailable);
        CHECK(s.ack.error().message ==
              "remote agent unavailable: no ack from \"svc\" within 300ms (no worker took the task)");
        CHECK(worker.requests().size() == 1);
    }
}

TEST_CASE("task_caller: the idle limit is floored and its expiry has the exact text", "[task_caller][nats]") {
    nats_env env;
    {
        auto o = caller_options();
        o.idle_timeout = 5s;
        task_caller c(*env.client_conn, env.ioc.get_executor(), o);
        CHECK(c.idle_timeout() == 30s);  // the default floor
        o.idle_timeout = 0s;
        task_caller d(*env.client_conn, env.ioc.get_executor(), o);
        CHECK(d.idle_timeout() == 30s);
        o.idle_timeout = 3min;
        task_caller e(*env.client_conn, env.ioc.get_executor(), o);
        CHECK(e.idle_timeout() == 3min);
    }
    fake_task_worker worker(*env.server_conn, "svc", [](task_run& t) {
        t.ack();
        t.event(a2a::status_block{1, "calling-llm", {}});
    });
    auto o = caller_options();
    o.idle_timeout = 1ms;
    o.idle_floor = 1s;
    auto s = start(env, o);
    REQUIRE(s.ack);
    CHECK(s.caller->idle_timeout() == 1s);
    auto first = a2a_test::run(env.ioc, s.caller->next());
    REQUIRE(first);
    const auto before = std::chrono::steady_clock::now();
    auto idle = a2a_test::run(env.ioc, s.caller->next());
    REQUIRE_FALSE(idle);
    CHECK(std::chrono::steady_clock::now() - before >= 700ms);  // the floor, not the 1ms asked for
    CHECK(idle.error().kind == task_failure::idle);
    CHECK(idle.error().message ==
          "no message from \"svc\" for 1s; the task may still be running (wait, then "
          "continue it with --continue " +
              s.caller->task_id() + ")");
}

TEST_CASE("task_caller: gaps are warned, repeats ignored, invalid arrivals dropped", "[task_caller][nats]") {
    nats_env env;
    log_capture log;
    fake_task_worker worker(*env.server_conn, "svc", [](task_run& t) {
        t.ack();
        t.event(a2a::text_block{"one"});                            // 2
        t.event(a2a::text_block{"one again"}, 2);                   // a repeat of 2
        t.send_raw("{not json");                                    // invalid
        t.send_raw(R"({"protocol":"io.choria.fisk-ai.v1.nope"})");  // unknown protocol
        a2a::task_event other;
        other.block = a2a::text_block{"for another task"};
        a2a::header req = t.request;
        req.request = "another-task";
        a2a::stamp_task_reply(other, req, "svc", "s", 3);
        t.send_raw(a2a::encode(other).value());  // request mismatch
        a2a::tool_request wrong;
        a2a::stamp_task_reply(wrong, t.request, "svc", "s", 3);
        wrong.name = "x";
        t.send_raw(a2a::encode(wrong).value());  // not a reply-set message
        t.event(a2a::text_block{"four"}, 4);     // gap: 3 is missing
        t.next_sequence = 5;
        t.result("end_turn", "ok");
    });
    auto o = caller_options();
    o.log = log.logger();
    auto s = start(env, o);
    REQUIRE(s.ack);
    const auto set = read_all(env, *s.caller);
    REQUIRE(set.size() == 3);
    CHECK(std::get<a2a::text_block>(as<a2a::task_event>(set[0]).block).text == "one");
    CHECK(std::get<a2a::text_block>(as<a2a::task_event>(set[1]).block).text == "four");
    CHECK(as<a2a::task_result>(set[2]).text == "ok");
    const auto& r = s.caller->task_id();
    CHECK(log.contains("gap in the reply set of " + r + ": expected 3, got 4"));
    CHECK(log.contains("dropping a message in the reply set of " + r + ": invalid JSON"));
    CHECK(log.contains("unknown protocol"));
    CHECK(log.contains("it answers request \"another-task\""));
    CHECK(log.contains("protocol io.choria.fisk-ai.v1.tool.request does not belong in it"));
}

TEST_CASE("task_caller: a continuation has a fresh id and its own cancel subject", "[task_caller][nats]") {
    nats_env env;
    fake_task_worker worker(*env.server_conn, "svc", [](task_run& t) {
        t.ack();
        auto cancel =
            t.wait_for([](const inbound_message& m) { return m.subject.find(".cancel.") != std::string::npos; });
        if (cancel) t.result("suspended", "stopped");
    });
    auto o = caller_options();
    o.continue_task = "task-1";
    auto s = start(env, o);
    REQUIRE(s.ack);
    const auto reqs = worker.requests();
    REQUIRE(reqs.size() == 1);
    CHECK(reqs[0].request == "task-1");
    CHECK(reqs[0].id != "task-1");
    CHECK(s.caller->task_id() == "task-1");

    REQUIRE(s.caller->cancel("interrupted at the terminal"));
    auto result = a2a_test::run(env.ioc, s.caller->next());
    REQUIRE(result);
    CHECK(as<a2a::task_result>(*result).stop_reason == "suspended");
    const auto in = worker.inbound();
    REQUIRE(in.size() == 1);
    CHECK(in[0].subject == "choria.fisk-ai.cancel.svc." + reqs[0].id);
    auto cancel = a2a::default_validator().check_as<a2a::task_cancel>(in[0].body);
    REQUIRE(cancel);
    CHECK(cancel->sequence == 1);
    CHECK(cancel->request == "task-1");
    CHECK(cancel->sender.name == "tester");
    CHECK(cancel->reason == "interrupted at the terminal");
}

TEST_CASE("task_caller: a question held open sends keepalives, then the answer", "[task_caller][nats]") {
    nats_env env;
    fake_task_worker worker(*env.server_conn, "svc", [](task_run& t) {
        t.ack();
        t.event(a2a::status_block{1, "waiting-for-answer", {}});
        a2a::task_question q;
        q.question_id = "Q1";
        q.kind = "confirm";
        q.question = "Delete stream ORDERS?";
        q.call_id = "toolu_3";
        q.window = "5m0s";
        t.send(std::move(q));
        auto answer = t.wait_for(
            [](const inbound_message& m) { return m.body.find("io.choria.fisk-ai.v1.answer") != std::string::npos; });
        if (!answer) return;
        t.event(a2a::tool_result_block{"toolu_3", false, R"({"confirmed":true})", std::nullopt});
        t.result("end_turn", "deleted");
    });
    auto o = caller_options();
    o.keepalive_interval = 50ms;
    auto s = start(env, o);
    REQUIRE(s.ack);
    auto status = a2a_test::run(env.ioc, s.caller->next());
    REQUIRE(status);
    auto question = a2a_test::run(env.ioc, s.caller->next());
    REQUIRE(question);
    CHECK(as<a2a::task_question>(*question).question == "Delete stream ORDERS?");
    CHECK(s.caller->open_question() == "Q1");

    s.caller->hold_question("Q1");
    auto keepalives = [&] {
        std::size_t n = 0;
        for (const auto& m : worker.inbound()) n += m.body.find("v1.keepalive") != std::string::npos;
        return n;
    };
    REQUIRE(run_until(env.ioc, [&] { return keepalives() >= 2; }));
    const auto in = worker.inbound();
    auto k1 = a2a::default_validator().check_as<a2a::task_keepalive>(in[0].body);
    REQUIRE(k1);
    CHECK(k1->question_id == "Q1");
    CHECK(k1->sequence == 1);
    CHECK(in[0].subject == "choria.fisk-ai.elicit.svc." + s.caller->task_id());

    a2a::task_answer answer;
    answer.question_id = "Q1";
    answer.confirmed = true;
    REQUIRE(s.caller->answer(answer));

    auto tool_result = a2a_test::run(env.ioc, s.caller->next());
    REQUIRE(tool_result);
    CHECK(tool_result->closed_question == "Q1");
    CHECK(s.caller->open_question().empty());
    auto result = a2a_test::run(env.ioc, s.caller->next());
    REQUIRE(result);
    CHECK(as<a2a::task_result>(*result).text == "deleted");

    // The answer: schema-valid, numbered after the keepalives, and no keepalive after it.
    // (The worker has the answer, so everything sent before it has arrived.)
    const auto all = worker.inbound();
    const auto sent_keepalives = keepalives();
    REQUIRE(all.size() == sent_keepalives + 1);
    auto a = a2a::default_validator().check_as<a2a::task_answer>(all.back().body);
    REQUIRE(a);
    CHECK(a->question_id == "Q1");
    CHECK(a->confirmed == std::optional<bool>(true));
    CHECK(a->sequence == sent_keepalives + 1);
    // No keepalive follows the answer.
    REQUIRE(run_until(
                env.ioc, [] { return false; }, 200ms) == false);
    CHECK(worker.inbound().size() == all.size());
    CHECK(a->request == s.caller->task_id());
    CHECK(all.back().body.find(R"("question_id":"Q1","confirmed":true)") != std::string::npos);
}

TEST_CASE("task_caller: a question closes on the first later message that is not its keepalive",
          "[task_caller][nats]") {
    nats_env env;
    fake_task_worker worker(*env.server_conn, "svc", [](task_run& t) {
        t.ack();
        a2a::task_question q;
        q.question_id = "Q2";
        q.kind = "input";
        q.question = "Name?";
        q.window = "30s";
        t.send(std::move(q));
        a2a::task_keepalive k;
        k.question_id = "Q2";
        t.send(std::move(k));
        t.result("end_turn", "gave up");
    });
    auto s = start(env, caller_options());
    REQUIRE(s.ack);
    const auto set = read_all(env, *s.caller);
    REQUIRE(set.size() == 3);
    CHECK(set[1].closed_question.empty());
    CHECK(set[2].closed_question == "Q2");
}

TEST_CASE("task_caller: an outgoing message the worker would refuse is refused here", "[task_caller][nats]") {
    nats_env env;
    auto o = caller_options();
    o.continue_task = "not a task id";
    auto s = start(env, o);
    REQUIRE_FALSE(s.ack);
    CHECK(s.ack.error().kind == task_failure::invalid_outgoing);
    CHECK(s.ack.error().message.rfind("invalid outgoing request: ", 0) == 0);
    o = caller_options();
    o.self = "bad identity";
    auto t = start(env, o);
    REQUIRE_FALSE(t.ack);
    CHECK(t.ack.error().kind == task_failure::invalid_outgoing);
}

TEST_CASE("task_caller: a service error from the intake ends start() with its text", "[task_caller][nats]") {
    nats_env env;
    fake_task_worker worker(*env.server_conn, "svc",
                            [](task_run& t) { publish_service_error(t, "400", "invalid message: schema violation"); });
    auto s = start(env, caller_options());
    REQUIRE_FALSE(s.ack);
    CHECK(s.ack.error().kind == task_failure::transport);
    CHECK(s.ack.error().message == "remote agent answered with an error: 400 invalid message: schema violation");
}

// A worker (or anyone who learnt the inbox) sending only what the caller drops: the idle
// limit still runs from the last message taken into the set, so it cannot be held open.
TEST_CASE("task_caller: messages that are dropped do not hold the idle limit open", "[task_caller][nats]") {
    nats_env env;
    auto stop = std::make_shared<std::atomic<bool>>(false);
    fake_task_worker worker(*env.server_conn, "svc", [stop](task_run& t) {
        t.ack();
        for (int i = 0; i < 60 && !*stop; ++i) {
            t.send_raw("{not json");
            t.event(a2a::text_block{"a repeat"}, 1);  // sequence 1 again: ignored
            std::this_thread::sleep_for(100ms);
        }
    });
    auto o = caller_options();
    o.idle_timeout = 1ms;
    o.idle_floor = 1s;
    auto s = start(env, o);
    REQUIRE(s.ack);
    const auto before = std::chrono::steady_clock::now();
    auto idle = a2a_test::run(env.ioc, s.caller->next(), 30s);
    const auto waited = std::chrono::steady_clock::now() - before;
    *stop = true;
    REQUIRE_FALSE(idle);
    CHECK(idle.error().kind == task_failure::idle);
    // The floor (1 s) after the ack, not the 6 s the dropped traffic lasts.
    CHECK(waited < 4s);
}

// A worker that breaks the flow: the task's end before any ack is said at once (not after
// the accept timeout, as "no worker took the task"), and a status reply after the ack
// cannot undo the ack.
TEST_CASE("task_caller: a terminal before the ack fails start() at once, a status reply after it is ignored",
          "[task_caller][nats]") {
    nats_env env;
    SECTION("the terminal error first") {
        fake_task_worker worker(*env.server_conn, "svc", [](task_run& t) {
            t.error("error", "broken", "nothing to see");
            t.ack();
        });
        auto o = caller_options();
        o.accept_timeout = 60s;
        const auto began = std::chrono::steady_clock::now();
        auto s = start(env, std::move(o));
        REQUIRE_FALSE(s.ack);
        CHECK(std::chrono::steady_clock::now() - began < 30s);
        CHECK(s.ack.error().kind == task_failure::transport);
        CHECK(s.ack.error().message ==
              "remote agent \"svc\" ended the task before acknowledging it (error: nothing to see); the worker does "
              "not follow the task flow");
    }
    SECTION("a 503 after the ack") {
        fake_task_worker worker(*env.server_conn, "svc", [](task_run& t) {
            t.ack();
            publish_service_error(t, "503", "busy");
            t.result("end_turn", "done anyway");
        });
        auto s = start(env, caller_options());
        REQUIRE(s.ack);
        CHECK(s.ack->accepted);
        const auto set = read_all(env, *s.caller);
        REQUIRE(set.size() == 1);
        CHECK(as<a2a::task_result>(set[0]).text == "done anyway");
    }
}

TEST_CASE("task_caller: a cancel before the ack is held and sent once the task is accepted", "[task_caller][nats]") {
    nats_env env;
    std::atomic<bool> cancel_before_ack{false};
    fake_task_worker worker(*env.server_conn, "svc", [&cancel_before_ack](task_run& t) {
        const auto is_cancel = [](const inbound_message& m) { return m.subject.find(".cancel.") != std::string::npos; };
        // A worker subscribes the task's cancel subject only as it admits the task: a cancel
        // published before its ack reaches nobody. This one listens early to see it.
        if (t.wait_for(is_cancel, 1500ms)) cancel_before_ack = true;
        t.ack();
        if (t.wait_for(is_cancel)) t.result("suspended", "stopped");
    });
    task_caller caller(*env.client_conn, env.ioc.get_executor(), caller_options());
    // The Ctrl-C comes while the caller still waits for the ack.
    std::optional<a2a_nats::task_result<void>> cancelled;
    boost::asio::steady_timer soon(env.ioc, 200ms);
    soon.async_wait([&](const boost::system::error_code&) { cancelled = caller.cancel("interrupted before the ack"); });
    auto ack = a2a_test::run(env.ioc, caller.start(), 30s);
    REQUIRE(ack);
    CHECK(ack->accepted);
    REQUIRE(cancelled);
    CHECK(cancelled->has_value());
    CHECK_FALSE(cancel_before_ack);

    const auto set = read_all(env, caller);
    REQUIRE(set.size() == 1);
    CHECK(as<a2a::task_result>(set[0]).stop_reason == "suspended");
    const auto in = worker.inbound();
    REQUIRE(in.size() == 1);
    auto cancel = a2a::default_validator().check_as<a2a::task_cancel>(in[0].body);
    REQUIRE(cancel);
    CHECK(cancel->sequence == 1);
    CHECK(cancel->reason == "interrupted before the ack");
}

TEST_CASE("task_caller: status replies after the ack do not hold the idle limit open", "[task_caller][nats]") {
    nats_env env;
    fake_task_worker worker(*env.server_conn, "svc", [](task_run& t) {
        t.ack();
        for (int i = 0; i < 15; ++i) {
            publish_service_error(t, "503", "busy");
            std::this_thread::sleep_for(200ms);  // the traffic itself, not a wait for a condition
        }
    });
    auto o = caller_options();
    o.idle_timeout = 1s;
    o.idle_floor = 1s;
    auto s = start(env, o);
    REQUIRE(s.ack);
    const auto before = std::chrono::steady_clock::now();
    auto idle = a2a_test::run(env.ioc, s.caller->next());
    REQUIRE_FALSE(idle);
    CHECK(idle.error().kind == task_failure::idle);
    // 3 s of 503s come after the ack; each restarted the limit before.
    CHECK(std::chrono::steady_clock::now() - before < 2500ms);
}
