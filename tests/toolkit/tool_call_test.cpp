#include "async_test.hpp"

#include <fiskai/toolkit/function_tool.hpp>
#include <fiskai/toolkit/slots.hpp>
#include <fiskai/toolkit/tool_call.hpp>

#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json/parse.hpp>

#include <catch2/catch.hpp>

#include <stdexcept>

using namespace fiskai::toolkit;
using namespace std::chrono_literals;
using fiskai::test::run_awaitable;
namespace asio = boost::asio;
namespace json = boost::json;

namespace {

tool_ptr function(std::string name, confirm_posture confirm, function_handler handler, json::object schema = {}) {
    function_tool_spec s;
    s.name = std::move(name);
    s.description = "a test tool";
    s.exposed = exposure::everywhere();
    s.confirm = confirm;
    s.input_schema = std::move(schema);
    s.handler = std::move(handler);
    return make_function_tool(std::move(s));
}

asio::awaitable<outcome> never_returns(const json::object&, const call_options&) {
    asio::steady_timer forever(co_await asio::this_coro::executor, asio::steady_timer::time_point::max());
    co_await forever.async_wait(asio::use_awaitable);
    co_return outcome::from_json("unreachable");
}

asio::awaitable<outcome> answers(const json::object& args, const call_options&) {
    co_return outcome::from_json(json::value(args));
}

// A tool whose call throws past the tool's own handling, as a broken tool would.
class throwing_tool final : public tool {
public:
    const std::string& name() const override { return name_; }
    const std::string& title() const override { return name_; }
    const std::string& description() const override { return name_; }
    const std::string& model_description() const override { return name_; }
    const json::object& input_schema() const override { return schema_; }
    const std::vector<std::string>& tags() const override { return tags_; }
    exposure exposed() const override { return exposure::everywhere(); }
    confirm_requirement confirm() const override { return {confirm_posture::not_required, {}}; }
    tool_kind kind() const override { return tool_kind::builtin; }
    asio::awaitable<outcome> call(json::value, call_options) override {
        throw std::runtime_error("the pipe broke");
        co_return outcome::failure("unreachable");
    }

private:
    std::string name_ = "thrower";
    json::object schema_{{"type", "object"}};
    std::vector<std::string> tags_;
};

}  // namespace

TEST_CASE("the deadline is raced for every kind of tool, and the count comes back", "[tool_call]") {
    auto t = function("stuck", confirm_posture::not_required, never_returns);
    std::size_t in_flight = 0;
    tool_call_policy p;
    p.timeout = 100ms;
    p.in_flight = &in_flight;
    std::size_t seen_during = 0;
    p.on_start = [&](const tool&, const std::string&) { seen_during = in_flight; };
    const auto r = run_awaitable(run_tool_call(t, json::object{}, std::move(p)), 10s);
    CHECK(r.is_error());
    CHECK(r.error_message() == R"(running tool "stuck": context deadline exceeded (timed out after 100ms))");
    CHECK(seen_during == 1);
    CHECK(in_flight == 0);
}

TEST_CASE("a call cancelled from outside ends, with its work alongside, and reports once", "[tool_call]") {
    using namespace asio::experimental::awaitable_operators;
    auto t = function("stuck", confirm_posture::not_required, never_returns);
    std::size_t in_flight = 0;
    int ticks = 0;
    bool alongside_ended = false;
    int finishes = 0;
    std::string reported;
    tool_call_policy p;
    p.in_flight = &in_flight;  // no timeout: only the cancellation can end it
    p.alongside = [&](const tool&, const std::string&) -> asio::awaitable<void> {
        struct on_exit {
            bool* flag;
            ~on_exit() { *flag = true; }
        } guard{&alongside_ended};
        for (;;) {  // as keepalives run: a timer loop that ends only by being cancelled
            asio::steady_timer tick(co_await asio::this_coro::executor, 5ms);
            co_await tick.async_wait(asio::use_awaitable);
            ++ticks;
        }
    };
    p.on_finish = [&](const tool&, const std::string&, const outcome& o, std::chrono::steady_clock::duration) {
        ++finishes;
        reported = o.error_message();
    };
    auto caller = [&]() -> asio::awaitable<void> {
        asio::steady_timer stop(co_await asio::this_coro::executor, 60ms);
        co_await (run_tool_call(t, json::object{}, std::move(p)) || stop.async_wait(asio::use_awaitable));
    };
    run_awaitable(caller(), 10s);
    CHECK(ticks > 0);
    CHECK(alongside_ended);
    CHECK(finishes == 1);
    INFO(reported);
    CHECK(reported.find("anceled") != std::string::npos);  // the call's own words, not a deadline's
    CHECK(in_flight == 0);
}

TEST_CASE("work alongside a call that fails does not end the call", "[tool_call]") {
    auto slow_answer = [](const json::object& args, const call_options&) -> asio::awaitable<outcome> {
        asio::steady_timer wait(co_await asio::this_coro::executor, 30ms);
        co_await wait.async_wait(asio::use_awaitable);
        co_return outcome::from_json(json::value(args));
    };
    auto t = function("slow", confirm_posture::not_required, slow_answer);
    tool_call_policy p;
    p.timeout = 5s;
    p.alongside = [](const tool&, const std::string&) -> asio::awaitable<void> {
        throw std::runtime_error("the keepalive could not be sent");
        co_return;
    };
    const auto r = run_awaitable(run_tool_call(t, json::object{{"n", 1}}, std::move(p)), 10s);
    CHECK_FALSE(r.is_error());
}

TEST_CASE("an exception from a tool is its call's failure, not the caller's", "[tool_call]") {
    std::size_t in_flight = 0;
    tool_call_policy p;
    p.in_flight = &in_flight;
    bool finished = false;
    p.on_finish = [&](const tool&, const std::string&, const outcome& o, std::chrono::steady_clock::duration) {
        finished = o.is_error();
    };
    const auto r = run_awaitable(run_tool_call(std::make_shared<throwing_tool>(), nullptr, std::move(p)));
    CHECK(r.error_message() == R"(running tool "thrower": the pipe broke)");
    CHECK(finished);
    CHECK(in_flight == 0);
}

TEST_CASE("arguments are checked before approval is asked for", "[tool_call]") {
    auto t = function(
        "gated", confirm_posture::required, answers,
        json::parse(R"({"type":"object","required":["n"],"properties":{"n":{"type":"integer"}}})").as_object());
    int asked = 0;
    tool_call_policy p;
    p.approve = [&](const tool&, std::string) -> asio::awaitable<std::optional<outcome>> {
        ++asked;
        co_return std::nullopt;
    };
    SECTION("invalid arguments never reach the gate") {
        const auto r = run_awaitable(run_tool_call(t, json::parse(R"({"n":"x"})"), p));
        CHECK_THAT(r.error_message(), Catch::StartsWith(R"(invalid arguments for tool "gated": property "n")"));
        CHECK(asked == 0);
    }
    SECTION("arguments that are not an object never reach the gate") {
        const auto r = run_awaitable(run_tool_call(t, json::parse("[1]"), p));
        CHECK(r.error_message() == R"(invalid arguments for tool "gated": arguments must be an object)");
        CHECK(asked == 0);
    }
    SECTION("valid arguments are asked about, then run") {
        const auto r = run_awaitable(run_tool_call(t, json::parse(R"({"n":2})"), p));
        CHECK_FALSE(r.is_error());
        CHECK(asked == 1);
    }
}

TEST_CASE("a gated tool on a surface that cannot ask is refused", "[tool_call]") {
    auto t = function("gated", confirm_posture::required, answers);
    const auto r = run_awaitable(run_tool_call(t, json::object{}, tool_call_policy{}));
    CHECK(r.error_message() ==
          R"(tool "gated" needs approval and nobody on this surface can give it, so it is not run)");
}

TEST_CASE("a denial from the approval step is the answer", "[tool_call]") {
    auto t = function("gated", confirm_posture::required, answers);
    tool_call_policy p;
    p.approve = [](const tool&, std::string line) -> asio::awaitable<std::optional<outcome>> {
        co_return outcome::failure("denied: " + line);
    };
    const auto r = run_awaitable(run_tool_call(t, json::object{}, std::move(p)));
    CHECK(r.error_message() == "denied: gated");
}

TEST_CASE("the slot is taken after approval and freed before the finish is reported", "[tool_call]") {
    auto t = function("quick", confirm_posture::not_required, answers);
    const auto r = run_awaitable([&]() -> asio::awaitable<std::size_t> {
        slot_pool pool(co_await asio::this_coro::executor, 1);
        tool_call_policy p;
        p.slots = &pool;
        std::size_t during = 99, at_finish = 99;
        p.on_start = [&](const tool&, const std::string&) { during = pool.available(); };
        p.on_finish = [&](const tool&, const std::string&, const outcome&, std::chrono::steady_clock::duration) {
            at_finish = pool.available();
        };
        (void)co_await run_tool_call(t, json::object{}, std::move(p));
        CHECK(during == 0);
        co_return at_finish;
    }());
    CHECK(r == 1);
}

TEST_CASE("a deferral reaches only a surface that can carry the later answer", "[tool_call]") {
    auto t = function("ask_human_input", confirm_posture::not_required,
                      [](const json::object&, const call_options&) -> asio::awaitable<outcome> {
                          co_return outcome::deferral(json::parse(R"({"value":null,"deferred":true})"), "q1");
                      });
    const auto refused = run_awaitable(run_tool_call(t, json::object{}, tool_call_policy{}));
    CHECK(refused.error_message() == R"(tool "ask_human_input" deferred a question, which this surface cannot carry)");
    tool_call_policy agent;
    agent.carries_deferral = true;
    const auto carried = run_awaitable(run_tool_call(t, json::object{}, std::move(agent)));
    CHECK(carried.is_deferral());
    CHECK(carried.deferred_question_id() == "q1");
    CHECK_FALSE(carried.is_error());
}
