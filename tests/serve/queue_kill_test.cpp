// Fault: kill -9 of the worker holding a job right after its first tool result (serve.md
// §7.5). A second worker takes the job once the ack wait passes, resumes the session from
// the journal, and the answer lands once, with the fake LLM's log showing no repeated step
// and the tool not run again.
#include "queue_child.hpp"
#include "queue_support.hpp"

using namespace queue_test;

TEST_CASE("queue fault: kill -9 after the first tool result, another worker resumes and answers once",
          "[serve][queue][nats][fault]") {
    world w(provision{3s});
    child_worker a({w.nats.broker.url(), std::to_string(w.llm_port), (w.dir / "runs").string(), "3"});
    w.enqueue("K1", "TOOL please");
    // The child asked for step 1, which carries the tool's result: the fake hangs on it.
    REQUIRE(w.until([&] { return count_lines(w.llm_log, {R"("conversation":"tool")", R"("step":1)"}) == 1; }, 30s));
    a.kill();

    const auto killed = std::chrono::steady_clock::now();
    worker b(w, w.options(3s));
    auto got = w.answer("K1", 30s);
    REQUIRE(got);
    CHECK(std::chrono::steady_clock::now() - killed < 20s);
    CHECK(stored_as<a2a::task_result>(*got).text == "tool answer");
    REQUIRE(w.until([&] { return b.channel->in_flight() == 0; }));
    CHECK(w.stream().state.msgs == 0);
    // Step 0 (the tool call) was asked once; step 1 twice (the hung attempt and the resume).
    CHECK(count_lines(w.llm_log, {R"("conversation":"tool")", R"("step":0)"}) == 1);
    CHECK(count_lines(w.llm_log, {R"("conversation":"tool")", R"("step":1)"}) == 2);
    // The tool ran in the killed worker only: its result came from the journal here.
    CHECK(*w.probes == 0);
    // The answer was stored once: the bucket is fresh, so one put is revision 1.
    CHECK(w.answer("K1", 1s)->revision == 1);
}
