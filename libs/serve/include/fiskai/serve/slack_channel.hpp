#pragma once
// The Slack channel (serve.md §8): people mention the bot or write to it directly; each
// Slack thread is a session. Socket Mode (a TLS WebSocket opened with apps.connections.open)
// brings events and clicks, each envelope acked before anything else; the Web API posts the
// status message, the answer and questions as buttons that outlive the turn (a click after
// the question was given up, or after a restart, becomes a resume turn).
//
// The decisions live in slack_rules.hpp; this is the I/O around them. Everything runs on
// the executor given (one thread); the store must outlive the channel and its works.

#include <fiskai/gocompat/log.hpp>
#include <fiskai/serve/serve.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/system/result.hpp>

#include <chrono>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace fiskai::config {
struct slack_settings;
}  // namespace fiskai::config

namespace fiskai::runstate {
class store;
}  // namespace fiskai::runstate

namespace fiskai::serve {

// A startup failure (auth.test, apps.connections.open, no hello) or a fault (link_disabled,
// 10 failed reconnects): its text names the cause.
class slack_error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

struct slack_tokens {
    std::string app_token;  // xapp-…, Socket Mode
    std::string bot_token;  // xoxb-…, the Web API
};

// Tokens from the environment only (§8.1): `slack: environment variable <NAME> is not set;
// export the bot token (xoxb-…)` (or the app-level token, xapp-…) when one is missing.
[[nodiscard]] boost::system::result<slack_tokens, std::string> slack_tokens_from_environment(
    std::string_view app_token_env = "SLACK_APP_TOKEN", std::string_view bot_token_env = "SLACK_BOT_TOKEN");

struct slack_channel_options {
    std::string identity;
    slack_tokens tokens;
    std::string api_base_url = "https://slack.com/api";
    std::vector<std::string> channels;   // empty: any channel the bot is in
    std::vector<std::string> approvers;  // empty: anybody may click approvals
    std::size_t max_admitted = 64;
    std::chrono::nanoseconds question_timeout = std::chrono::minutes(10);
    std::string ca_file;  // extra CA certificates (tests)
    gocompat::logger log;
    // Slack's and §8's figures; tests shorten them.
    std::chrono::nanoseconds question_timeout_floor = std::chrono::seconds(30);
    std::chrono::nanoseconds status_interval = std::chrono::seconds(2);
    std::chrono::nanoseconds ping_interval = std::chrono::seconds(30);
    std::chrono::nanoseconds pong_timeout = std::chrono::seconds(5);
    std::chrono::nanoseconds hello_timeout = std::chrono::seconds(10);
    std::chrono::nanoseconds reconnect_backoff = std::chrono::seconds(1);
    std::chrono::nanoseconds reconnect_backoff_max = std::chrono::seconds(30);
    std::chrono::nanoseconds call_timeout = std::chrono::seconds(30);
    // Answered and given-up questions remembered for later clicks (a second click is told
    // "already decided"): the newest this many, each this long. Older ones are forgotten,
    // and a click on one is handled as after a restart.
    std::size_t closed_questions_kept = 1024;
    std::chrono::nanoseconds closed_question_ttl = std::chrono::hours(24);
};

// The options from expose.agent.slack: tokens from the environment variables it names, the
// API base URL under the URL policy (https, or http to loopback); question_timeout is floored
// at 30 s by the question window (libs/config warns). An error names the variable or the key.
[[nodiscard]] boost::system::result<slack_channel_options, std::string> slack_channel_options_from(
    const config::slack_settings& settings, std::string identity, gocompat::logger log);

class slack_channel final : public channel, public releasable, public fault_watch {
public:
    // `sessions` decides follow-ups and resume turns (exists()); null: no session exists.
    slack_channel(boost::asio::any_io_executor executor, std::shared_ptr<runstate::store> sessions,
                  slack_channel_options options);
    ~slack_channel() override;
    slack_channel(const slack_channel&) = delete;
    slack_channel& operator=(const slack_channel&) = delete;

    // auth.test, apps.connections.open, the WebSocket and its hello; throws slack_error.
    boost::asio::awaitable<void> start();

    [[nodiscard]] std::string_view name() const override { return "slack"; }
    boost::asio::awaitable<std::unique_ptr<work>> next() override;
    // §8.7: refuse new events (posted), edit queued turns "Not started", wait for posting,
    // then next() ends; the socket closes last, once every work handed out has reported.
    void release() override;
    // A fault reaches the server here even while every slot is busy and next() is not called.
    boost::asio::awaitable<void> ended() override;

    // The banner line: `slack: Socket Mode as <@U…> on team <T>, <n> channels|any channel`.
    [[nodiscard]] std::string description() const;
    // For tests.
    [[nodiscard]] std::size_t admitted() const noexcept;
    [[nodiscard]] std::size_t open_questions() const noexcept;
    [[nodiscard]] std::size_t known_questions() const noexcept;  // open, and closed still remembered
    [[nodiscard]] std::size_t connections() const noexcept;      // sockets opened so far
    [[nodiscard]] bool socket_open() const noexcept;

    struct impl;

private:
    std::shared_ptr<impl> impl_;
};

}  // namespace fiskai::serve
