#pragma once
// Asking a human. A surface that can reach one supplies a prompter; one that cannot
// passes the default-deny prompter, so every gate fails closed. Every reply says how the
// asking ended (serve.md §3.5): answered, declined, silent (nobody answered in the
// window), cancelled (the run ended first) or unavailable (nobody can be asked).

#include <boost/asio/awaitable.hpp>

#include <chrono>
#include <string>
#include <vector>

namespace fiskai::toolkit {

enum class approval { allow_once, allow_for_run, deny };

enum class reply_status { answered, declined, silent, cancelled, unavailable };

struct approval_request {
    std::string tool_name;
    std::string command_line;  // what would run, for the human to read
    std::string trigger_tag;   // why approval is needed
    std::string call_id;       // the tool call it belongs to
};

struct approval_reply {
    reply_status status = reply_status::unavailable;
    approval choice = approval::deny;  // with answered
    std::string reason;                // with declined, cancelled, unavailable
    std::string question_id;           // when the surface minted one
};

struct question {
    enum class kind { confirm, select, input };
    kind what = kind::confirm;
    std::string text;
    std::vector<std::string> options;  // select
    std::string default_value;         // input
    std::string call_id;
    std::string tool_name;
};

struct question_reply {
    reply_status status = reply_status::unavailable;
    bool confirmed = false;  // confirm
    int selected = -1;       // select: an index into the options
    std::string value;       // input
    std::string reason;
    std::string question_id;
};

class prompter {
public:
    virtual ~prompter() = default;
    // Whether a human can be asked at all right now.
    [[nodiscard]] virtual bool can_prompt() const = 0;
    // By value: the coroutine owns the request for as long as the question is open.
    virtual boost::asio::awaitable<approval_reply> approve(approval_request request) = 0;
    virtual boost::asio::awaitable<question_reply> ask(question q) = 0;
};

// Never asks: every reply is `unavailable`, "no operator is available to answer on this path".
class deny_prompter final : public prompter {
public:
    [[nodiscard]] bool can_prompt() const override { return false; }
    boost::asio::awaitable<approval_reply> approve(approval_request request) override;
    boost::asio::awaitable<question_reply> ask(question q) override;
};

// One shared instance; stateless.
[[nodiscard]] prompter& default_deny_prompter() noexcept;

// Reserved (work::prompt_wait): asks `inner`, and answers `silent` when `wait` passes
// first. The inner question is cancelled then.
class bounded_prompter final : public prompter {
public:
    bounded_prompter(prompter& inner, std::chrono::steady_clock::duration wait) : inner_(inner), wait_(wait) {}
    [[nodiscard]] bool can_prompt() const override { return inner_.can_prompt(); }
    boost::asio::awaitable<approval_reply> approve(approval_request request) override;
    boost::asio::awaitable<question_reply> ask(question q) override;

private:
    prompter& inner_;
    std::chrono::steady_clock::duration wait_;
};

}  // namespace fiskai::toolkit
