// Budget lowering (serve.md §5.4) and the outcome mapping (§5.3).

#include <fiskai/serve/serve.hpp>

#include <catch2/catch.hpp>

using namespace fiskai;
using namespace std::chrono_literals;

namespace {
agent::limits configured() {
    agent::limits l;
    l.max_tokens = 100000;
    l.max_iterations = 20;
    l.call_timeout = 120s;
    l.tool_timeout = 30s;
    l.max_output_tokens = 4096;
    return l;
}
}  // namespace

TEST_CASE("an empty budget leaves every configured limit as it is") {
    const auto e = serve::effective_limits(configured(), serve::budget{});
    CHECK(e.max_tokens == 100000);
    CHECK(e.max_iterations == 20);
    CHECK(e.call_timeout == 120s);
    CHECK(e.tool_timeout == 30s);
    CHECK(e.max_output_tokens == 4096);
}

TEST_CASE("a budget below the configured limits lowers each of them") {
    serve::budget b;
    b.max_tokens = 500;
    b.max_iterations = 3;
    b.call_timeout = 5s;
    const auto e = serve::effective_limits(configured(), b);
    CHECK(e.max_tokens == 500);
    CHECK(e.max_iterations == 3);
    CHECK(e.call_timeout == 5s);
    // The tool timeout and the output cap are the operator's alone.
    CHECK(e.tool_timeout == 30s);
    CHECK(e.max_output_tokens == 4096);
}

TEST_CASE("a budget never raises a limit") {
    serve::budget b;
    b.max_tokens = 1000000;
    b.max_iterations = 21;
    b.call_timeout = 1h;
    const auto e = serve::effective_limits(configured(), b);
    CHECK(e.max_tokens == 100000);
    CHECK(e.max_iterations == 20);
    CHECK(e.call_timeout == 120s);

    SECTION("an equal value changes nothing either") {
        serve::budget same;
        same.max_tokens = 100000;
        same.max_iterations = 20;
        same.call_timeout = 120s;
        const auto s = serve::effective_limits(configured(), same);
        CHECK(s.max_tokens == 100000);
        CHECK(s.max_iterations == 20);
        CHECK(s.call_timeout == 120s);
    }
}

TEST_CASE("negative budget values are treated as unset, never as lower") {
    serve::budget b;
    b.max_tokens = -1;
    b.max_iterations = -5;
    b.call_timeout = -1s;
    const auto e = serve::effective_limits(configured(), b);
    CHECK(e.max_tokens == 100000);
    CHECK(e.max_iterations == 20);
    CHECK(e.call_timeout == 120s);
}

TEST_CASE("lowering one limit leaves the others alone") {
    serve::budget b;
    b.max_iterations = 2;
    const auto e = serve::effective_limits(configured(), b);
    CHECK(e.max_iterations == 2);
    CHECK(e.max_tokens == 100000);
    CHECK(e.call_timeout == 120s);
}

TEST_CASE("a run result maps onto an outcome") {
    agent::run_result r;
    r.reason = "suspended";
    r.error = "approval pending";
    r.session_id = "q-1";
    r.final_text = "half way";
    r.model_stop_reason = "tool_use";
    r.counters.llm_calls = 2;
    r.deferred.push_back({"call1", "ask_user", "qid", "confirm", "sure?"});
    const auto o = serve::to_outcome(r);
    CHECK(o.reason == "suspended");
    CHECK(o.error == "approval pending");
    CHECK(o.session_id == "q-1");
    CHECK(o.text == "half way");
    CHECK(o.model_stop_reason == "tool_use");
    CHECK(o.counters.llm_calls == 2);
    REQUIRE(o.deferred.size() == 1);
    CHECK(o.deferred[0].question_id == "qid");
    CHECK_FALSE(o.crashed);
    CHECK_FALSE(o.rejected);
    CHECK_FALSE(o.abandoned);
    CHECK_FALSE(o.interrupted);

    SECTION("a crash has no reason") {
        agent::run_result c;
        c.crashed = true;
        c.reason = "error";
        c.error = std::string(agent::text::crashed);
        const auto oc = serve::to_outcome(c);
        CHECK(oc.crashed);
        CHECK(oc.reason.empty());
        CHECK(oc.error == agent::text::crashed);
    }
    SECTION("a replay is carried") {
        agent::run_result p;
        p.reason = "completed";
        p.replayed = true;
        CHECK(serve::to_outcome(p).replayed);
    }
}
