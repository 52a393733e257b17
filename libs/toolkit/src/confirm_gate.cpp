#include <fiskai/toolkit/confirm_gate.hpp>
#include <fiskai/toolkit/tool.hpp>

#include <boost/json/object.hpp>

#include <exception>

namespace fiskai::toolkit {

outcome denial_outcome(std::string reason) {
    boost::json::object o;
    o["allowed"] = false;
    o["reason"] = std::move(reason);
    return outcome::from_json(std::move(o));
}

boost::asio::awaitable<gate_decision> confirm_gate::check(const tool& t, std::string command_line, prompter& asker) {
    const auto requirement = t.confirm();
    if (requirement.posture == confirm_posture::not_required) co_return gate_decision{true, {}};
    // A tool that cannot say whether it needs approval is treated as needing it.
    if (allow_list_.contains(t.name())) co_return gate_decision{true, {}};
    if (!asker.can_prompt()) co_return gate_decision{false, std::string(reason_no_operator)};

    approval answer = approval::deny;
    // A named request, not a temporary in the co_await expression: g++ 12 can destroy
    // such temporaries twice.
    const approval_request request{t.name(), std::move(command_line), requirement.trigger_tag};
    try {
        answer = co_await asker.ask_approval(request);
    } catch (const std::exception& e) {
        co_return gate_decision{false, std::string("the operator did not permit this command: ") + e.what() +
                                           "; this decision is final, do not retry"};
    }
    switch (answer) {
        case approval::allow_once: co_return gate_decision{true, {}};
        case approval::allow_for_run: allow_list_.insert(t.name()); co_return gate_decision{true, {}};
        case approval::deny: break;
    }
    co_return gate_decision{false, std::string(reason_declined)};
}

}  // namespace fiskai::toolkit
