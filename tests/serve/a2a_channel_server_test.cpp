// End to end: the real serve::server runs works from the a2a channel on the real agent (the
// Anthropic provider against fiskai-fake-llm, the file journal), over a real nats-server,
// with a raw nats.c caller. The reply set is asserted as the caller sees it (§6.10).
#include "a2a_channel_support.hpp"
#include "fake_llm_process.hpp"
#include "session_harness.hpp"

#include <fiskai/serve/serve.hpp>
#include <fiskai/toolkit/function_tool.hpp>

#include <boost/json.hpp>

#include <filesystem>

using namespace a2a_channel_test;
namespace json = boost::json;
namespace agent = fiskai::agent;
namespace llm = fiskai::llm;

namespace {

json::object text_reply(std::string_view text) {
    return json::object{{"reply", json::object{{"content", json::array{json::object{{"type", "text"}, {"text", text}}}},
                                               {"stop_reason", "end_turn"}}}};
}

json::object tool_reply(std::string_view name) {
    return json::object{
        {"reply",
         json::object{
             {"content", json::array{json::object{
                             {"type", "tool_use"}, {"id", "toolu_1"}, {"name", name}, {"input", json::object{}}}}},
             {"stop_reason", "tool_use"}}}};
}

json::object conversation(std::string_view name, std::string_view prompt, json::array steps) {
    return json::object{
        {"name", name}, {"when", json::object{{"prompt_contains", prompt}}}, {"steps", std::move(steps)}};
}

std::string script() {
    json::array conversations{
        conversation("allow", "GUARD",
                     json::array{tool_reply("guarded"),
                                 json::object{{"expect", json::object{{"last_tool_result_contains", "changed"}}},
                                              {"reply", text_reply("allowed as expected")["reply"]}}}),
        conversation("plain", "", json::array{text_reply("first answer"), text_reply("second answer")}),
    };
    return json::serialize(json::object{{"conversations", std::move(conversations)}});
}

struct fixture {
    std::filesystem::path dir = [] {
        std::string pattern = (std::filesystem::temp_directory_path() / "fiskai-a2a-serve-XXXXXX").string();
        return std::filesystem::path(::mkdtemp(pattern.data()));
    }();
    conns::embedded_broker broker{[] {
        conns::broker_options o;
        o.jetstream = false;
        return o;
    }()};
    std::unique_ptr<fiskai::test::fake_llm_process> fake;
    std::unique_ptr<fiskai::test::session_harness> h;
    std::unique_ptr<conns::connection> worker_conn = conns::connection::dial_url(broker.url(), connect("worker"));
    std::unique_ptr<conns::connection> caller_conn = conns::connection::dial_url(broker.url(), connect("caller"));
    std::shared_ptr<int> guarded_runs = std::make_shared<int>(0);
    std::unique_ptr<serve::server> server;
    std::shared_ptr<serve::a2a_channel> channel;
    std::future<void> finished;

    explicit fixture(bool elicitation) {
        fake = fiskai::test::start_scripted_fake_llm(FISKAI_FAKE_LLM, dir, script());
        fiskai::config::config cfg;
        cfg.llm.model = "claude-test";
        std::filesystem::create_directories(dir / "runs");
        h = std::make_unique<fiskai::test::session_harness>(cfg, (dir / "runs").string(),
                                                            fiskai::test::fake_model_provider(fake->port()));
        toolkit::function_tool_spec spec;
        spec.name = "guarded";
        spec.description = "Changes something; needs approval.";
        spec.exposed = toolkit::exposure::everywhere();
        spec.confirm = toolkit::confirm_posture::required;
        spec.handler = [runs = guarded_runs](const json::object&,
                                             const toolkit::call_options&) -> asio::awaitable<toolkit::outcome> {
            ++*runs;
            co_return toolkit::outcome::from_json(json::value("changed"));
        };
        h->rt->tools.push_back(toolkit::make_function_tool(std::move(spec)));

        server = std::make_unique<serve::server>(h->ioc.get_executor(), h->rt, serve::server_options{});
        serve::a2a_channel_options o;
        o.identity = "svc";
        o.elicitation = elicitation;
        o.tool_names = {"guarded"};
        channel = std::make_shared<serve::a2a_channel>(*worker_conn, h->ioc.get_executor(), h->store, o);
        serve::channel_options co;
        co.deliveries_repeat = false;
        server->add(channel, co);
        finished = asio::co_spawn(h->ioc, server->run(), asio::use_future);
    }
    ~fixture() {
        if (finished.valid()) {
            server->drain();
            run_until(
                h->ioc, [&] { return finished.wait_for(0s) == std::future_status::ready; }, 30s);
        }
        channel.reset();
        server.reset();
        std::error_code ec;
        std::filesystem::remove_all(dir, ec);
    }

    bool until_terminal(const raw_caller& c) {
        return run_until(
            h->ioc,
            [&] {
                const auto n = c.count();
                if (n == 0) return false;
                auto m = c.at(n - 1);
                return std::holds_alternative<a2a::task_result>(m) || std::holds_alternative<a2a::task_error>(m);
            },
            30s);
    }
};

}  // namespace

TEST_CASE("a2a end to end: a task runs on the server and its reply set reaches the caller, a continuation follows up",
          "[serve][a2a][nats]") {
    fixture f(false);
    raw_caller caller(*f.caller_conn, "svc");
    caller.send(caller.task("E2E1", "hello there"));
    REQUIRE(f.until_terminal(caller));
    const auto session = serve::a2a_session_id("svc", "caller-1", "E2E1");
    check_reply_set(caller, "E2E1", session);
    CHECK(caller.at_as<a2a::task_ack>(0).accepted);
    auto status = std::get<a2a::status_block>(caller.at_as<a2a::task_event>(1).block);
    CHECK(status.phase == "calling-llm");
    CHECK(status.iteration == 1);
    auto result = caller.at_as<a2a::task_result>(caller.count() - 1);
    CHECK(result.stop_reason == "end_turn");
    CHECK(result.text == "first answer");

    // The same task again, as a continuation: the session exists now, so it is a follow-up.
    raw_caller again(*f.caller_conn, "svc");
    auto cont = again.task("E2E1", "and then?");
    cont.id = a2a::new_id();
    again.send(cont);
    REQUIRE(f.until_terminal(again));
    check_reply_set(again, "E2E1", session);
    CHECK(again.at_as<a2a::task_result>(again.count() - 1).text == "second answer");

    // A new task with the same id is a duplicate.
    raw_caller dup(*f.caller_conn, "svc");
    dup.send(dup.task("E2E1"));
    REQUIRE(f.until_terminal(dup));
    CHECK(dup.at_as<a2a::task_error>(1).code == "duplicate_task");

    f.server->drain();
    REQUIRE(run_until(
        f.h->ioc, [&] { return f.finished.wait_for(0s) == std::future_status::ready; }, 30s));
    f.finished.get();
}

TEST_CASE("a2a end to end: the confirm gate asks over a2a and the caller's approval lets the tool run",
          "[serve][a2a][nats]") {
    fixture f(true);
    raw_caller caller(*f.caller_conn, "svc");
    caller.send(caller.task("E2E2", "GUARD this"));
    std::optional<a2a::task_question> question;
    REQUIRE(run_until(
        f.h->ioc,
        [&] {
            for (std::size_t i = 0; i < caller.count(); ++i) {
                auto m = caller.at(i);
                if (auto* q = std::get_if<a2a::task_question>(&m)) {
                    question = *q;
                    return true;
                }
            }
            return false;
        },
        30s));
    CHECK(question->kind == "approval");
    CHECK(question->tool == "guarded");
    CHECK(question->call_id == "toolu_1");
    a2a::task_answer a;
    a.question_id = question->question_id;
    a.decision = "once";
    caller.answer(a);
    REQUIRE(f.until_terminal(caller));
    check_reply_set(caller, "E2E2", serve::a2a_session_id("svc", "caller-1", "E2E2"));
    CHECK(*f.guarded_runs == 1);
    auto result = caller.at_as<a2a::task_result>(caller.count() - 1);
    CHECK(result.text == "allowed as expected");
}
