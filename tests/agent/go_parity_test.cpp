// The Go loop behaviours of agent-llm-state.md §6 (1-37) that agent_test.cpp does not
// already cover, one case per behaviour (the number leads each name; docs/agent.md maps
// every number to its test). Real components: fiskai-fake-llm over HTTP, the demo
// application as child processes, the file journal on disk.

#include "agent_fixture.hpp"

#include <fiskai/llm/provider.hpp>
#include <fiskai/remotetools/remotetools.hpp>
#include <fiskai/toolkit/function_tool.hpp>

#include <catch2/catch.hpp>

using namespace agent_test;

namespace {

toolkit::tool_ptr custom_tool(std::string name, std::string description = "A custom tool",
                              std::vector<std::string> tags = {}) {
    toolkit::function_tool_spec spec;
    spec.name = std::move(name);
    spec.description = std::move(description);
    spec.tags = std::move(tags);
    spec.exposed = toolkit::exposure{toolkit::surface::agent};
    spec.confirm = toolkit::confirm_posture::not_required;
    spec.handler = [](const json::object&, const toolkit::call_options&) -> asio::awaitable<toolkit::outcome> {
        co_return toolkit::outcome::from_json(json::object{{"ok", true}});
    };
    return toolkit::make_function_tool(std::move(spec));
}

json::object with_usage(json::object step, json::object usage) {
    step["reply"].as_object()["usage"] = std::move(usage);
    return step;
}

std::size_t count_warnings(const recording_sink& sink, std::string_view kind) {
    return static_cast<std::size_t>(
        std::count_if(sink.warnings.begin(), sink.warnings.end(), [&](const auto& w) { return w.kind == kind; }));
}

// A provider with a bug: its call throws instead of returning an error.
class throwing_provider final : public llm::provider {
public:
    [[nodiscard]] llm::capabilities caps() const override { return {"anthropic", true}; }
    asio::awaitable<llm::call_result<llm::response>> call(llm::request, std::chrono::nanoseconds) override {
        throw std::logic_error("provider bug: index out of range");
        co_return llm::response{};
    }
};

}  // namespace

TEST_CASE("3: a stop after a tool turn parks the session, a fresh run resumes it to completed", "[agent][go]") {
    fixture f(json::array{tool_step("echo", json::object{{"text", json::array{"one"}}}),
                          expect_result(text_step("Done."), "one")});
    agent::stop_gate stop;
    f.sink.on_result = [&](const agent::tool_result_trace&) { stop.close(); };
    auto r = f.request();
    r.stop = &stop;
    auto first = f.h->run(std::move(r));
    CHECK(first.reason == "suspended");
    CHECK(first.error.empty());
    CHECK(first.counters.llm_calls == 1);
    auto state = runstate::fold(f.h->records("s1"));
    REQUIRE(state.has_value());
    CHECK(state->next_iteration == 1);
    CHECK(state->counters.llm_calls == 1);
    CHECK_FALSE(state->completed());
    CHECK_FALSE(state->pending.has_value());

    f.sink.on_result = {};
    auto second = f.h->run(f.request());
    CHECK(second.reason == "completed");
    CHECK(second.counters.llm_calls == 2);
    CHECK(f.request_count() == 2);
}

TEST_CASE("7: a missing required parameter is refused before the confirm gate asks", "[agent][go]") {
    fixture f(json::array{tool_step("stream_rm", json::object{}),
                          expect_result(text_step("Fixed my call."), "without required parameter")});
    test::scripted_prompter asked;
    auto r = f.request();
    r.asker = &asked;
    auto result = f.h->run(std::move(r));
    CHECK(result.reason == "completed");
    CHECK(asked.approvals == 0);
    auto results = f.results();
    REQUIRE(results.size() == 1);
    CHECK_THAT(results[0].result.content,
               Catch::StartsWith("tool \"stream_rm\" was called without required parameter(s): name. required: name"));
    CHECK(results[0].result.is_error);
    CHECK(f.sink.warned("missing_required"));
    CHECK(f.sink.calls.empty());
}

TEST_CASE("8, 36: a remote call is flagged remote, counted, traced with its agent and its exec", "[agent][go]") {
    remotetools::host_config host;
    host.name = "peer-agent";
    remotetools::discovery found;
    found.version = "1.0.0";
    found.tools.push_back(
        remotetools::descriptor{"lookup", "Look a thing up", json::value(json::object{{"type", "object"}})});
    found.tools.push_back(
        remotetools::descriptor{"status", "An in-process tool", json::value(json::object{{"type", "object"}})});
    int peer_calls = 0;
    auto imported = remotetools::import_tools(
        {host}, {found}, {},
        [&](std::string on, std::string tool, json::value) -> asio::awaitable<remotetools::tool_reply> {
            ++peer_calls;
            remotetools::tool_reply reply;
            reply.output = fmt::format("{} answered by {}\n", tool, on);
            if (tool == "lookup") {  // the peer ran a command; `status` is in-process there
                reply.command = "lookup --all";
                reply.exit_code = 3;
            }
            co_return reply;
        });
    REQUIRE(imported.tools.size() == 2);
    fixture f(json::array{tool_step("lookup", json::object{}),
                          expect_result(tool_step("echo", json::object{{"text", json::array{"local"}}}),
                                        "answered by peer-agent"),
                          expect_result(tool_step("status", json::object{}), "local"),
                          expect_result(text_step("All seen."), "status answered")},
              {}, imported.tools);
    auto result = f.h->run(f.request());
    CHECK(result.reason == "completed");
    CHECK(peer_calls == 2);
    CHECK(result.counters.tool_calls == 3);
    CHECK(result.counters.remote_tool_calls == 2);
    auto results = f.results();
    REQUIRE(results.size() == 3);
    CHECK(results[0].remote);
    CHECK(results[2].remote);
    CHECK_FALSE(results[1].remote);
    // The remote reply has the local command result's shape, and a non-zero exit is not an error.
    CHECK(results[0].result.content ==
          R"({"command":"lookup --all","exit_code":3,"output":"lookup answered by peer-agent\n"})");
    CHECK_FALSE(results[0].result.is_error);

    // Presentation: the remote call names its agent; the command call shows its line.
    REQUIRE(f.sink.calls.size() == 3);
    CHECK(f.sink.calls[0].remote);
    CHECK(f.sink.calls[0].agent == "peer-agent");
    CHECK(f.sink.calls[0].kind == toolkit::tool_kind::remote);
    CHECK_FALSE(f.sink.calls[1].remote);
    CHECK(f.sink.calls[1].agent.empty());
    CHECK(f.sink.calls[1].display == "echo -- local");
    CHECK(f.sink.calls[1].kind == toolkit::tool_kind::command);
    // exec travels for both (a2a tool_result.exec).
    REQUIRE(f.sink.results.size() == 3);
    CHECK(f.sink.results[2].remote);
    CHECK_FALSE(f.sink.results[2].exec.has_value());  // the peer ran no command
    REQUIRE(f.sink.results[0].exec.has_value());
    CHECK(f.sink.results[0].remote);
    CHECK(f.sink.results[0].exec->command == "lookup --all");
    CHECK(f.sink.results[0].exec->exit_code == 3);
    REQUIRE(f.sink.results[1].exec.has_value());
    CHECK(f.sink.results[1].exec->command == "echo -- local");
    CHECK(f.sink.results[1].exec->exit_code == 0);

    // Folded counters agree with the run's.
    auto state = runstate::fold(f.h->records("s1"));
    REQUIRE(state.has_value());
    CHECK(state->counters.remote_tool_calls == 2);
}

TEST_CASE("36: built-in and function tools trace without exec", "[agent][go]") {
    fixture f(
        json::array{tool_step("ask_human_confirm", json::object{{"question", "Go on?"}}),
                    expect_result(tool_step("mine", json::object{}), "confirmed"), text_step("Done.")},
        [](config::config& c) { c.harness.human_in_the_loop_enabled = true; }, toolkit::tool_list{custom_tool("mine")});
    test::scripted_prompter yes;
    auto r = f.request();
    r.asker = &yes;
    REQUIRE(f.h->run(std::move(r)).reason == "completed");
    REQUIRE(f.sink.calls.size() == 2);
    CHECK(f.sink.calls[0].display == "ask_human_confirm");
    CHECK(f.sink.calls[1].display == "mine");
    REQUIRE(f.sink.results.size() == 2);
    CHECK_FALSE(f.sink.results[0].exec.has_value());
    CHECK_FALSE(f.sink.results[1].exec.has_value());
}

TEST_CASE("10, 11, 12: approvals: once, for the run, deny, and failures that deny for good", "[agent][go]") {
    const json::array steps{tool_step("stream_rm", json::object{{"name", "A"}}),
                            tool_step("stream_rm", json::object{{"name", "B"}}),
                            tool_step("stream_rm", json::object{{"name", "C"}}), text_step("Done.")};
    test::scripted_prompter asker;
    auto run = [&](fixture& f) {
        auto r = f.request();
        r.asker = &asker;
        auto result = f.h->run(std::move(r));
        CHECK(result.reason == "completed");
        CHECK_FALSE(f.sink.warned("confirm_no_terminal"));
        return f.results();
    };
    SECTION("10, 11: once runs the call and is asked again each time") {
        fixture f(steps);
        auto results = run(f);
        CHECK(asker.approvals == 3);
        CHECK(f.sink.calls.size() == 3);
        REQUIRE(results.size() == 3);
        INFO(results[0].result.content);
        CHECK(results[0].result.content.find("\"command\":\"stream rm") != std::string::npos);
    }
    SECTION("11: for the run is remembered by tool name, whatever the arguments") {
        asker.approval.choice = toolkit::approval::allow_for_run;
        fixture f(steps);
        run(f);
        CHECK(asker.approvals == 1);
        CHECK(f.sink.calls.size() == 3);
    }
    SECTION("11: no is final for the call and asked again next time") {
        asker.approval.choice = toolkit::approval::deny;
        fixture f(steps);
        auto results = run(f);
        CHECK(asker.approvals == 3);
        CHECK(f.sink.calls.empty());
        CHECK(f.sink.results.empty());
        REQUIRE(results.size() == 3);
        for (const auto& r : results) {
            CHECK(
                r.result.content ==
                R"({"allowed":false,"reason":"the operator declined to permit this command; this decision is final, do not retry"})");
        }
    }
    SECTION("12: a prompter failure denies with the final text") {
        asker.approval = toolkit::approval_reply{
            toolkit::reply_status::unavailable, toolkit::approval::deny, "the chat connection dropped", {}};
        fixture f(steps);
        auto results = run(f);
        REQUIRE(results.size() == 3);
        CHECK(
            results[0].result.content ==
            R"({"allowed":false,"reason":"the operator did not permit this command: the chat connection dropped; this decision is final, do not retry"})");
    }
    SECTION("12: a cancelled question denies with the final text") {
        asker.approval =
            toolkit::approval_reply{toolkit::reply_status::cancelled, toolkit::approval::deny, "context canceled", {}};
        fixture f(steps);
        auto results = run(f);
        REQUIRE(results.size() == 3);
        CHECK(
            results[0].result.content ==
            R"({"allowed":false,"reason":"the run ended before the operator could approve this command: context canceled; this decision is final, do not retry"})");
    }
}

TEST_CASE("15: cache tokens flow into stats, journal records, folded counters and the budget", "[agent][go]") {
    const json::object usage{{"input_tokens", 10},
                             {"output_tokens", 5},
                             {"cache_read_input_tokens", 100},
                             {"cache_creation_input_tokens", 50}};
    SECTION("counted everywhere") {
        fixture f(json::array{with_usage(tool_step("echo", json::object{{"text", json::array{"x"}}}), usage),
                              with_usage(text_step("Done."), usage)});
        auto result = f.h->run(f.request());
        CHECK(result.reason == "completed");
        CHECK(result.counters.tokens.in == 20);
        CHECK(result.counters.tokens.out == 10);
        CHECK(result.counters.tokens.cache_read == 200);
        CHECK(result.counters.tokens.cache_create == 100);
        auto records = f.h->records("s1");
        int assistants = 0;
        for (const auto& r : records) {
            if (const auto* a = std::get_if<runstate::assistant_record>(&r.payload)) {
                ++assistants;
                CHECK(a->cache_read_tokens == 100);
                CHECK(a->cache_create_tokens == 50);
            }
        }
        CHECK(assistants == 2);
        auto state = runstate::fold(records);
        REQUIRE(state.has_value());
        CHECK(state->counters.cache_read_tokens == 200);
        CHECK(state->counters.cache_create_tokens == 100);
    }
    SECTION("the cache tiers count toward the token budget") {
        // 10 + 5 alone is far below 150; with the cache tiers the turn used 165.
        fixture f(json::array{with_usage(tool_step("echo", json::object{{"text", json::array{"x"}}}), usage)},
                  [](config::config& c) { c.llm.budget.max_tokens = 150; });
        auto result = f.h->run(f.request());
        CHECK(result.reason == "budget");
        CHECK(result.error == "token budget (150) exhausted after 1 iterations");
    }
}

TEST_CASE("16, 21: a follow-up re-enters the loop and is journaled as a user record", "[agent][go]") {
    fixture f(json::array{text_step("First."), tool_step("echo", json::object{{"text", json::array{"more"}}}),
                          expect_result(text_step("Second."), "more")});
    REQUIRE(f.h->run(f.request()).reason == "completed");
    auto second = f.h->run(f.request("and more", "s1", agent::session_mode::follow_up));
    CHECK(second.reason == "completed");
    CHECK(second.final_text == "Second.");
    CHECK(second.counters.llm_calls == 3);
    auto records = f.h->records("s1");
    std::vector<std::size_t> kinds;
    for (const auto& r : records) kinds.push_back(r.payload.index());
    // meta, assistant, terminal, user, assistant, tool_result, assistant, terminal
    CHECK(kinds == std::vector<std::size_t>{0, 1, 4, 2, 1, 3, 1, 4});
}

TEST_CASE("20: a follow-up after a failed turn merges into the dangling user message", "[agent][go]") {
    json::object step = text_step("Recovered.");
    step["faults"] = json::array{json::object{{"status", 500}, {"body", json::object{{"type", "error"}}}}};
    fixture f(json::array{step});
    auto failed = f.h->run(f.request("first try"));
    REQUIRE(failed.reason == "error");
    CHECK_THAT(failed.error, Catch::StartsWith("llm call: "));
    auto retried = f.h->run(f.request("try again", "s1", agent::session_mode::follow_up));
    CHECK(retried.reason == "completed");
    CHECK(retried.final_text == "Recovered.");
    auto bodies = f.request_bodies();
    REQUIRE(bodies.size() == 2);
    const auto& messages = bodies[1]["messages"].as_array();
    REQUIRE(messages.size() == 1);  // one user message: the prompt and the retry text
    const auto rendered = json::serialize(messages[0]);
    CHECK(rendered.find("first try") != std::string::npos);
    CHECK(rendered.find("try again") != std::string::npos);
}

TEST_CASE("23: failing to journal a follow-up ends the run in error without an LLM call", "[agent][go]") {
    fixture f(json::array{text_step("First."), text_step("Never asked.")});
    REQUIRE(f.h->run(f.request()).reason == "completed");
    f.h->rt->sessions = std::make_shared<failing_store>(f.h->store, user_payload);
    auto result = f.h->run(f.request("more", "s1", agent::session_mode::follow_up));
    CHECK(result.reason == "error");
    CHECK(result.error == "journaling run: session store failure: writing record: no space left on device");
    CHECK(f.sink.warned("journal_user"));
    CHECK(count_warnings(f.sink, "journal_user") == 1);
    CHECK(f.request_count() == 1);
}

TEST_CASE("25: zero tools refuses the run, a built-in alone is enough", "[agent][go]") {
    SECTION("no application, no built-ins") {
        fixture f(json::array{text_step("x")}, [](config::config& c) { c.application_path.clear(); });
        auto result = f.h->run(f.request());
        CHECK(result.reason == "error");
        CHECK(result.error ==
              "no tools available: this agent wraps no application (application_path unset) and enables no "
              "built-in or remote tools; set application_path, or enable harness.knowledge, harness.memory, "
              "human_in_the_loop, or remote_tools in the configuration");
        f.h->rt->config_file = "/etc/fisk-ai/agent.yaml";
        auto named = f.h->run(f.request());
        CHECK_THAT(named.error, Catch::EndsWith("remote_tools in \"/etc/fisk-ai/agent.yaml\""));
        CHECK(f.request_count() == 0);
    }
    SECTION("a built-in alone") {
        fixture f(json::array{text_step("Fine.")}, [](config::config& c) {
            c.application_path.clear();
            c.harness.human_in_the_loop_enabled = true;
        });
        CHECK(f.h->run(f.request()).reason == "completed");
    }
}

TEST_CASE("27: a journal close failure is a journal_close warning", "[agent][go]") {
    fixture f(json::array{text_step("Done.")});
    f.h->rt->sessions = std::make_shared<failing_store>(f.h->store, no_payload, true);
    auto result = f.h->run(f.request());
    CHECK(result.reason == "completed");
    REQUIRE(f.sink.warned("journal_close"));
    for (const auto& w : f.sink.warnings) {
        if (w.kind == "journal_close") CHECK(w.detail.find("closing: input/output error") != std::string::npos);
    }
}

TEST_CASE("28: tool_work_dir must be empty or an absolute existing directory", "[agent][go]") {
    fixture f(json::array{text_step("x")});
    auto with_dir = [&](std::string dir) {
        auto r = f.request();
        r.tool_work_dir = std::move(dir);
        return f.h->run(std::move(r)).error;
    };
    CHECK(with_dir("relative") == "tool_work_dir must be an absolute path, got \"relative\"");
    const auto missing = (f.dir.path / "nope").string();
    CHECK(with_dir(missing) ==
          fmt::format("tool_work_dir \"{}\" does not exist; the caller must create it before the run", missing));
    CHECK(with_dir(f.script_path) == fmt::format("tool_work_dir \"{}\" is not a directory", f.script_path));
    CHECK(f.request_count() == 0);
    CHECK(with_dir("").empty());  // empty: no work dir, the run goes ahead
}

TEST_CASE("29: the output cap is 8192, 16384 with thinking, and an explicit value wins", "[agent][go]") {
    auto cap_of = [](bool thinking, std::int64_t explicit_cap) {
        fixture f(json::array{text_step("ok")}, [&](config::config& c) { c.llm.thinking_enabled = thinking; });
        auto r = f.request();
        if (explicit_cap > 0) r.effective.max_output_tokens = explicit_cap;
        REQUIRE(f.h->run(std::move(r)).reason == "completed");
        auto bodies = f.request_bodies();
        REQUIRE(bodies.size() == 1);
        return bodies[0]["max_tokens"].to_number<std::int64_t>();
    };
    CHECK(cap_of(false, 0) == 8192);
    CHECK(cap_of(true, 0) == 16384);
    CHECK(cap_of(false, 1000) == 1000);
    CHECK(cap_of(true, 1000) == 1000);
}

TEST_CASE("30: tool search: no warning when allowed or below 10, degraded by cause", "[agent][go]") {
    SECTION("allowed: no warning and the tools are deferred") {
        fixture f(json::array{text_step("ok")});
        REQUIRE(f.h->run(f.request()).reason == "completed");
        CHECK_FALSE(f.sink.warned("tool_search_disabled"));
        CHECK_FALSE(f.sink.warned("tool_search_unsupported"));
        auto bodies = f.request_bodies();
        REQUIRE(bodies.size() == 1);
        bool deferred = false;
        for (const auto& t : bodies[0]["tools"].as_array()) {
            if (const auto* d = t.as_object().if_contains("defer_loading"); d != nullptr && d->is_bool()) {
                deferred = deferred || d->as_bool();
            }
        }
        CHECK(deferred);
    }
    SECTION("below 10: no warning even when disabled") {
        fixture f(
            json::array{text_step("ok")},
            [](config::config& c) {
                c.application_path.clear();
                c.llm.no_tool_search = true;
            },
            toolkit::tool_list{custom_tool("one"), custom_tool("two")});
        REQUIRE(f.h->run(f.request()).reason == "completed");
        CHECK(f.sink.warnings.empty());
    }
    SECTION("custom tools count toward the threshold") {
        toolkit::tool_list ten;
        for (int i = 0; i < 10; ++i) ten.push_back(custom_tool(fmt::format("custom_{}", i)));
        fixture f(
            json::array{text_step("ok")},
            [](config::config& c) {
                c.application_path.clear();
                c.llm.no_tool_search = true;
            },
            ten);
        REQUIRE(f.h->run(f.request()).reason == "completed");
        CHECK(f.sink.warned("tool_search_disabled"));
    }
    SECTION("a provider without tool search") {
        fixture f(json::array{text_step("ok")}, {}, {}, "openai");
        REQUIRE(f.h->run(f.request()).reason == "completed");
        CHECK(f.sink.warned("tool_search_unsupported"));
        CHECK_FALSE(f.sink.warned("tool_search_disabled"));
    }
}

TEST_CASE("31: six concurrent runs see their own work dir as PWD", "[agent][go]") {
    fixture f(json::array{tool_step("env", json::object{{"name", "PWD"}}), text_step("Seen.")});
    std::vector<std::unique_ptr<temp_dir>> dirs;
    std::vector<std::future<agent::run_result>> futures;
    agent::agent loop(f.h->ioc.get_executor(), f.h->rt);
    for (int i = 0; i < 6; ++i) {
        dirs.push_back(std::make_unique<temp_dir>());
        auto r = f.request("where?", fmt::format("run-{}", i));
        r.tool_work_dir = dirs.back()->path.string();
        futures.push_back(asio::co_spawn(f.h->ioc, loop.run(std::move(r)), asio::use_future));
    }
    for (auto& fut : futures) CHECK(test::drive(f.h->ioc, fut, 120s).reason == "completed");
    for (int i = 0; i < 6; ++i) {
        auto results = f.results(fmt::format("run-{}", i));
        REQUIRE(results.size() == 1);
        INFO("run-" << i << " is_error=" << results[0].result.is_error << " content: " << results[0].result.content);
        CHECK(results[0].result.content.find("PWD=" + dirs[i]->path.string() + "\\n") != std::string::npos);
    }
}

TEST_CASE("32: a provider that throws is a crash: no terminal, the session stays resumable", "[agent][go]") {
    fixture f(json::array{text_step("Recovered.")});
    auto real = f.h->rt->provider;
    f.h->rt->provider = std::make_shared<throwing_provider>();
    auto result = f.h->run(f.request());
    CHECK(result.crashed);
    CHECK(result.reason.empty());
    CHECK(result.error == "internal error: fisk-ai crashed (a bug, not a model or tool failure); please report it");
    CHECK(f.sink.crash == "provider bug: index out of range");
    CHECK_FALSE(f.last_terminal().has_value());
    f.h->rt->provider = real;
    auto resumed = f.h->run(f.request());
    CHECK(resumed.reason == "completed");
    CHECK(resumed.final_text == "Recovered.");
}

TEST_CASE("33: custom tools: clashes refused, alone enough, a change refuses resume unless forced", "[agent][go]") {
    SECTION("a name offered twice or a tool without a name is refused") {
        fixture f(json::array{text_step("x")}, {}, toolkit::tool_list{custom_tool("echo")});
        auto clash = f.h->run(f.request());
        CHECK(clash.error == "tool name \"echo\" is offered twice; rename or filter one of them");
        f.h->rt->tools.push_back(nullptr);
        f.h->rt->tools.erase(f.h->rt->tools.end() - 2);  // drop the clash, keep the null
        auto nameless = f.h->run(f.request());
        CHECK(nameless.error == "a tool without a name cannot be offered to the model");
        CHECK(f.request_count() == 0);
    }
    SECTION("a custom tool alone starts a run") {
        fixture f(
            json::array{tool_step("mine", json::object{}), expect_result(text_step("ok"), "\"ok\":true")},
            [](config::config& c) { c.application_path.clear(); }, toolkit::tool_list{custom_tool("mine")});
        CHECK(f.h->run(f.request()).reason == "completed");
    }
    SECTION("changing a custom tool refuses resume; force resumes (never across a provider change)") {
        fixture f(
            json::array{text_step("Resumed.")}, [](config::config& c) { c.application_path.clear(); },
            toolkit::tool_list{custom_tool("mine")});
        agent::stop_gate stop;
        stop.close();
        auto r = f.request();
        r.stop = &stop;
        REQUIRE(f.h->run(std::move(r)).reason == "suspended");

        f.h->rt->tools = toolkit::tool_list{custom_tool("mine", "A changed custom tool")};
        auto refused = f.h->run(f.request());
        CHECK(refused.reason == "error");
        CHECK_THAT(refused.error,
                   Catch::StartsWith("cannot resume \"s1\", the configuration changed since it was saved:"));
        CHECK_THAT(refused.error,
                   Catch::EndsWith("re-run against the original configuration, or pass --force to continue with the "
                                   "current one"));

        // A different provider is refused even with force.
        llm::provider_config other;
        other.name = "openai";
        other.base_url = fmt::format("http://127.0.0.1:{}/v1", f.fake->port());
        auto anthropic = f.h->rt->provider;
        f.h->rt->provider = llm::make_provider(other, f.h->ioc.get_executor(), f.h->client);
        auto across = f.request();
        across.force = true;
        auto provider_change = f.h->run(std::move(across));
        CHECK(provider_change.reason == "error");
        CHECK_THAT(provider_change.error, Catch::EndsWith("--force does not apply"));

        f.h->rt->provider = anthropic;
        auto forced = f.request();
        forced.force = true;
        auto resumed = f.h->run(std::move(forced));
        CHECK(resumed.reason == "completed");
        CHECK(resumed.final_text == "Resumed.");
        CHECK(f.sink.warned("fingerprint_drift"));
        CHECK(f.request_count() == 1);
    }
}
