#include "async_test.hpp"

#include <fiskai/toolkit/confirm_gate.hpp>
#include <fiskai/toolkit/function_tool.hpp>

#include <boost/json/value.hpp>

#include <catch2/catch.hpp>

#include <stdexcept>

using namespace fiskai::toolkit;
using fiskai::test::run_awaitable;

namespace {

// An operator whose answers are scripted, counting how often it was asked.
class scripted_prompter final : public prompter {
public:
    explicit scripted_prompter(approval a, bool reachable = true, bool fail = false)
        : answer_(a), reachable_(reachable), fail_(fail) {}
    [[nodiscard]] bool can_prompt() const override { return reachable_; }
    boost::asio::awaitable<approval> ask_approval(approval_request r) override {
        ++asked;
        last = r;
        if (fail_) throw std::runtime_error("the terminal went away");
        co_return answer_;
    }
    int asked = 0;
    approval_request last;

private:
    approval answer_;
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

gate_decision check(confirm_gate& g, const tool& t, prompter& p) { return run_awaitable(g.check(t, "rm -- X", p)); }

}  // namespace

TEST_CASE("an ungated tool passes without asking", "[gate]") {
    confirm_gate g;
    scripted_prompter p(approval::deny);
    CHECK(check(g, *gated_tool(confirm_posture::not_required), p).allowed);
    CHECK(p.asked == 0);
}

TEST_CASE("allow once asks every time; allow for the run remembers the tool", "[gate]") {
    confirm_gate g;
    auto t = gated_tool();
    scripted_prompter once(approval::allow_once);
    CHECK(check(g, *t, once).allowed);
    CHECK(check(g, *t, once).allowed);
    CHECK(once.asked == 2);
    CHECK(once.last.command_line == "rm -- X");
    CHECK(once.last.trigger_tag == "ai:confirm");

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

TEST_CASE("the default-deny prompter fails closed", "[gate]") {
    CHECK_FALSE(default_deny_prompter().can_prompt());
    CHECK_THROWS_WITH(run_awaitable(default_deny_prompter().ask_approval({})),
                      "no operator is available to answer on this path");
}

TEST_CASE("the denial result is a non-error JSON object", "[gate]") {
    auto o = denial_outcome("because");
    CHECK_FALSE(o.is_error());
    CHECK(o.render() == R"({"allowed":false,"reason":"because"})");
}
