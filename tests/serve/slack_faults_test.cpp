// The Slack channel's races and restarts (serve.md §8.4, §8.7, Amendment 14): a click racing
// the question window's end, late approval clicks after a worker restart, and the drain of a
// full admission queue. Real fiskai-fake-slack, fiskai-fake-llm, server, agent and journal.

#include "slack_support.hpp"

#include <random>

using namespace slack_test;

namespace {

struct thread_view {
    std::size_t queued_posts = 0;     // status messages posted: one per turn admitted
    std::size_t done_edits = 0;       // statuses that ended Done
    std::size_t answers = 0;          // "allowed as expected" posts
    std::size_t given_up_edits = 0;   // the question edited "No answer yet…"
    std::size_t answered_edits = 0;   // the question edited "Allow once — answered by <@U1>"
    std::size_t decided_edits = 0;    // the question edited "already decided — answered by …"
    std::vector<std::string> status;  // every text the first status message showed, in order
    std::string question_last;        // the text the first question message shows last
};

bool has_context(const json::object& m, std::string_view text) {
    const auto* blocks = m.if_contains("blocks");
    if (blocks == nullptr || !blocks->is_array()) return false;
    for (const auto& b : blocks->get_array()) {
        if (b.at("type") != "context") continue;
        for (const auto& e : b.at("elements").as_array())
            if (e.at("text").as_string() == text) return true;
    }
    return false;
}

thread_view view(const json::array& messages) {
    thread_view v;
    std::string first_status_ts, question_ts;
    for (const auto& m : messages) {
        const auto& o = m.as_object();
        const std::string_view op = o.at("op").as_string(), text = o.at("text").as_string();
        if (op == "post" && question_ts.empty() && o.contains("blocks"))
            question_ts = std::string(o.at("ts").as_string());
        if (!question_ts.empty() && o.at("ts").as_string() == question_ts) v.question_last = std::string(text);
        if (op == "post" && text == rules::text::queued) {
            ++v.queued_posts;
            if (first_status_ts.empty()) first_status_ts = std::string(o.at("ts").as_string());
        }
        if (op == "post" && text == "allowed as expected") ++v.answers;
        if (op == "update" && text == rules::text::done) ++v.done_edits;
        if (op == "update" && has_context(o, rules::text::no_answer_yet)) ++v.given_up_edits;
        if (op == "update" && text == "Allow once — answered by <@U1>") ++v.answered_edits;
        if (op == "update" && text == "already decided — answered by <@U1>") ++v.decided_edits;
        if (op == "update" && o.at("ts").as_string() == first_status_ts) v.status.emplace_back(text);
    }
    return v;
}

// Runs the io_context until `until`, in slices short enough to land within a millisecond.
void pump_to(slack_fixture& f, std::chrono::steady_clock::time_point until) {
    for (auto now = std::chrono::steady_clock::now(); now < until; now = std::chrono::steady_clock::now()) {
        if (f.h->ioc.stopped()) f.h->ioc.restart();
        f.h->ioc.run_one_for(std::min<std::chrono::steady_clock::duration>(until - now, 1ms));
    }
}

// Like pump_until, but the condition (an HTTP poll of the fake) is asked every `every`.
bool poll_until(slack_fixture& f, const std::function<bool()>& condition, std::chrono::steady_clock::duration deadline,
                std::chrono::steady_clock::duration every = 15ms) {
    const auto end = std::chrono::steady_clock::now() + deadline;
    for (;;) {
        if (condition()) return true;
        if (std::chrono::steady_clock::now() >= end) return false;
        pump_to(f, std::min(end, std::chrono::steady_clock::now() + every));
    }
}

// The latest version of the question message in `thread` (one thread's log only).
std::optional<json::object> question_of(slack_fixture& f, std::string_view thread) {
    std::optional<json::object> found;
    for (const auto& m : f.thread_messages(thread)) {
        const auto& o = m.as_object();
        if (!o.contains("blocks") || !o.at("blocks").is_array()) continue;
        bool controls = false;
        for (const auto& b : o.at("blocks").as_array()) controls = controls || b.at("type") == "actions";
        if ((controls && !found) || (found && found->at("ts") == o.at("ts"))) found = o;
    }
    return found;
}

}  // namespace

TEST_CASE("slack: a click racing the window's end, 200 times: exactly one of delivered or given up", "[slack]") {
    constexpr auto window = 30ms;
    slack_fixture f([&](serve::slack_channel_options& o) {
        o.question_timeout = window;
        o.question_timeout_floor = 10ms;
    });
    constexpr int iterations = 200;
    const auto seed = std::random_device{}();
    INFO("seed " << seed);
    std::mt19937 rng(seed);
    std::uniform_int_distribution<int> jitter_us(-6000, 6000);
    // A staircase keeps the click on the boundary whatever the click's latency on this
    // machine: later after a delivery, earlier after a give-up; the jitter spreads it.
    auto offset = std::chrono::microseconds(0);
    const auto step = std::chrono::microseconds(1500);
    int delivered = 0, given_up = 0;
    const auto started = std::chrono::steady_clock::now();
    std::chrono::steady_clock::duration to_question{}, to_settled{};
    for (int round = 0; round < iterations; ++round) {
        INFO("round " << round);
        const auto said_at = std::chrono::steady_clock::now();
        const auto ts = f.say(fmt::format("<@UBOT> GUARD race {}", round));
        // The question is in the table the moment its window starts (same handler).
        REQUIRE(f.pump_until([&] { return f.ch->open_questions() == 1; }, 20s));
        const auto opened = std::chrono::steady_clock::now();
        const auto asked_at = opened;
        std::optional<json::object> q;
        REQUIRE(poll_until(
            f, [&] { return (q = question_of(f, ts)).has_value(); }, 10s, 5ms));
        pump_to(f, opened + window + offset + std::chrono::microseconds(jitter_us(rng)));
        f.click(q->at("ts").as_string(), 0);
        const auto clicked_at = std::chrono::steady_clock::now();
        to_question += asked_at - said_at;
        thread_view v;
        const bool settled = poll_until(
            f,
            [&] {
                v = view(f.thread_messages(ts));
                return v.answers == 1 && v.done_edits == 1 && v.answered_edits == 1;
            },
            20s, 5ms);
        if (!settled) {
            UNSCOPED_INFO(json::serialize(f.thread_messages(ts)));
            for (const auto& l : f.log_lines) UNSCOPED_INFO(l);
        }
        REQUIRE(settled);
        to_settled += std::chrono::steady_clock::now() - clicked_at;
        const bool was_delivered = v.queued_posts == 1 && v.given_up_edits == 0;
        const bool was_given_up = v.queued_posts == 2 && v.given_up_edits == 1;
        // Exactly one: the first turn either ran the call with the click, or gave the
        // question up (status "Waiting…") and the click resumed the session.
        CHECK(was_delivered != was_given_up);
        if (was_given_up) {
            REQUIRE_FALSE(v.status.empty());
            CHECK(v.status.back() == rules::text::waiting);
        } else {
            CHECK(v.status.back() == rules::text::done);
        }
        CHECK(f.guarded->ran == round + 1);
        // The question's edits land in the order they were made: it ends answered.
        CHECK(v.question_last == "Allow once — answered by <@U1>");
        if (was_delivered) {
            ++delivered;
            offset += step;
        } else {
            ++given_up;
            offset -= step;
        }
    }
    // Nothing late: no turn, answer or tool run beyond one per round.
    f.pump_for(300ms);
    CHECK(f.guarded->ran == iterations);
    CHECK(f.count_text(std::string(rules::text::queued)) == static_cast<std::size_t>(iterations + given_up));
    CHECK(f.count_text("allowed as expected") == static_cast<std::size_t>(iterations));
    CHECK(f.ch->open_questions() == 0);
    const auto seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    WARN(
        fmt::format("{} rounds in {:.1f} s: {} delivered, {} given up then resumed; mean {} ms to the question, {} ms "
                    "from the click to the thread settled",
                    iterations, seconds, delivered, given_up,
                    std::chrono::duration_cast<std::chrono::milliseconds>(to_question).count() / iterations,
                    std::chrono::duration_cast<std::chrono::milliseconds>(to_settled).count() / iterations));
    // The race was really run from both sides.
    CHECK(delivered >= 20);
    CHECK(given_up >= 20);
}

TEST_CASE("slack: a late approval click after a restart resumes while the journal holds the call pending, once",
          "[slack]") {
    slack_fixture f;  // a 600 ms window
    const auto ts = f.say("<@UBOT> GUARD then restart");
    std::optional<json::object> q;
    REQUIRE(f.pump_until([&] { return (q = f.question_in(ts)).has_value(); }));
    // Given up: the run suspends with the gated call pending in the journal, and its status
    // ends "Waiting…" (the second time it shows that: the first was while the question was open).
    REQUIRE(f.pump_until([&] {
        const auto v = view(f.thread_messages(ts));
        return v.given_up_edits == 1 && std::count(v.status.begin(), v.status.end(), rules::text::waiting) >= 2 &&
               v.status.back() == rules::text::waiting;
    }));
    f.stop_worker();
    f.start_worker();
    CHECK(f.ch->open_questions() == 0);
    // Two clicks at once (the second from a client still showing the buttons): the first
    // becomes the resume turn, the second finds the call decided.
    f.click(q->at("ts").as_string(), 0);
    f.control("/_fake/click",
              json::object{{"message_ts", q->at("ts")}, {"action_index", 0}, {"user", "U1"}, {"stale", true}});
    REQUIRE(f.pump_until([&] { return f.has_text(ts, "allowed as expected"); }));
    REQUIRE(f.pump_until([&] { return view(f.thread_messages(ts)).decided_edits == 1; }));
    f.pump_for(300ms);
    auto v = view(f.thread_messages(ts));
    CHECK(v.queued_posts == 2);
    CHECK(v.answers == 1);
    CHECK(v.answered_edits == 1);
    CHECK(f.guarded->ran == 1);

    // Restarted again: the journal now holds the call's result, so a click only edits.
    f.stop_worker();
    f.start_worker();
    f.control("/_fake/click",
              json::object{{"message_ts", q->at("ts")}, {"action_index", 0}, {"user", "U1"}, {"stale", true}});
    REQUIRE(f.pump_until([&] { return view(f.thread_messages(ts)).decided_edits == 2; }));
    f.pump_for(300ms);
    v = view(f.thread_messages(ts));
    CHECK(v.queued_posts == 2);
    CHECK(v.answers == 1);
    CHECK(f.guarded->ran == 1);
}

TEST_CASE("slack: a confirm given up, then clicked after a restart, resumes with the answer as the prompt", "[slack]") {
    slack_fixture f;  // a 600 ms window
    const auto ts = f.say("<@UBOT> CONFIRM across a restart");
    std::optional<json::object> q;
    REQUIRE(f.pump_until([&] { return (q = f.question_in(ts)).has_value(); }));
    // Deferred: the run goes on without the answer and ends "Waiting…" (the second time it
    // shows that); the question stays answerable.
    REQUIRE(f.pump_until([&] {
        const auto v = view(f.thread_messages(ts));
        return v.given_up_edits == 1 && std::count(v.status.begin(), v.status.end(), rules::text::waiting) >= 2 &&
               v.status.back() == rules::text::waiting;
    }));
    f.stop_worker();
    f.start_worker();
    f.click(q->at("ts").as_string(), 0);
    REQUIRE(f.pump_until([&] { return f.has_text(ts, "Yes — answered by <@U1>"); }));
    REQUIRE(f.pump_until([&] { return view(f.thread_messages(ts)).queued_posts == 2; }));
    // The model is told the answer in the resumed session.
    REQUIRE(f.pump_until([&] {
        net::http_request req;
        req.method = "GET";
        req.url = fmt::format("http://127.0.0.1:{}/_fake/requests", f.llm->port());
        auto res = test::run_on(f.h->ioc, f.h->client.send(std::move(req), std::chrono::steady_clock::now() + 5s), 10s);
        return res &&
               res->body.find(R"(The operator answered your earlier question \"Sure?\": Yes.)") != std::string::npos;
    }));
}

TEST_CASE("slack: an approval answered in its run, clicked again after a restart, only edits the message", "[slack]") {
    slack_fixture f([](serve::slack_channel_options& o) { o.question_timeout = 20s; });
    const auto ts = f.say("<@UBOT> GUARD now");
    std::optional<json::object> q;
    REQUIRE(f.pump_until([&] { return (q = f.question_in(ts)).has_value(); }));
    f.click(q->at("ts").as_string(), 0);
    REQUIRE(f.pump_until([&] { return f.has_text(ts, std::string(rules::text::done)); }));
    CHECK(f.guarded->ran == 1);
    f.stop_worker();
    f.start_worker();
    // Unknown to the new worker; the journal says the call was decided and ran.
    f.control("/_fake/click",
              json::object{{"message_ts", q->at("ts")}, {"action_index", 2}, {"user", "U1"}, {"stale", true}});
    REQUIRE(f.pump_until([&] { return view(f.thread_messages(ts)).decided_edits == 1; }));
    f.pump_for(300ms);
    const auto v = view(f.thread_messages(ts));
    CHECK(v.queued_posts == 1);
    CHECK(f.guarded->ran == 1);
    CHECK(f.count_text("allowed as expected") == 1);
}

TEST_CASE("slack: a late approval click while a running turn asks for the same call again answers that question",
          "[slack]") {
    slack_fixture f([](serve::slack_channel_options& o) { o.question_timeout = 2s; });
    const auto ts = f.say("<@UBOT> GUARD twice");
    std::optional<json::object> first;
    REQUIRE(f.pump_until([&] { return (first = f.question_in(ts)).has_value(); }));
    REQUIRE(f.pump_until([&] {
        const auto v = view(f.thread_messages(ts));
        return v.given_up_edits == 1 && std::count(v.status.begin(), v.status.end(), rules::text::waiting) >= 2 &&
               v.status.back() == rules::text::waiting;
    }));
    // A mention in the thread resumes the session: the pending gated call is dispatched again
    // and its approval asked again, in a new message.
    f.say("<@UBOT> go on", json::object{{"thread_ts", ts}});
    REQUIRE(f.pump_until([&] { return f.ch->open_questions() == 1; }));
    // The person clicks the first message instead: that decides the call being asked now.
    f.click(first->at("ts").as_string(), 0);
    REQUIRE(f.pump_until([&] { return f.has_text(ts, "allowed as expected"); }));
    f.pump_for(300ms);
    const auto v = view(f.thread_messages(ts));
    CHECK(v.queued_posts == 2);    // no third turn: the click went to the open question
    CHECK(v.answered_edits == 2);  // both question messages say who answered
    CHECK(f.guarded->ran == 1);
    CHECK(f.ch->open_questions() == 0);
}

TEST_CASE(
    "slack: drain with a full admission queue: queued turns Not started at once, refusals, click still "
    "delivered, socket last",
    "[slack]") {
    slack_fixture f(
        [](serve::slack_channel_options& o) {
            o.question_timeout = 20s;
            o.max_admitted = 2;
        },
        {"--resend-ms", "300"}, 1);
    const auto running = f.say("<@UBOT> GUARD while draining");
    std::optional<json::object> q;
    REQUIRE(f.pump_until([&] { return (q = f.question_in(running)).has_value(); }));
    // The one slot is busy: these wait in the admission queue, the next one is refused.
    const auto first = f.say("<@UBOT> queued one");
    const auto second = f.say("<@UBOT> queued two");
    REQUIRE(f.pump_until([&] {
        return f.ch->admitted() == 2 && f.has_text(first, std::string(rules::text::queued)) &&
               f.has_text(second, std::string(rules::text::queued));
    }));
    const auto refused = f.say("<@UBOT> one too many");
    REQUIRE(f.pump_until([&] { return f.has_text(refused, rules::busy_text(2)); }));
    CHECK_FALSE(f.has_text(refused, std::string(rules::text::queued)));

    f.server->drain();
    // The queued turns are told at once, though the server, its slot busy, calls next() no more.
    REQUIRE(f.pump_until([&] {
        return f.has_text(first, std::string(rules::text::not_started)) &&
               f.has_text(second, std::string(rules::text::not_started));
    }));
    CHECK(f.ch->admitted() == 0);
    const auto late = f.say("<@UBOT> after the drain began");
    REQUIRE(f.pump_until([&] { return f.has_text(late, std::string(rules::text::restarting)); }));
    CHECK_FALSE(f.has_text(late, std::string(rules::text::queued)));
    // The running turn still has its socket and gets its click.
    CHECK(f.ch->socket_open());
    CHECK(f.control("/_fake/acks", {}, "GET").at("connected") == true);
    f.click(q->at("ts").as_string(), 0);
    REQUIRE(f.pump_until([&] { return f.has_text(running, "allowed as expected"); }));
    REQUIRE(f.pump_until([&] { return f.run_finished(); }));
    f.finished.get();
    f.server.reset();
    // Then, and only then, the socket closes.
    REQUIRE(f.pump_until([&] { return !f.ch->socket_open(); }));
    REQUIRE(f.pump_until([&] { return f.control("/_fake/acks", {}, "GET").at("connected") == false; }));
    // Order in what people saw: the queued turns were told before the running one ended.
    std::size_t not_started_at = 0, done_at = 0, i = 0;
    for (const auto& m : f.messages()) {
        ++i;
        const auto& o = m.as_object();
        if (o.at("text").as_string() == rules::text::not_started) not_started_at = i;
        const auto* thread = o.if_contains("thread_ts");
        if (thread != nullptr && thread->as_string() == running && o.at("text").as_string() == rules::text::done)
            done_at = i;
    }
    CHECK(not_started_at > 0);
    CHECK(done_at > not_started_at);
    CHECK_FALSE(f.has_text(first, std::string(rules::text::working)));
    CHECK_FALSE(f.has_text(second, std::string(rules::text::working)));
    CHECK(f.guarded->ran == 1);
}

TEST_CASE("slack: a report cut short by the report timeout still frees its thread for the next turn", "[slack]") {
    slack_fixture f({}, {"--resend-ms", "300"}, 2, 1s);
    const auto ts = f.say("<@UBOT> LAGGY one");
    REQUIRE(f.pump_until([&] { return f.has_text(ts, std::string(rules::text::working)); }));
    // The answer's post is refused three times, a second apart: done() outlives the 1 s
    // report timeout and is cancelled in the middle of it.
    f.control("/_fake/rate_limit", json::object{{"method", "chat.postMessage"}, {"count", 3}, {"retry_after", 1}});
    REQUIRE(f.pump_until([&] { return f.logged("did not finish within 1s"); }, 10s));
    // The thread is free again: its next message is a turn that runs.
    f.say("and now?", json::object{{"type", "message"}, {"thread_ts", ts}});
    REQUIRE(f.pump_until([&] { return f.has_text(ts, "laggy second"); }, 15s));
}

TEST_CASE("slack: a report cut short while the status edit is in flight, the edit lands after the turn is gone",
          "[slack]") {
    slack_fixture f({}, {"--resend-ms", "300"}, 2, 1s);
    // The first status edit (Working) is refused three times, a second apart: done() waits for
    // it, is cancelled at 1 s, and the turn is destroyed before the edit returns at ~3 s.
    f.control("/_fake/rate_limit", json::object{{"method", "chat.update"}, {"count", 3}, {"retry_after", 1}});
    const auto ts = f.say("<@UBOT> LAGGY two");
    REQUIRE(f.pump_until([&] { return f.logged("did not finish within 1s"); }, 10s));
    // The edit returns into state the writer owns (under ASan a use after free aborted here).
    REQUIRE(f.pump_until([&] { return f.has_text(ts, std::string(rules::text::working)); }, 10s));
    f.pump_for(300ms);
    f.say("and now?", json::object{{"type", "message"}, {"thread_ts", ts}});
    REQUIRE(f.pump_until([&] { return f.has_text(ts, "laggy second"); }, 15s));
}

TEST_CASE("slack: link_disabled while the only slot is busy drains the server at once, not when the run ends",
          "[slack]") {
    slack_fixture f({}, {"--resend-ms", "300"}, 1);
    const auto ts = f.say("<@UBOT> LINGER a while");
    REQUIRE(f.pump_until([&] { return f.has_text(ts, std::string(rules::text::working)); }));
    f.control("/_fake/disconnect", json::object{{"reason", "link_disabled"}});
    // The run holds the slot for 6 s; the fault reaches the server well before that.
    REQUIRE(f.pump_until(
        [&] { return f.logged("channel \"slack\" failed: slack: Socket Mode disconnected: link_disabled"); }, 3s));
    CHECK_FALSE(f.has_text(ts, "lingered"));
    CHECK_FALSE(f.run_finished());
    // The running turn still ends and is answered; then run() throws the fault.
    REQUIRE(f.pump_until([&] { return f.run_finished(); }, 20s));
    CHECK_THROWS_WITH(f.finished.get(), Catch::Contains("link_disabled"));
    CHECK(f.has_text(ts, "lingered"));
    f.server.reset();
}
