#pragma once
// The Slack channel's decisions, free of I/O (serve.md §8, Amendments 14 and 18): Socket
// Mode frames, which events are turns, dedupe of envelopes and events, mrkdwn, answers
// split under Slack's limits, status texts, and the block/action conventions of questions
// as buttons (§8.4). The channel (slack_channel.hpp) moves bytes and timers around them.

#include <fiskai/serve/serve.hpp>
#include <fiskai/toolkit/prompter.hpp>

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <chrono>
#include <cstddef>
#include <list>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace fiskai::runstate {
struct run_state;
}  // namespace fiskai::runstate

namespace fiskai::serve::slack_rules {

// The texts (exact, §8.2-§8.7).
namespace text {
inline constexpr std::string_view queued = ":hourglass_flowing_sand: Queued";
inline constexpr std::string_view working = ":gear: Working…";
inline constexpr std::string_view done = ":white_check_mark: Done";
inline constexpr std::string_view waiting = ":speech_balloon: Waiting for your answer above";
inline constexpr std::string_view stopped = ":pause_button: Stopped — mention me to continue";
inline constexpr std::string_view not_started =
    ":warning: Not started: I was restarting. Please send your message again.";
inline constexpr std::string_view restarting =
    "I'm restarting and can't take this now; please send it again in a minute.";
inline constexpr std::string_view restarting_click = "I'm restarting; click again in a minute.";
inline constexpr std::string_view reply_to_answer = "Reply in this thread to answer.";
inline constexpr std::string_view no_answer_yet =
    "No answer yet. You can still answer: the conversation will continue from your answer.";
inline constexpr std::string_view already_decided = "already decided";
}  // namespace text

[[nodiscard]] std::string busy_text(std::size_t admitted);  // `I'm busy with <n> requests; please try again shortly.`

// ---- Socket Mode frames ----
struct frame {
    enum class kind { hello, disconnect, envelope, other };
    kind what = kind::other;
    std::string reason;       // disconnect
    std::string envelope_id;  // envelope
    std::string type;         // envelope: events_api, interactive, slash_commands
    boost::json::object payload;
    std::int64_t retry_attempt = 0;
};
// nullopt for text that is not a JSON object.
[[nodiscard]] std::optional<frame> parse_frame(std::string_view text);
[[nodiscard]] std::string ack_text(std::string_view envelope_id);
// A disconnect reason after which the channel must not reconnect (a fault).
[[nodiscard]] bool fatal_disconnect(std::string_view reason) noexcept;

// ---- Dedupe (§8.1, Amendment 14): an LRU of ids, each for `ttl`. ----
class seen_ids {
public:
    explicit seen_ids(std::size_t capacity = 10000, std::chrono::seconds ttl = std::chrono::hours(1))
        : capacity_(capacity), ttl_(ttl) {}
    // True the first time an id is seen (within its ttl); an empty id is never a duplicate.
    bool first_time(const std::string& id, std::chrono::steady_clock::time_point now);
    [[nodiscard]] std::size_t size() const noexcept { return order_.size(); }

private:
    std::size_t capacity_;
    std::chrono::seconds ttl_;
    std::list<std::pair<std::string, std::chrono::steady_clock::time_point>> order_;  // oldest first
    std::unordered_map<std::string, decltype(order_)::iterator> index_;
};

// ---- Intake (§8.2) ----
struct self_identity {
    std::string bot_user;  // auth.test user_id
    std::string bot_id;    // auth.test bot_id
    std::string team;
};

struct human_message {
    enum class kind { mention, direct, thread_reply };
    kind what = kind::mention;
    std::string event_id, team, channel, user, ts;
    std::string thread_ts;   // the session's thread: the event's thread_ts, or its ts at the top level
    bool in_thread = false;  // the message itself was in an existing thread
    std::string prompt;      // the text with <@BOT> removed, trimmed
};

// An events_api payload → a human message the channel may act on, or nullopt with `why`
// (the bot's own message, a subtype, an edit, an empty mention, a channel not listed…).
[[nodiscard]] std::optional<human_message> classify_event(const boost::json::object& payload, const self_identity& me,
                                                          const std::vector<std::string>& channels, std::string& why);
[[nodiscard]] std::string strip_mention(std::string_view text, std::string_view bot_user);

// `<@U…>: text` lines of a thread's earlier messages (conversations.replies), the bot's own
// and the current message left out, capped at `cap` bytes (the newest kept).
[[nodiscard]] std::string thread_context(const boost::json::value& replies, std::string_view current_ts,
                                         const self_identity& me, std::size_t cap = 32 * 1024);
// The opening prompt with its context block.
[[nodiscard]] std::string compose_prompt(std::string_view prompt, std::string_view context);

// ---- Text (§8.3, §8.5) ----
[[nodiscard]] std::string escape(std::string_view s);
// Escaped and at most `max_runes` characters long, cut before an entity or a rune that
// would not fit whole (Slack counts the escaped text against its limits).
[[nodiscard]] std::string escape_capped(std::string_view s, std::size_t max_runes);
// Escaped, then `**x**`→`*x*`, `# h`→`*h*`, `[t](u)`→`<u|t>` for http(s) and mailto
// targets only (any other target stays text: `<@U…|t>` would be a mention).
[[nodiscard]] std::string to_mrkdwn(std::string_view markdown);
// Parts of at most `limit` bytes cut at paragraph, then line, then space, then UTF-8
// boundaries; at most `max_parts`, the last followed by `[answer trimmed: <n> more characters]`.
[[nodiscard]] std::vector<std::string> split_answer(std::string_view text, std::size_t limit = 3900,
                                                    std::size_t max_parts = 10);
// The status line a finished turn ends with.
[[nodiscard]] std::string status_for(const outcome& o);

// ---- Questions as buttons (§8.4, Amendment 14) ----
struct action_value {
    std::string question_id;
    std::string kind;  // confirm, select, approval
    std::string choice;
    std::string call_id;
    friend bool operator==(const action_value&, const action_value&) = default;
};
[[nodiscard]] std::string encode_value(const action_value& v);  // {"v":1,"q","k","c","call"?}
[[nodiscard]] std::optional<action_value> decode_value(std::string_view text);

struct question_message {
    std::string text;  // plain text fallback
    boost::json::value blocks;
};
[[nodiscard]] question_message approval_message(const toolkit::approval_request& r, std::string_view question_id);
[[nodiscard]] question_message tool_question_message(const toolkit::question& q, std::string_view question_id);

// The readable answer a choice stands for (`Yes`, the option text, `Allow once`…).
[[nodiscard]] std::string choice_label(const action_value& v, const std::vector<std::string>& options);
[[nodiscard]] std::optional<toolkit::approval> approval_choice(std::string_view choice);

struct click {
    std::string envelope_id, team, channel, thread_ts, message_ts, user;
    action_value value;
    std::string question_text;          // the question message's section text, sanitized
    std::string choice_text;            // the label of what was clicked, sanitized
    boost::json::value message_blocks;  // the clicked message's blocks as the person saw them (null: none)
};
// A block_actions payload → the click on one of our controls, or nullopt with `why`.
// The thread comes from container.thread_ts, else message.thread_ts (Amendment 18).
[[nodiscard]] std::optional<click> parse_click(const boost::json::object& payload, std::string& why);

// The answered question, controls removed: `<answer> — answered by <@U>`.
[[nodiscard]] question_message answered_message(std::string_view question_text, std::string_view answer,
                                                std::string_view user);
// The given-up question: the blocks kept, a context line added (§8.4).
[[nodiscard]] boost::json::value given_up_blocks(const boost::json::value& blocks);
// A resume turn's prompt for a confirm/select answered late.
[[nodiscard]] std::string resume_prompt(std::string_view question_text, std::string_view answer);

// Whether the session's journal still holds `call_id` as a gated call awaiting a decision:
// a tool call of the pending (unfinished) batch with no result. A late approval click is a
// resume turn only then (§8.4); otherwise the decision was taken and the click only edits
// the message (Amendment 14). Read from the journal, so it holds after a restart.
[[nodiscard]] bool awaiting_decision(const runstate::run_state& session, std::string_view call_id);

// The question's blocks with a context line `note` in place of any earlier context line,
// the controls kept: what a click during a restart leaves (§8.7).
[[nodiscard]] boost::json::value noted_blocks(const boost::json::value& blocks, std::string_view note);

}  // namespace fiskai::serve::slack_rules
