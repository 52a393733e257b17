#pragma once
// The state of fiskai-fake-slack without its sockets: messages posted and edited, the
// envelopes it builds for events and clicks, the block limits Slack enforces, rate limits.
// main.cpp is the Beast HTTP + WebSocket server around it.

#include <boost/json.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fiskai::fake_slack {

struct message {
    std::string channel, ts, thread_ts, text, user, bot_id;
    boost::json::value blocks;        // array or null
    boost::json::value first_blocks;  // as posted: a stale client still shows these
};

struct web_reply {
    int status = 200;
    boost::json::object body;
    std::optional<int> retry_after;  // seconds, for 429
};

class slack_state {
public:
    std::string bot_user = "UBOT", team = "T1", bot_id = "B1", bot_token = "xoxb-test", app_token = "xapp-test";

    // One Web API call: method name, bearer token (empty when absent), the arguments.
    web_reply call(std::string_view method, std::string_view token, const boost::json::object& args,
                   std::string_view socket_url);

    // Control API: an events_api envelope for a human message; adds the message to its thread.
    boost::json::object event_envelope(const boost::json::object& control, std::string& error);
    // Control API: an interactive block_actions envelope built from a posted message's controls.
    boost::json::object click_envelope(const boost::json::object& control, std::string& error);
    // Arms `count` 429 answers for `method`.
    void rate_limit(std::string method, int count, int retry_after) {
        limits_[std::move(method)] = {count, retry_after};
    }

    // Every post and edit, in order.
    [[nodiscard]] boost::json::array log() const { return log_; }
    [[nodiscard]] std::string next_envelope_id() { return "env-" + std::to_string(++envelopes_); }

private:
    std::string next_ts();
    boost::json::object message_json(const message& m) const;
    message* find(std::string_view channel, std::string_view ts);
    message* find_any(std::string_view ts);

    std::vector<message> messages_;
    boost::json::array log_;
    std::map<std::string, std::pair<int, int>> limits_;
    std::uint64_t ts_counter_ = 0, events_ = 0, envelopes_ = 0;
};

// Slack's block limits (section text ≤ 3000, button text ≤ 75, value ≤ 2000, option value ≤ 150,
// ≤ 25 elements per actions block, ≤ 50 blocks): the first violation, or empty.
std::string check_blocks(const boost::json::value& blocks);

}  // namespace fiskai::fake_slack
