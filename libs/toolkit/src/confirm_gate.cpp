#include <fiskai/toolkit/confirm_gate.hpp>
#include <fiskai/toolkit/tool.hpp>

#include <boost/json/object.hpp>

#include <boost/asio/this_coro.hpp>

#include <exception>

namespace fiskai::toolkit {
namespace {

std::string cancelled_text(std::string_view why) {
    return "the run ended before the operator could approve this command: " + std::string(why) +
           "; this decision is final, do not retry";
}

}  // namespace

outcome denial_outcome(std::string reason) {
    boost::json::object o;
    o["allowed"] = false;
    o["reason"] = std::move(reason);
    return outcome::from_json(std::move(o));
}

boost::asio::awaitable<gate_decision> confirm_gate::check(const tool& t, std::string command_line, std::string call_id,
                                                          prompter& asker) {
    const auto requirement = t.confirm();
    if (requirement.posture == confirm_posture::not_required) co_return gate_decision{true, {}};
    // A tool that cannot say whether it needs approval is treated as needing it.
    if (allow_list_.contains(t.name())) co_return gate_decision{true, {}};
    if (!asker.can_prompt()) co_return gate_decision{false, std::string(reason_no_operator)};
    const auto cancel_state = co_await boost::asio::this_coro::cancellation_state;
    if (cancel_state.cancelled() != boost::asio::cancellation_type::none) {
        co_return gate_decision{false, cancelled_text("context canceled")};
    }

    // A named request, not a temporary in the co_await expression: g++ 12 can destroy
    // such temporaries twice.
    approval_request request{t.name(), std::move(command_line), requirement.trigger_tag, std::move(call_id)};
    approval_reply reply;
    try {
        reply = co_await asker.approve(std::move(request));
    } catch (const std::exception& e) {
        reply = approval_reply{reply_status::unavailable, approval::deny, e.what(), {}};
    }
    switch (reply.status) {
        case reply_status::answered:
            if (reply.choice == approval::allow_for_run) allow_list_.insert(t.name());
            if (reply.choice != approval::deny) co_return gate_decision{true, {}};
            co_return gate_decision{false, std::string(reason_declined)};
        case reply_status::declined:
        case reply_status::unavailable:
            co_return gate_decision{false, "the operator did not permit this command: " + reply.reason +
                                               "; this decision is final, do not retry"};
        case reply_status::cancelled: co_return gate_decision{false, cancelled_text(reply.reason)};
        case reply_status::silent:
            co_return gate_decision{false,
                                    "approval for \"" + t.name() +
                                        "\" was not given in time; it will be asked again when the session resumes",
                                    true};
    }
    co_return gate_decision{false, std::string(reason_declined)};
}

}  // namespace fiskai::toolkit
