#include "async_test.hpp"

#include <fiskai/toolkit/confirm_gate.hpp>
#include <fiskai/toolkit/function_tool.hpp>

#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json/value.hpp>

#include <catch2/catch.hpp>

#include <chrono>
#include <stdexcept>

using namespace fiskai::toolkit;
using fiskai::test::run_awaitable;

namespace {

// An operator whose answers are scripted, counting how often it was asked.
class scripted_prompter final : public prompter {
public:
    explicit scripted_prompter(approval a, bool reachable = true, bool fail = false)
        : reply_{reply_status::answered, a, {}, {}}, reachable_(reachable), fail_(fail) {}
    explicit scripted_prompter(approval_reply r) : reply_(std::move(r)), reachable_(true), fail_(false) {}
    [[nodiscard]] bool can_prompt() const override { return reachable_; }
    boost::asio::awaitable<approval_reply> approve(approval_request r) override {
        ++asked;
        last = r;
        if (fail_) throw std::runtime_error("the terminal went away");
        co_return reply_;
    }
    boost::asio::awaitable<question_reply> ask(question) override { co_return question_reply{}; }
    int asked = 0;
    approval_request last;

private:
    approval_reply reply_;
    bool reachable_;
    bool fail_;
};

tool_ptr gated_tool(confirm_posture p = confirm_posture::required) {
    return make_function_tool(
        {.name = "rm",
         .description = "remove",
         .exposed = exposure::none(),
         .confirm = p,
         .handler = [](const boost::json::object&, const call_options&) -> boost::asio::awaitable<outcome> {
             co_return outcome::from_json(true);
         }});
}

gate_decision check(confirm_gate& g, const tool& t, prompter& p) {
    return run_awaitable(g.check(t, "rm -- X", "toolu_1", p));
}

}  // namespace

TEST_CASE("an ungated tool passes without asking", "[gate]") {
    confirm_gate g;
    scripted_prompter p(approval::deny);
    CHECK(check(g, *gated_tool(confirm_posture::not_required), p).allowed);
    CHECK(p.asked == 0);
}

TEST_CASE("allow once asks every time, allow for the run remembers the tool", "[gate]") {
    confirm_gate g;
    auto t = gated_tool();
    scripted_prompter once(approval::allow_once);
    CHECK(check(g, *t, once).allowed);
    CHECK(check(g, *t, once).allowed);
    CHECK(once.asked == 2);
    CHECK(once.last.command_line == "rm -- X");
    CHECK(once.last.trigger_tag == "ai:confirm");
    CHECK(once.last.call_id == "toolu_1");

    scripted_prompter always(approval::allow_for_run);
    CHECK(check(g, *t, always).allowed);
    CHECK(check(g, *t, always).allowed);
    CHECK(always.asked == 1);
    CHECK(g.allowed_for_run("rm"));
}

TEST_CASE("every other answer denies with the reason", "[gate]") {
    auto t = gated_tool();
    confirm_gate g;
    scripted_prompter no(approval::deny);
    auto d = check(g, *t, no);
    CHECK_FALSE(d.allowed);
    CHECK(d.reason == reason_declined);

    scripted_prompter away(approval::allow_once, false);
    d = check(g, *t, away);
    CHECK_FALSE(d.allowed);
    CHECK(d.reason == reason_no_operator);
    CHECK(away.asked == 0);

    scripted_prompter broken(approval::allow_once, true, true);
    d = check(g, *t, broken);
    CHECK_FALSE(d.allowed);
    CHECK(d.reason ==
          "the operator did not permit this command: the terminal went away; this decision is final, do not retry");
}

TEST_CASE("a tool that cannot report its posture is gated", "[gate]") {
    confirm_gate g;
    CHECK_FALSE(check(g, *gated_tool(confirm_posture::unknown), default_deny_prompter()).allowed);
}

TEST_CASE("declined, unavailable and cancelled deny with their reason, silence aborts", "[gate]") {
    auto t = gated_tool();
    confirm_gate g;
    scripted_prompter declined({reply_status::declined, approval::deny, "not on a Friday", {}});
    auto d = check(g, *t, declined);
    CHECK_FALSE(d.allowed);
    CHECK_FALSE(d.aborted);
    CHECK(d.reason ==
          "the operator did not permit this command: not on a Friday; this decision is final, do not retry");
    scripted_prompter unavailable({reply_status::unavailable, approval::deny, "the terminal closed", {}});
    CHECK(check(g, *t, unavailable).reason ==
          "the operator did not permit this command: the terminal closed; this decision is final, do not retry");
    scripted_prompter cancelled({reply_status::cancelled, approval::deny, "context canceled", {}});
    CHECK(check(g, *t, cancelled).reason ==
          "the run ended before the operator could approve this command: context canceled; this decision is final, do "
          "not retry");
    scripted_prompter silent({reply_status::silent, approval::allow_once, {}, {}});
    d = check(g, *t, silent);
    CHECK_FALSE(d.allowed);
    CHECK(d.aborted);
    CHECK(d.reason == "approval for \"rm\" was not given in time; it will be asked again when the session resumes");
    CHECK_FALSE(g.allowed_for_run("rm"));
}

TEST_CASE("the default-deny prompter fails closed", "[gate]") {
    CHECK_FALSE(default_deny_prompter().can_prompt());
    const auto a = run_awaitable(default_deny_prompter().approve({}));
    CHECK(a.status == reply_status::unavailable);
    CHECK(a.choice == approval::deny);
    CHECK(a.reason == "no operator is available to answer on this path");
    const auto q = run_awaitable(default_deny_prompter().ask({}));
    CHECK(q.status == reply_status::unavailable);
    CHECK(q.reason == "no operator is available to answer on this path");
}

namespace {
// An operator who never answers until cancelled.
class absent_prompter final : public prompter {
public:
    [[nodiscard]] bool can_prompt() const override { return true; }
    boost::asio::awaitable<approval_reply> approve(approval_request) override {
        boost::asio::steady_timer t(co_await boost::asio::this_coro::executor, std::chrono::hours(1));
        co_await t.async_wait(boost::asio::use_awaitable);
        co_return approval_reply{reply_status::answered, approval::allow_once, {}, {}};
    }
    boost::asio::awaitable<question_reply> ask(question) override {
        boost::asio::steady_timer t(co_await boost::asio::this_coro::executor, std::chrono::hours(1));
        co_await t.async_wait(boost::asio::use_awaitable);
        co_return question_reply{};
    }
};
}  // namespace

TEST_CASE("the bounded prompter answers silent when its wait passes first", "[gate]") {
    absent_prompter nobody_home;
    bounded_prompter bounded(nobody_home, std::chrono::milliseconds(50));
    CHECK(bounded.can_prompt());
    CHECK(run_awaitable(bounded.approve({}), std::chrono::seconds(10)).status == reply_status::silent);
    CHECK(run_awaitable(bounded.ask({}), std::chrono::seconds(10)).status == reply_status::silent);
    confirm_gate g;
    const auto d = run_awaitable(g.check(*gated_tool(), "rm -- X", "toolu_2", bounded), std::chrono::seconds(10));
    CHECK(d.aborted);
}

TEST_CASE("the denial result is a non-error JSON object", "[gate]") {
    auto o = denial_outcome("because");
    CHECK_FALSE(o.is_error());
    CHECK(o.render() == R"({"allowed":false,"reason":"because"})");
}
