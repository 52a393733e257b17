// The agent loop end to end: the real Anthropic provider against fiskai-fake-llm, the
// demo application's command tools (real child processes), the file journal in a temp
// directory. Each case checks the outcome, its exact text and what the journal holds.

#include "agent_fixture.hpp"

#include <fiskai/agent/hitl.hpp>
#include <fiskai/knowledge/store.hpp>
#include <fiskai/memory/store.hpp>
#include <fiskai/toolkit/function_tool.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/json.hpp>

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <iterator>

using namespace agent_test;

namespace {

// A function tool offered to the agent surface, needing no approval.
toolkit::tool_ptr agent_function(std::string name, std::string description, toolkit::function_handler handler) {
    toolkit::function_tool_spec spec;
    spec.name = std::move(name);
    spec.description = std::move(description);
    spec.exposed = toolkit::exposure{toolkit::surface::agent};
    spec.confirm = toolkit::confirm_posture::not_required;
    spec.handler = std::move(handler);
    return toolkit::make_function_tool(std::move(spec));
}

}  // namespace

TEST_CASE("a final text turn completes with one LLM call and a replay answers from the journal", "[agent]") {
    fixture f(json::array{text_step("All done.")});
    auto first = f.h->run(f.request());
    CHECK(first.reason == "completed");
    CHECK(first.error.empty());
    CHECK(first.final_text == "All done.");
    CHECK(first.counters.llm_calls == 1);
    CHECK(first.session_id == "s1");
    REQUIRE(f.last_terminal());
    CHECK(f.last_terminal()->reason == runstate::terminal_reason::completed);
    CHECK(f.request_count() == 1);

    auto again = f.h->run(f.request());
    CHECK(again.replayed);
    CHECK(again.reason == "completed");
    CHECK(again.final_text == "All done.");
    CHECK(f.request_count() == 1);  // zero LLM requests for a replay
}

TEST_CASE("a tool round trip feeds the command's result back keyed to its call", "[agent]") {
    fixture f(json::array{tool_step("echo", json::object{{"text", json::array{"hello", "agent"}}}),
                          expect_result(text_step("It said hello."), "hello agent")});
    auto result = f.h->run(f.request());
    CHECK(result.reason == "completed");
    CHECK(result.counters.llm_calls == 2);
    CHECK(result.counters.tool_calls == 1);
    auto results = f.results();
    REQUIRE(results.size() == 1);
    CHECK(results[0].tool_use_id == "toolu_c_0_0");
    CHECK(results[0].result.content.find("\"exit_code\"") == std::string::npos);
    CHECK(results[0].result.content.find("hello agent") != std::string::npos);
    REQUIRE(f.sink.calls.size() == 1);
    CHECK(f.sink.results.size() == 1);
    CHECK(std::find(f.sink.phases.begin(), f.sink.phases.end(), "executing-tool") != f.sink.phases.end());
}

TEST_CASE("bad calls from the model are answered in band and the run goes on", "[agent]") {
    json::array steps;
    json::object bad_input = tool_step("echo", json::object{});
    bad_input["reply"].as_object()["content"].as_array()[0].as_object().erase("input");
    bad_input["reply"].as_object()["content"].as_array()[0].as_object()["input_raw"] = "[1,2]";
    steps.push_back(tool_step("no_such_tool", json::object{}));
    steps.push_back(expect_result(tool_step("stream_info", json::object{}), "unknown tool"));
    steps.push_back(expect_result(bad_input, "without required parameter"));
    steps.push_back(text_step("Giving up."));
    fixture f(steps);
    auto result = f.h->run(f.request());
    CHECK(result.reason == "completed");
    auto results = f.results();
    REQUIRE(results.size() == 3);
    CHECK(results[0].result.content == "unknown tool \"no_such_tool\"");
    CHECK(results[0].result.is_error);
    CHECK(results[1].result.content ==
          "tool \"stream_info\" was called without required parameter(s): name. required: name; optional: json");
    CHECK(results[1].result.is_error);
    CHECK(results[2].result.content.rfind("invalid tool input from the model: ", 0) == 0);
    CHECK(results[2].result.is_error);
    CHECK(f.sink.warned("unknown_tool"));
    CHECK(f.sink.warned("missing_required"));
    CHECK(f.sink.calls.empty());  // none of them ran
    CHECK(result.counters.tool_calls == 3);
}

TEST_CASE("a refusal and a truncated answer end in error with Go's texts", "[agent]") {
    SECTION("refusal") {
        fixture f(json::array{text_step("I cannot help with that.", "refusal")});
        auto result = f.h->run(f.request());
        CHECK(result.reason == "error");
        CHECK(result.error == "model refused to respond");
        CHECK(f.last_terminal()->message == "model refused to respond");
    }
    SECTION("truncated, its partial tool call never runs") {
        json::object step = tool_step("echo", json::object{{"text", json::array{"x"}}});
        step["reply"].as_object()["stop_reason"] = "max_tokens";
        fixture f(json::array{step});
        auto result = f.h->run(f.request());
        CHECK(result.reason == "error");
        CHECK(result.error == "model reply truncated at the output token limit; the answer is incomplete");
        CHECK(f.results().empty());
    }
}

TEST_CASE("budgets: iterations and tokens", "[agent]") {
    SECTION("max iterations") {
        fixture f(json::array{tool_step("echo", json::object{{"text", json::array{"again"}}}),
                              tool_step("echo", json::object{{"text", json::array{"again"}}})},
                  [](config::config& c) { c.llm.budget.max_iterations = 1; });
        auto result = f.h->run(f.request());
        CHECK(result.reason == "max_iterations");
        CHECK(result.error == "max iterations (1) reached without a final answer");
    }
    SECTION("token budget stops before the tools of the turn run") {
        fixture f(json::array{tool_step("echo", json::object{{"text", json::array{"x"}}},
                                        json::object{{"input_tokens", 100}, {"output_tokens", 100}})},
                  [](config::config& c) { c.llm.budget.max_tokens = 50; });
        auto result = f.h->run(f.request());
        CHECK(result.reason == "budget");
        CHECK(result.error == "token budget (50) exhausted after 1 iterations");
        CHECK(f.results().empty());
        CHECK(f.sink.calls.empty());
    }
}

TEST_CASE("an LLM answering 429 forever ends in error, journaled", "[agent]") {
    json::object step = text_step("never");
    json::array faults;
    for (int i = 0; i < 20; ++i)
        faults.push_back(json::object{{"status", 429}, {"headers", json::object{{"retry-after", "0"}}}});
    step["faults"] = faults;
    fixture f(json::array{step});
    auto result = f.h->run(f.request());
    CHECK(result.reason == "error");
    CHECK(result.error.rfind("llm call: ", 0) == 0);
    REQUIRE(f.last_terminal());
    CHECK(f.last_terminal()->reason == runstate::terminal_reason::error);
}

TEST_CASE("a tool printing 10 MiB is capped and a hanging tool is stopped at its timeout", "[agent]") {
    fixture f(json::array{tool_step("flood", json::object{{"bytes", 10 * 1024 * 1024}}),
                          tool_step("sleep", json::object{{"duration", "120s"}}),
                          expect_result(text_step("Done."), "timed out")});
    // Long enough for 10 MiB under the sanitizers, far below the sleep.
    auto r = f.request();
    r.effective.tool_timeout = 8s;
    const auto start = std::chrono::steady_clock::now();
    auto result = f.h->run(std::move(r));
    CHECK(result.reason == "completed");
    CHECK(std::chrono::steady_clock::now() - start < 60s);
    auto results = f.results();
    REQUIRE(results.size() == 2);
    CHECK(results[0].result.content.size() < 100 * 1024);
    CHECK(results[0].result.content.find("\"truncated\":true") != std::string::npos);
    CHECK(results[1].result.is_error);
    CHECK(results[1].result.content.find("timed out after 8s") != std::string::npos);
}

TEST_CASE("the confirm gate: denied without an operator, abort then re-asked on resume", "[agent]") {
    SECTION("no operator") {
        fixture f(json::array{tool_step("stream_rm", json::object{{"name", "ORDERS"}}),
                              expect_result(text_step("Not allowed."), "allowed")});
        auto result = f.h->run(f.request());
        CHECK(result.reason == "completed");
        auto results = f.results();
        REQUIRE(results.size() == 1);
        CHECK(results[0].result.content ==
              R"({"allowed":false,"reason":"no interactive terminal is attached, so no operator could be asked"})");
        CHECK(f.sink.warned("confirm_no_terminal"));
        CHECK(f.sink.calls.empty());
        CHECK(f.sink.results.empty());
    }
    SECTION("silence aborts; the resumed session asks again and runs it") {
        fixture f(json::array{tool_step("stream_rm", json::object{{"name", "ORDERS"}}),
                              expect_result(text_step("Removed."), "\"command\"")});
        test::scripted_prompter silent;
        silent.approval = toolkit::approval_reply{toolkit::reply_status::silent, toolkit::approval::deny, {}, {}};
        auto r = f.request();
        r.asker = &silent;
        auto first = f.h->run(std::move(r));
        CHECK(first.reason == "suspended");
        CHECK(first.error ==
              "approval for \"stream_rm\" was not given in time; it will be asked again when the session resumes");
        CHECK(f.results().empty());
        CHECK(silent.approvals == 1);

        test::scripted_prompter yes;
        auto again = f.request();
        again.asker = &yes;
        auto second = f.h->run(std::move(again));
        CHECK(second.reason == "completed");
        CHECK(yes.approvals == 1);
        REQUIRE(f.results().size() == 1);
        CHECK(second.counters.llm_calls == 2);
    }
}

TEST_CASE("a question nobody answers is a journaled deferral, never dispatched again", "[agent]") {
    fixture f(json::array{tool_step("ask_human_confirm", json::object{{"question", "Delete ORDERS?"}}),
                          expect_result(text_step("Waiting for the operator."), "\"deferred\":true"),
                          text_step("Deleting as confirmed.")},
              [](config::config& c) { c.harness.human_in_the_loop_enabled = true; });
    test::scripted_prompter silent;
    silent.answer.status = toolkit::reply_status::silent;
    silent.answer.question_id = "q-1";
    auto r = f.request();
    r.asker = &silent;
    auto first = f.h->run(std::move(r));
    CHECK(first.reason == "completed");
    REQUIRE(first.deferred.size() == 1);
    CHECK(first.deferred[0].question_id == "q-1");
    CHECK(first.deferred[0].kind == "confirm");
    CHECK(first.deferred[0].question == "Delete ORDERS?");
    auto results = f.results();
    REQUIRE(results.size() == 1);
    CHECK(results[0].result.content ==
          R"({"confirmed":null,"deferred":true,"question_id":"q-1","reason":")" + agent::deferral_reason() + "\"}");

    auto follow = f.request("The operator said yes.", "s1", agent::session_mode::follow_up);
    follow.asker = &silent;
    auto second = f.h->run(std::move(follow));
    CHECK(second.reason == "completed");
    CHECK(second.final_text == "Deleting as confirmed.");
    CHECK(silent.questions == 1);  // never asked again
    CHECK(f.results().size() == 1);
}

TEST_CASE("crash-resume re-runs a read-only call and never silently repeats another", "[agent]") {
    SECTION("a call that is not read-only gets the unverified-effect result") {
        // No expectation on the second step: the first run sees pub's output, the resumed
        // one the unverified-effect text (checked in the journal below).
        fixture f(json::array{tool_step("pub", json::object{{"subject", "orders.new"}}), text_step("Checked.")});
        auto first = f.h->run(f.request());
        REQUIRE(first.reason == "completed");
        f.truncate_journal(2);  // meta + assistant: the worker died while pub ran
        auto resumed = f.h->run(f.request());
        CHECK(resumed.reason == "completed");
        CHECK(f.sink.warned("unverified_effect"));
        auto results = f.results();
        REQUIRE(results.size() == 1);
        CHECK(results[0].result.content ==
              "the worker stopped while this call ran; its effect is unknown: check before repeating it");
        CHECK(results[0].result.is_error);
        CHECK(f.sink.calls.size() == 1);  // only the first run's dispatch
    }
    SECTION("a read-only call runs again") {
        fixture f(json::array{tool_step("echo", json::object{{"text", json::array{"again"}}}),
                              expect_result(text_step("Checked."), "again")});
        auto first = f.h->run(f.request());
        REQUIRE(first.reason == "completed");
        f.truncate_journal(2);
        auto resumed = f.h->run(f.request());
        CHECK(resumed.reason == "completed");
        CHECK_FALSE(f.sink.warned("unverified_effect"));
        CHECK(f.sink.calls.size() == 2);
        CHECK(resumed.counters.llm_calls == 2);  // the journaled call is not paid again
    }
}

TEST_CASE("a resume reads again when another worker finished the session between its read and its lock", "[agent]") {
    fixture f(json::array{tool_step("pub", json::object{{"subject", "orders.new"}}), text_step("Published.")});
    REQUIRE(f.h->run(f.request()).reason == "completed");
    const auto path = f.dir.path / "runs" / "s1.json";
    std::string whole;
    {
        std::ifstream in(path);
        whole.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    }
    // The other worker's view at this run's read: meta and the turn asking for pub, its
    // result not written yet. It finishes (result, answer, terminal) before this run locks.
    f.truncate_journal(2);
    auto racing = std::make_shared<failing_store>(f.h->store, no_payload);
    int opens = 0;
    racing->before_open = [&](const std::string&) {
        if (opens++ == 0) std::ofstream(path, std::ios::trunc) << whole;
    };
    f.h->rt->sessions = racing;

    auto resumed = f.h->run(f.request());
    CHECK(opens == 1);  // the second read agreed with the lock: no second open
    CHECK(resumed.reason == "completed");
    CHECK(resumed.replayed);
    CHECK(resumed.final_text == "Published.");
    CHECK_FALSE(f.sink.warned("unverified_effect"));
    CHECK(f.sink.calls.size() == 1);  // the first run's pub only
    CHECK(f.results().size() == 1);
    CHECK(f.last_terminal()->reason == runstate::terminal_reason::completed);
}

TEST_CASE("a hard cancel abandons the running tool and leaves the session resumable", "[agent]") {
    fixture f(json::array{tool_step("sleep", json::object{{"duration", "30s"}}), text_step("Slept.")});
    const auto start = std::chrono::steady_clock::now();
    auto result = f.h->run_cancelled(f.request(), [&] { return !f.sink.calls.empty(); });
    CHECK(std::chrono::steady_clock::now() - start < 15s);
    CHECK(result.reason == "suspended");
    CHECK(result.error == "interrupted: the worker stopped before the run finished");
    REQUIRE(f.last_terminal());
    CHECK(f.last_terminal()->reason == runstate::terminal_reason::suspended);
    CHECK(f.last_terminal()->message == "interrupted: the worker stopped before the run finished");
    CHECK(f.results().empty());
}

TEST_CASE("a follow-up continues a completed session, a missing one is refused", "[agent]") {
    fixture f(json::array{text_step("First answer."), text_step("Second answer.")});
    auto missing = f.h->run(f.request("more", "nope", agent::session_mode::follow_up));
    CHECK(missing.reason == "error");
    CHECK(missing.error == "session \"nope\" does not exist; a follow-up needs an existing session");

    REQUIRE(f.h->run(f.request()).reason == "completed");
    auto second = f.h->run(f.request("and then?", "s1", agent::session_mode::follow_up));
    CHECK(second.reason == "completed");
    CHECK(second.final_text == "Second answer.");
    CHECK(second.counters.llm_calls == 2);
    int users = 0;
    for (auto& r : f.h->records("s1")) users += std::holds_alternative<runstate::user_record>(r.payload) ? 1 : 0;
    CHECK(users == 1);
}

TEST_CASE("the stop gate parks the run at the next boundary, resume completes it", "[agent]") {
    fixture f(json::array{tool_step("echo", json::object{{"text", json::array{"one"}}}), text_step("Done.")});
    agent::stop_gate stop;
    stop.close();
    auto r = f.request();
    r.stop = &stop;
    auto first = f.h->run(std::move(r));
    CHECK(first.reason == "suspended");
    CHECK(first.counters.llm_calls == 0);
    auto second = f.h->run(f.request());
    CHECK(second.reason == "completed");
    CHECK(second.counters.llm_calls == 2);
}

TEST_CASE("bad run inputs are refused with the text naming them", "[agent]") {
    fixture f(json::array{text_step("x")});
    auto r = f.request();
    r.tool_work_dir = "relative/dir";
    auto result = f.h->run(std::move(r));
    CHECK(result.reason == "error");
    CHECK(result.error == "tool_work_dir must be an absolute path, got \"relative/dir\"");
    auto bad_id = f.h->run(f.request("x", "../etc"));
    CHECK(bad_id.reason == "error");
    CHECK(bad_id.error == "invalid run id: \"../etc\" (use letters, digits, '-' or '_')");
}

TEST_CASE("a tool that throws is an in-band failure, the crash barrier catches the rest", "[agent]") {
    auto explode =
        agent_function("explode", "Throws",
                       [](const json::object&, const toolkit::call_options&) -> asio::awaitable<toolkit::outcome> {
                           throw std::runtime_error("boom");
                           co_return toolkit::outcome::failure("unreachable");
                       });
    fixture f(json::array{tool_step("explode", json::object{}), expect_result(text_step("Saw it."), "boom")}, {},
              toolkit::tool_list{explode});
    auto result = f.h->run(f.request());
    CHECK(result.reason == "completed");
    CHECK_FALSE(result.crashed);
}

TEST_CASE("a journal that fails to append ends the run in error and still writes the terminal", "[agent]") {
    fixture f(json::array{tool_step("echo", json::object{{"text", json::array{"x"}}}), text_step("Done.")});
    // Index 3 of the payload variant: tool_result.
    f.h->rt->sessions = std::make_shared<failing_store>(f.h->store, tool_result_payload);
    auto result = f.h->run(f.request());
    CHECK(result.reason == "error");
    CHECK(result.error == "journaling run: session store failure: writing record: no space left on device");
    REQUIRE(f.last_terminal());
    CHECK(f.last_terminal()->reason == runstate::terminal_reason::error);
    CHECK(f.last_terminal()->message == result.error);
    // The outcome is final and journaled: opening the session again replays it.
    f.h->rt->sessions = f.h->store;
    auto resumed = f.h->run(f.request());
    CHECK(resumed.replayed);
    CHECK(resumed.error == result.error);
}

TEST_CASE("a partial batch resumes: the journaled result is reused, only the unanswered call runs", "[agent]") {
    json::object two = tool_step("echo", json::object{{"text", json::array{"first"}}});
    two["reply"].as_object()["content"].as_array().push_back(
        json::object{{"type", "tool_use"}, {"name", "echo"}, {"input", json::object{{"text", json::array{"second"}}}}});
    fixture f(json::array{two, expect_result(text_step("Both done."), "second")});
    REQUIRE(f.h->run(f.request()).reason == "completed");
    f.truncate_journal(3);  // meta, assistant, the first result: died while the second ran
    auto resumed = f.h->run(f.request());
    CHECK(resumed.reason == "completed");
    CHECK(f.sink.calls.size() == 3);  // 2 in the first run, only the unanswered one again
    CHECK(f.sink.calls.back().input.find("second") != std::string::npos);
    auto records = f.h->records("s1");
    auto state = runstate::fold(records);
    REQUIRE(state.has_value());
    CHECK_FALSE(state->pending.has_value());
    CHECK(state->counters.tool_calls == 2);
}

TEST_CASE("resume warns resume_paused_turn only after a pause_turn with nothing pending", "[agent]") {
    fixture f(json::array{text_step("Working on it.", "pause_turn"), text_step("Finished.")});
    REQUIRE(f.h->run(f.request()).reason == "completed");
    CHECK_FALSE(f.sink.warned("resume_paused_turn"));
    f.truncate_journal(2);  // meta and the paused turn
    auto resumed = f.h->run(f.request());
    CHECK(resumed.reason == "completed");
    CHECK(resumed.final_text == "Finished.");
    CHECK(f.sink.warned("resume_paused_turn"));
}

TEST_CASE("tool search degradation is warned by cause and the output cap is the built-in default", "[agent]") {
    fixture f(json::array{text_step("ok")}, [](config::config& c) { c.llm.no_tool_search = true; });
    REQUIRE(f.h->run(f.request()).reason == "completed");
    REQUIRE(f.sink.warned("tool_search_disabled"));
    for (const auto& w : f.sink.warnings) {
        if (w.kind == "tool_search_disabled") CHECK(w.count >= 10);
    }
    auto body = test::run_on(f.h->ioc, [&]() -> asio::awaitable<std::string> {
        net::http_request get{"GET", fmt::format("http://127.0.0.1:{}/_fake/requests", f.fake->port()), {}, ""};
        auto got = co_await f.h->client.send(std::move(get), std::chrono::steady_clock::now() + 10s);
        co_return got ? got->body : std::string();
    }());
    auto line = json::parse(body.substr(0, body.find('\n'))).as_object();
    auto request = line["body"].is_string() ? json::parse(line["body"].as_string()) : line["body"];
    CHECK(request.as_object()["max_tokens"].to_number<std::int64_t>() == 8192);
}

TEST_CASE("concurrent runs on one io_context keep their own work directories", "[agent]") {
    // The loop lends each call its run's work dir (toolkit::call_options::work_dir); a
    // function tool reports what it was lent.
    toolkit::function_tool_spec where;
    where.name = "where";
    where.description = "Reports the work dir";
    where.exposed = toolkit::exposure{toolkit::surface::agent};
    where.confirm = toolkit::confirm_posture::not_required;
    where.handler = [](const json::object&, const toolkit::call_options& o) -> asio::awaitable<toolkit::outcome> {
        co_return toolkit::outcome::from_json(json::object{{"work_dir", o.work_dir}});
    };
    fixture f(json::array{tool_step("where", json::object{}), text_step("Seen.")}, {},
              toolkit::tool_list{toolkit::make_function_tool(std::move(where))});
    temp_dir a, b;
    auto ra = f.request("where?", "run-a");
    ra.tool_work_dir = a.path.string();
    auto rb = f.request("where?", "run-b");
    rb.tool_work_dir = b.path.string();
    agent::agent loop(f.h->ioc.get_executor(), f.h->rt);
    auto fa = asio::co_spawn(f.h->ioc, loop.run(std::move(ra)), asio::use_future);
    auto fb = asio::co_spawn(f.h->ioc, loop.run(std::move(rb)), asio::use_future);
    auto got_a = test::drive(f.h->ioc, fa, 60s);
    auto got_b = test::drive(f.h->ioc, fb, 60s);
    CHECK(got_a.reason == "completed");
    CHECK(got_b.reason == "completed");
    auto results_a = f.results("run-a");
    auto results_b = f.results("run-b");
    REQUIRE(results_a.size() == 1);
    REQUIRE(results_b.size() == 1);
    CHECK(results_a[0].result.content.find(a.path.string()) != std::string::npos);
    CHECK(results_b[0].result.content.find(b.path.string()) != std::string::npos);
}

TEST_CASE("a scripted session with tools, a gated tool, a question and a resume runs end to end", "[agent]") {
    fixture f(json::array{tool_step("stream_info", json::object{{"name", "ORDERS"}}),
                          expect_result(tool_step("stream_rm", json::object{{"name", "ORDERS"}}), "ORDERS"),
                          expect_result(tool_step("ask_human_input",
                                                  json::object{{"question", "Which environment?"}, {"default", "dev"}}),
                                        "\"command\""),
                          expect_result(text_step("Removed ORDERS in prod."), "prod")},
              [](config::config& c) { c.harness.human_in_the_loop_enabled = true; });
    // The operator is away while approval is asked: the run parks with the call pending.
    test::scripted_prompter away;
    away.approval.status = toolkit::reply_status::silent;
    auto first_request = f.request("clean up ORDERS");
    first_request.asker = &away;
    auto first = f.h->run(std::move(first_request));
    REQUIRE(first.reason == "suspended");
    CHECK(f.results().size() == 1);  // stream_info only

    // Back: approval is asked again, the removal runs, the question is answered.
    test::scripted_prompter back;
    back.answer.value = "prod";
    auto second_request = f.request("clean up ORDERS");
    second_request.asker = &back;
    auto second = f.h->run(std::move(second_request));
    CHECK(second.reason == "completed");
    CHECK(second.final_text == "Removed ORDERS in prod.");
    CHECK(back.approvals == 1);
    CHECK(back.questions == 1);
    CHECK(second.counters.llm_calls == 4);
    CHECK(second.counters.tool_calls == 3);
    auto results = f.results();
    REQUIRE(results.size() == 3);
    CHECK(results[2].result.content == R"({"value":"prod"})");
    CHECK(f.last_terminal()->reason == runstate::terminal_reason::completed);
}

TEST_CASE("memory built-ins are made per run over the shared store", "[agent]") {
    fixture f(json::array{tool_step("memory_write", json::object{{"key", "orders"},
                                                                 {"description", "ORDERS facts"},
                                                                 {"content", "12 messages"}}),
                          expect_result(tool_step("memory_read", json::object{{"key", "orders"}}), "written"),
                          expect_result(text_step("Remembered."), "12 messages"), text_step("Again.")},
              [](config::config& c) { c.harness.memory.enabled = true; });
    memory::context ctx;
    ctx.blocking = f.h->blocking.get_executor();
    ctx.store_dir = f.dir.path.string();
    ctx.identity = "demo";
    f.h->rt->memory = memory::make_store("file", "", ctx);
    auto result = f.h->run(f.request());
    CHECK(result.reason == "completed");
    auto results = f.results();
    REQUIRE(results.size() == 2);
    CHECK(results[0].result.content == R"({"written":true})");
    CHECK(results[1].result.content.find("12 messages") != std::string::npos);
}

TEST_CASE("knowledge built-ins are offered to the model over the shared store", "[agent]") {
    fixture f(json::array{tool_step("knowledge_search", json::object{{"query", "work-queue retention"}}),
                          expect_result(text_step("Found it."), "Work-queue retention")});
    std::ofstream(f.dir.path / "kb.md")
        << "# Streams\n\n## Retention\n\nWork-queue retention removes acked messages.\n";
    asio::io_context ioc;
    knowledge::store_options o;
    o.directory = (f.dir.path / "knowledge").string();
    {
        auto w = knowledge::store::open_writer(ioc.get_executor(), o);
        REQUIRE(w.has_value());
        auto guard = asio::make_work_guard(ioc);
        auto done = asio::co_spawn(ioc, (*w)->index({(f.dir.path / "kb.md").string()}, {}), asio::use_future);
        while (done.wait_for(0s) != std::future_status::ready) ioc.run_one_for(20ms);
        REQUIRE(done.get().has_value());
    }
    f.h->rt->knowledge = knowledge::store::open(ioc.get_executor(), o).value();
    auto result = f.h->run(f.request());
    INFO(result.error);
    CHECK(result.reason == "completed");
    auto results = f.results();
    REQUIRE(results.size() == 1);
    CHECK(results[0].result.content.find("kb.md#0") != std::string::npos);
}

TEST_CASE("a hard cancel during a hung LLM call ends at once, nothing journaled for the call", "[agent]") {
    json::object step = text_step("never");
    step["faults"] = json::array{json::object{{"hang", true}}};
    fixture f(json::array{step});
    const auto start = std::chrono::steady_clock::now();
    auto result = f.h->run_cancelled(f.request(), [&] { return !f.sink.phases.empty(); });
    CHECK(std::chrono::steady_clock::now() - start < 15s);
    INFO(f.sink.crash);
    CHECK(result.reason == "suspended");
    CHECK(result.error == "interrupted: the worker stopped before the run finished");
    CHECK(result.counters.llm_calls == 0);
    auto records = f.h->records("s1");
    REQUIRE(records.size() == 2);  // meta and the terminal
    CHECK(std::holds_alternative<runstate::terminal_record>(records[1].payload));
}

TEST_CASE("runs of one runtime reuse its tool definitions until its tools or its prompt change", "[agent]") {
    fixture f(json::array{text_step("Done.")});
    auto fingerprint_of = [&](const std::string& session) {
        auto records = f.h->records(session);
        REQUIRE_FALSE(records.empty());
        auto* meta = std::get_if<runstate::meta_record>(&records.front().payload);
        REQUIRE(meta != nullptr);
        return meta->fingerprint;
    };
    auto offered = [&](std::size_t request) {
        std::vector<std::string> names;
        const auto bodies = f.request_bodies();
        for (const auto& t : bodies.at(request).at("tools").as_array()) {
            names.emplace_back(t.as_object().at("name").as_string());
        }
        return names;
    };
    const auto has = [](const std::vector<std::string>& names, std::string_view name) {
        return std::find(names.begin(), names.end(), name) != names.end();
    };

    REQUIRE(f.h->run(f.request("do it", "a1")).reason == "completed");
    REQUIRE(f.h->run(f.request("do it", "a2")).reason == "completed");
    const auto first = fingerprint_of("a1");
    CHECK(fingerprint_of("a2") == first);
    CHECK(offered(1) == offered(0));

    // A tool added to the runtime is offered, and the fingerprint says the tool set changed.
    f.h->rt->tools.push_back(
        agent_function("added_later", "Added between runs",
                       [](const json::object&, const toolkit::call_options&) -> asio::awaitable<toolkit::outcome> {
                           co_return toolkit::outcome::from_json("unused");
                       }));
    REQUIRE(f.h->run(f.request("do it", "a3")).reason == "completed");
    CHECK(has(offered(2), "added_later"));
    CHECK_FALSE(has(offered(0), "added_later"));
    const auto third = fingerprint_of("a3");
    CHECK(third.tools_hash != first.tools_hash);
    CHECK(third.system_hash == first.system_hash);

    // So does a changed system prompt, in its own hash.
    f.h->rt->cfg.system_prompt = "A different prompt.";
    REQUIRE(f.h->run(f.request("do it", "a4")).reason == "completed");
    const auto fourth = fingerprint_of("a4");
    CHECK(fourth.system_hash != third.system_hash);
    CHECK(fourth.tools_hash == third.tools_hash);
}
