#pragma once
// Asking a human. A surface that can reach one supplies a prompter; one that cannot
// passes the default-deny prompter, so every gate fails closed.

#include <boost/asio/awaitable.hpp>

#include <string>

namespace fiskai::toolkit {

enum class approval { allow_once, allow_for_run, deny };

struct approval_request {
    std::string tool_name;
    std::string command_line;  // what would run, for the human to read
    std::string trigger_tag;   // why approval is needed
};

class prompter {
public:
    virtual ~prompter() = default;
    // Whether a human can be asked at all right now.
    [[nodiscard]] virtual bool can_prompt() const = 0;
    // By value: the coroutine owns the request for as long as the question is open.
    virtual boost::asio::awaitable<approval> ask_approval(approval_request request) = 0;
};

// Never asks, always denies.
class deny_prompter final : public prompter {
public:
    [[nodiscard]] bool can_prompt() const override { return false; }
    boost::asio::awaitable<approval> ask_approval(approval_request request) override;
};

// One shared instance; stateless.
[[nodiscard]] prompter& default_deny_prompter() noexcept;

}  // namespace fiskai::toolkit
