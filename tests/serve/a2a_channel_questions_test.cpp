// Questions over the a2a channel against a real nats-server (serve.md §6.7, §6.10,
// Amendment 2): status then question, answers, keepalives that restart the window,
// silence, the stop gate, answers that do not fit, and late approvals held for the
// continuation.
#include "a2a_channel_support.hpp"

#include <fiskai/runstate/file_store.hpp>
#include <fiskai/runstate/store.hpp>

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/thread_pool.hpp>

#include <filesystem>

using namespace a2a_channel_test;

namespace {

toolkit::question confirm(std::string text = "Delete stream ORDERS?") {
    toolkit::question q;
    q.what = toolkit::question::kind::confirm;
    q.text = std::move(text);
    q.call_id = "toolu_3";
    q.tool_name = "ask_human_confirm";
    return q;
}

toolkit::approval_request approval() { return {"stream_rm", "stream rm ORDERS", "ai:confirm", "toolu_4"}; }

// The index of the first message of type T at or after `from`, waiting for it.
template <class T>
std::size_t wait_for(env& e, const raw_caller& c, std::size_t from = 0) {
    std::size_t found = SIZE_MAX;
    const bool ok = run_until(e.ioc, [&] {
        const auto n = c.count();
        for (std::size_t i = from; i < n; ++i) {
            if (std::holds_alternative<T>(c.at(i))) {
                found = i;
                return true;
            }
        }
        return false;
    });
    REQUIRE(ok);
    return found;
}

a2a::task_answer answer_for(const std::string& q) {
    a2a::task_answer a;
    a.question_id = q;
    return a;
}

}  // namespace

TEST_CASE("a2a questions: status waiting-for-answer, then the question, the answer is delivered",
          "[serve][a2a][nats]") {
    env e;
    auto ch = e.channel(e.options(true));
    CHECK(ch->description() == "a2a: requests on choria.fisk-ai.request.svc (queue group svc), elicitation on");
    raw_caller caller(*e.caller_conn, "svc");
    caller.send(caller.task("Q1"));
    auto w = e.take(*ch);
    REQUIRE(w->prompter);
    CHECK(w->prompter->can_prompt());
    auto hooks = w->run_context();
    hooks.events->status(1, "executing-tool", fiskai::llm::usage{});

    auto reply = a2a_test::start(e.ioc, w->prompter->ask(confirm()));
    const auto qi = wait_for<a2a::task_question>(e, caller);
    auto status = std::get<a2a::status_block>(caller.at_as<a2a::task_event>(qi - 1).block);
    CHECK(status.phase == "waiting-for-answer");  // Amendment 2: before the question
    auto q = caller.at_as<a2a::task_question>(qi);
    CHECK(q.kind == "confirm");
    CHECK(q.question == "Delete stream ORDERS?");
    CHECK(q.call_id == "toolu_3");
    CHECK(q.window == "5m0s");
    CHECK(q.sequence == qi + 1);

    caller.keepalive(q.question_id);
    caller.keepalive(q.question_id);
    caller.skip(2);
    caller.keepalive(q.question_id);
    REQUIRE(run_until(e.ioc, [&] { return e.log.has("gap in task Q1 from caller-1: expected 3, got 5"); }));
    auto a = answer_for(q.question_id);
    a.confirmed = true;
    caller.answer(a);
    REQUIRE(run_until(e.ioc, [&] { return reply->has_value(); }));
    CHECK((*reply)->status == toolkit::reply_status::answered);
    CHECK((*reply)->confirmed);
    CHECK((*reply)->question_id == q.question_id);

    // A second answer changes nothing.
    a.confirmed = false;
    caller.answer(a);
    e.done(*w, completed());
    REQUIRE(run_until(e.ioc, [&] { return std::holds_alternative<a2a::task_result>(caller.at(caller.count() - 1)); }));
    check_reply_set(caller, "Q1", w->session_id);
    ch->release();
}

TEST_CASE("a2a questions: keepalives naming the question restart its window, silence gives it up",
          "[serve][a2a][nats]") {
    env e;
    auto o = e.options(true);
    o.question_timeout = 400ms;
    o.question_timeout_floor = 100ms;
    o.keepalive_interval = 150ms;
    auto ch = e.channel(o);
    raw_caller caller(*e.caller_conn, "svc");
    caller.send(caller.task("Q2"));
    auto w = e.take(*ch);
    (void)w->run_context();
    const auto asked = std::chrono::steady_clock::now();
    auto reply = a2a_test::start(e.ioc, w->prompter->ask(confirm()));
    const auto qi = wait_for<a2a::task_question>(e, caller);
    const auto q = caller.at_as<a2a::task_question>(qi);
    CHECK(q.window == "400ms");
    // 1.2 s of keepalives, three window lengths: the question stays open throughout.
    while (std::chrono::steady_clock::now() - asked < 1200ms) {
        caller.keepalive(q.question_id);
        run_until(
            e.ioc, [] { return false; }, 150ms);
        REQUIRE_FALSE(reply->has_value());
    }
    const auto stopped = std::chrono::steady_clock::now();
    REQUIRE(run_until(e.ioc, [&] { return reply->has_value(); }));
    const auto gave_up_after = std::chrono::steady_clock::now() - stopped;
    CHECK(gave_up_after >= 200ms);
    CHECK(gave_up_after < 2s);
    CHECK((*reply)->status == toolkit::reply_status::silent);
    CHECK((*reply)->question_id == q.question_id);
    // While it was open, the worker's keepalives named it.
    std::size_t named = 0;
    for (std::size_t i = qi + 1; i < caller.count(); ++i) {
        auto m = caller.at(i);
        if (auto* k = std::get_if<a2a::task_keepalive>(&m); k && !k->question_id.empty()) {
            CHECK(k->question_id == q.question_id);
            ++named;
        }
    }
    CHECK(named >= 1);
    ch->release();
}

TEST_CASE("a2a questions: an unanswered approval is silent (the gate aborts), a late answer is held",
          "[serve][a2a][nats]") {
    env e;
    const auto dir = std::filesystem::temp_directory_path() / ("a2a-questions-" + a2a::new_id());
    std::filesystem::create_directories(dir);
    boost::asio::thread_pool blocking(1);
    auto store = fiskai::runstate::make_file_store(dir.string(), blocking.get_executor());
    auto o = e.options(true);
    o.question_timeout = 300ms;
    o.question_timeout_floor = 100ms;
    auto ch = std::make_shared<serve::a2a_channel>(*e.worker_conn, e.ioc.get_executor(), store, o);
    {
        raw_caller caller(*e.caller_conn, "svc");
        caller.send(caller.task("Q3"));
        auto w = e.take(*ch);
        (void)w->run_context();
        auto reply = a2a_test::start(e.ioc, w->prompter->approve(approval()));
        const auto qi = wait_for<a2a::task_question>(e, caller);
        auto q = caller.at_as<a2a::task_question>(qi);
        CHECK(q.kind == "approval");
        CHECK(q.tool == "stream_rm");
        CHECK(q.command == "stream rm ORDERS");
        CHECK(q.tag == "ai:confirm");
        CHECK(q.call_id == "toolu_4");
        REQUIRE(run_until(e.ioc, [&] { return reply->has_value(); }));
        CHECK((*reply)->status == toolkit::reply_status::silent);

        // Late, but before the terminal: held, and acknowledged.
        auto a = answer_for(q.question_id);
        a.decision = "once";
        caller.answer(a);
        const auto held = wait_for<a2a::task_event>(e, caller, qi + 1);
        CHECK(std::get<a2a::status_block>(caller.at_as<a2a::task_event>(held).block).phase == "answer-held");
        CHECK(ch->held_approvals() == 1);
        // A second late answer is not held again.
        caller.answer(a);

        // The run journals its session; the gate abort ends it suspended.
        fiskai::runstate::meta_record meta;
        meta.prompt = "list the streams";
        auto created = a2a_test::run(e.ioc, store->create(w->session_id, meta));
        REQUIRE(created.has_value());
        created->reset();
        serve::outcome out;
        out.reason = "suspended";
        out.error = "approval for \"stream_rm\" was not given in time; it will be asked again when the session resumes";
        e.done(*w, out);
        const auto ti = wait_for<a2a::task_result>(e, caller, held + 1);
        CHECK(caller.at_as<a2a::task_result>(ti).stop_reason == "suspended");
        CHECK(ti + 1 == caller.count());
        check_reply_set(caller, "Q3", w->session_id);
    }
    {
        // The continuation's re-ask of the same call is answered from the held answer.
        raw_caller caller(*e.caller_conn, "svc");
        auto cont = caller.task("Q3", "");
        cont.id = a2a::new_id();
        caller.send(cont);
        auto w = e.take(*ch);
        CHECK(w->follow_up);
        (void)w->run_context();
        auto reply = a2a_test::run(e.ioc, w->prompter->approve(approval()));
        CHECK(reply.status == toolkit::reply_status::answered);
        CHECK(reply.choice == toolkit::approval::allow_once);
        CHECK(ch->held_approvals() == 0);
        e.done(*w, completed());
        REQUIRE(e.wait_count(caller, 2));
        check_reply_set(caller, "Q3", w->session_id);  // no question was published
    }
    ch->release();
    ch.reset();
    store.reset();
    blocking.join();
    std::filesystem::remove_all(dir);
}

TEST_CASE("a2a questions: an answer that does not fit is ignored with a warning, the question stays open",
          "[serve][a2a][nats]") {
    env e;
    auto ch = e.channel(e.options(true));
    raw_caller caller(*e.caller_conn, "svc");
    caller.send(caller.task("Q4"));
    auto w = e.take(*ch);
    (void)w->run_context();
    toolkit::question sel;
    sel.what = toolkit::question::kind::select;
    sel.text = "which stream?";
    sel.options = {"ORDERS", "BILLING"};
    auto reply = a2a_test::start(e.ioc, w->prompter->ask(sel));
    const auto q = caller.at_as<a2a::task_question>(wait_for<a2a::task_question>(e, caller));
    CHECK(q.options == std::vector<std::string>{"ORDERS", "BILLING"});

    auto wrong = answer_for(q.question_id);
    wrong.confirmed = true;
    caller.answer(wrong);
    auto out_of_range = answer_for(q.question_id);
    out_of_range.selected = 2;
    caller.answer(out_of_range);
    REQUIRE(run_until(e.ioc, [&] {
        return e.log.has("ignoring answer for question " + q.question_id + ": selected 2 is out of range (2 options)");
    }));
    CHECK(e.log.has("ignoring answer for question " + q.question_id +
                    ": a select question takes selected or declined, not confirmed"));
    CHECK_FALSE(reply->has_value());

    auto right = answer_for(q.question_id);
    right.selected = 1;
    caller.answer(right);
    REQUIRE(run_until(e.ioc, [&] { return reply->has_value(); }));
    CHECK((*reply)->status == toolkit::reply_status::answered);
    CHECK((*reply)->selected == 1);
    e.done(*w, completed());
    ch->release();
}

TEST_CASE("a2a questions: a cancel closes the stop gate and gives the open question up", "[serve][a2a][nats]") {
    env e;
    auto ch = e.channel(e.options(true));
    raw_caller caller(*e.caller_conn, "svc");
    caller.send(caller.task("Q5"));
    auto w = e.take(*ch);
    auto hooks = w->run_context();
    auto reply = a2a_test::start(e.ioc, w->prompter->ask(confirm()));
    const auto qi = wait_for<a2a::task_question>(e, caller);
    caller.cancel();
    REQUIRE(run_until(e.ioc, [&] { return reply->has_value(); }));
    CHECK((*reply)->status == toolkit::reply_status::silent);
    CHECK(hooks.stop->closed());
    const auto si = wait_for<a2a::task_event>(e, caller, qi + 1);
    CHECK(std::get<a2a::status_block>(caller.at_as<a2a::task_event>(si).block).phase == "stopping");
    // With the gate closed no new question is put.
    auto again = a2a_test::run(e.ioc, w->prompter->ask(confirm("again?")));
    CHECK(again.status == toolkit::reply_status::silent);
    serve::outcome o;
    o.reason = "suspended";
    e.done(*w, o);
    REQUIRE(run_until(e.ioc, [&] { return std::holds_alternative<a2a::task_result>(caller.at(caller.count() - 1)); }));
    check_reply_set(caller, "Q5", w->session_id);
    ch->release();
}

TEST_CASE("a2a questions: a hard cancel of the run ends the open question as cancelled", "[serve][a2a][nats]") {
    env e;
    auto ch = e.channel(e.options(true));
    raw_caller caller(*e.caller_conn, "svc");
    caller.send(caller.task("Q6"));
    auto w = e.take(*ch);
    (void)w->run_context();
    boost::asio::cancellation_signal hard;
    auto reply = std::make_shared<std::optional<toolkit::question_reply>>();
    boost::asio::co_spawn(
        e.ioc, w->prompter->ask(confirm()),
        boost::asio::bind_cancellation_slot(hard.slot(), [reply](std::exception_ptr ex, toolkit::question_reply r) {
            if (ex) std::rethrow_exception(ex);
            *reply = std::move(r);
        }));
    (void)wait_for<a2a::task_question>(e, caller);
    hard.emit(boost::asio::cancellation_type::terminal);
    REQUIRE(run_until(e.ioc, [&] { return reply->has_value(); }));
    CHECK((*reply)->status == toolkit::reply_status::cancelled);
    serve::outcome o;
    o.reason = "suspended";
    o.interrupted = true;
    e.done(*w, o);
    REQUIRE(run_until(e.ioc, [&] { return std::holds_alternative<a2a::task_error>(caller.at(caller.count() - 1)); }));
    check_reply_set(caller, "Q6", w->session_id);
    ch->release();
}
