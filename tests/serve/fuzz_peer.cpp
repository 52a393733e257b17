// Fuzz target over what the served agent's channels read from peers it does not control:
// Slack's Socket Mode frames (events, clicks, the thread history a reply reads, the button
// values it minted) and the text it posts back, and the queue's jobs and JetStream
// advisories. The first byte picks the reader, the rest is the peer's bytes. Nothing may
// crash, leak or invoke undefined behaviour, and:
// - a button value that decodes re-encodes to a value that decodes to the same;
// - an answer split for Slack loses nothing but the whitespace at the cuts, and each part
//   fits the limit;
// - a job is either admitted with its task and session named, or refused with a reason.
//
// Built with the shared driver in tests/support, and under clang's libFuzzer when
// FISKAI_LIBFUZZER_ALL is on (cmake/FiskaiFuzz.cmake).

#include "../support/fuzz_fail.hpp"

#include <fiskai/serve/queue_rules.hpp>
#include <fiskai/serve/slack_rules.hpp>

#include <boost/json.hpp>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace {

namespace json = boost::json;
namespace slack = fiskai::serve::slack_rules;
namespace queue = fiskai::serve::queue_rules;

[[noreturn]] void fail(std::string_view what, std::string_view text) {
    fiskai::fuzz::fail("serve fuzz_peer", what, text);
}

std::string without_blanks(std::string_view s) {
    std::string out;
    for (const char c : s) {
        if (c != ' ' && c != '\t' && c != '\r' && c != '\n') out += c;
    }
    return out;
}

void slack_frame(std::string_view text) {
    const auto f = slack::parse_frame(text);
    if (!f) return;
    (void)slack::ack_text(f->envelope_id);
    (void)slack::fatal_disconnect(f->reason);
    const slack::self_identity me{"UBOT", "BBOT", "T1"};
    const std::vector<std::string> channels{"C1"};
    std::string why;
    if (const auto m = slack::classify_event(f->payload, me, channels, why)) {
        if (m->ts.empty() || m->thread_ts.empty()) fail("an admitted message has no ts or thread", text);
        (void)slack::compose_prompt(m->prompt, "context");
    } else if (why.empty()) {
        fail("an ignored event has no reason", text);
    }
    why.clear();
    if (const auto c = slack::parse_click(f->payload, why)) {
        (void)slack::approval_choice(c->value.choice);
        (void)slack::choice_label(c->value, {"a", "b"});
        (void)slack::given_up_blocks(c->message_blocks);
        (void)slack::noted_blocks(c->message_blocks, "note");
        (void)slack::answered_message(c->question_text, c->choice_text, c->user);
    } else if (why.empty()) {
        fail("an ignored interaction has no reason", text);
    }
    // conversations.replies hands back `messages`: read as a thread's history.
    const auto* messages = f->payload.if_contains("messages");
    (void)slack::thread_context(messages != nullptr ? *messages : json::value(f->payload), "1.0", me, 256);
    if (const auto* blocks = f->payload.if_contains("blocks")) {
        (void)slack::given_up_blocks(*blocks);
        (void)slack::noted_blocks(*blocks, "note");
    }
}

void slack_text(std::string_view text) {
    if (const auto v = slack::decode_value(text)) {
        const auto wire = slack::encode_value(*v);
        const auto again = slack::decode_value(wire);
        if (!again || !(*again == *v)) fail("a button value does not survive its own encoding", wire);
    }
    (void)slack::to_mrkdwn(text);
    (void)slack::escape(text);
    (void)slack::strip_mention(text, "UBOT");
    (void)slack::resume_prompt(text, text);
    constexpr std::size_t limit = 64;
    const auto parts = slack::split_answer(text, limit, 1000);
    std::string joined;
    for (const auto& part : parts) {
        if (part.empty()) fail("an answer was split into an empty part", text);
        if (part.size() > limit) fail("a part of an answer is over the limit", text);
        joined += part;
    }
    if (without_blanks(joined) != without_blanks(text)) fail("splitting an answer lost or changed text", text);
    (void)slack::split_answer(text, limit, 2);
}

void queue_job(std::string_view text) {
    const std::vector<std::string> tools{"stream_info", "fisk_ai_ask"};
    const std::optional<std::string> msg_id = text.size() % 2 == 0 ? std::optional<std::string>("m-1") : std::nullopt;
    const auto job = queue::decode_job(text, msg_id, "agent1", tools);
    if (const auto* admitted = std::get_if<queue::job>(&job)) {
        if (admitted->task.empty() || admitted->session_id.empty())
            fail("an admitted job names no task or session", text);
    } else if (std::get<queue::invalid_job>(job).error.empty()) {
        fail("a refused job has no reason", text);
    }
    (void)queue::parse_max_deliveries(text);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) return 0;
    const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
    switch (data[0] % 3) {
        case 0: slack_frame(text); break;
        case 1: slack_text(text); break;
        default: queue_job(text); break;
    }
    return 0;
}
