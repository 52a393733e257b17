// The serve core's server with in-test channels (a queue of works that counts every call)
// and the real agent: the Anthropic provider against fiskai-fake-llm, the file journal in
// a temp directory, and in-process tools the test opens and closes. Every wait is a
// condition with a deadline.

#include "temp_dir.hpp"
#include "fake_llm_process.hpp"
#include "session_harness.hpp"

#include <fiskai/serve/serve.hpp>
#include <fiskai/toolkit/confirm_gate.hpp>
#include <fiskai/toolkit/function_tool.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json.hpp>

#include <catch2/catch.hpp>

#include <deque>
#include <filesystem>
#include <map>
#include <sys/stat.h>

using namespace fiskai;
using namespace std::chrono_literals;
namespace asio = boost::asio;
namespace json = boost::json;

namespace {

using fiskai::test::temp_dir;

// What happened, in order, across every work and channel of one test.
struct tally {
    std::vector<std::string> events;  // "next:<channel>", "context:<work>", "done:<work>"
    std::map<std::string, int> contexts;
    std::map<std::string, int> dones;
    std::map<std::string, serve::outcome> outcomes;

    // Where the `nth` (0-based) occurrence of `event` is; events.size() when there is none.
    [[nodiscard]] std::size_t index_of(std::string_view event, int nth = 0) const {
        for (std::size_t i = 0; i < events.size(); ++i) {
            if (events[i] == event && nth-- == 0) return i;
        }
        return events.size();
    }
    [[nodiscard]] bool done(const std::string& name) const { return dones.contains(name); }
};

struct throwing_sink final : agent::event_sink {
    void starting(const agent::run_info&) override { throw std::runtime_error("the sink broke"); }
};

class test_work final : public serve::work {
public:
    test_work(std::string name, std::shared_ptr<tally> t) : name_(std::move(name)), tally_(std::move(t)) {
        label = "test work " + name_;
        session_id = "s-" + name_;
        prompt = name_;
    }

    agent::event_sink* events = nullptr;
    // How long done() takes, on a timer (a channel recording somewhere slow).
    std::optional<std::chrono::steady_clock::duration> done_delay;
    std::shared_ptr<boost::system::error_code> done_wait_result = std::make_shared<boost::system::error_code>();

    serve::run_hooks run_context() override {
        ++tally_->contexts[name_];
        tally_->events.push_back("context:" + name_);
        return {events, nullptr};
    }

    asio::awaitable<void> done(serve::outcome result) override {
        ++tally_->dones[name_];
        tally_->events.push_back("done-called:" + name_);
        if (done_delay) {
            asio::steady_timer timer(co_await asio::this_coro::executor, *done_delay);
            auto [ec] = co_await timer.async_wait(asio::as_tuple(asio::use_awaitable));
            *done_wait_result = ec;
        }
        tally_->outcomes[name_] = std::move(result);
        tally_->events.push_back("done:" + name_);
    }

private:
    std::string name_;
    std::shared_ptr<tally> tally_;
};

// A channel fed from a queue the test fills; release() ends it.
class queue_channel final : public serve::channel, public serve::releasable {
public:
    queue_channel(asio::any_io_executor ex, std::string name, std::shared_ptr<tally> t)
        : name_(std::move(name)), tally_(std::move(t)), wake_(ex, asio::steady_timer::time_point::max()) {}

    int next_calls = 0;
    int releases = 0;
    bool waiting = false;                  // sitting in next() with nothing to hand out
    std::optional<std::string> fail_with;  // next() throws this once the queue is empty
    bool end_when_empty = false;           // next() returns nullptr although not released

    void push(std::unique_ptr<serve::work> w) {
        queue_.push_back(std::move(w));
        wake_.cancel();
    }
    // Wakes next() so it looks at fail_with / end_when_empty again.
    void poke() { wake_.cancel(); }

    [[nodiscard]] std::string_view name() const override { return name_; }

    asio::awaitable<std::unique_ptr<serve::work>> next() override {
        ++next_calls;
        tally_->events.push_back("next:" + name_);
        while (queue_.empty() && !released_) {
            if (fail_with) throw std::runtime_error(*fail_with);
            if (end_when_empty) co_return nullptr;
            waiting = true;
            wake_.expires_at(asio::steady_timer::time_point::max());
            (void)co_await wake_.async_wait(asio::as_tuple(asio::use_awaitable));
            waiting = false;
        }
        if (queue_.empty()) co_return nullptr;
        auto w = std::move(queue_.front());
        queue_.pop_front();
        co_return w;
    }

    void release() override {
        ++releases;
        released_ = true;
        wake_.cancel();
    }

private:
    std::string name_;
    std::shared_ptr<tally> tally_;
    std::deque<std::unique_ptr<serve::work>> queue_;
    asio::steady_timer wake_;
    bool released_ = false;
};

class test_service final : public serve::service {
public:
    explicit test_service(asio::any_io_executor ex) : wake_(ex, asio::steady_timer::time_point::max()) {}
    int stops = 0;
    bool running = false;
    std::optional<std::string> fail_with;

    [[nodiscard]] std::string_view name() const override { return "tools"; }
    asio::awaitable<void> run() override {
        running = true;
        if (fail_with) throw std::runtime_error(*fail_with);
        while (!stopped_) (void)co_await wake_.async_wait(asio::as_tuple(asio::use_awaitable));
        running = false;
    }
    void stop() override {
        ++stops;
        stopped_ = true;
        wake_.cancel();
    }

private:
    asio::steady_timer wake_;
    bool stopped_ = false;
};

// A tool that holds its run until the test opens it.
struct hold_gate {
    explicit hold_gate(asio::any_io_executor ex) : timer(ex, asio::steady_timer::time_point::max()) {}
    asio::steady_timer timer;
    bool open = false;
    int entered = 0;
    std::string work_dir;
    void release() {
        open = true;
        timer.cancel();
    }
};

toolkit::tool_ptr hold_tool(const std::shared_ptr<hold_gate>& gate) {
    toolkit::function_tool_spec spec;
    spec.name = "hold";
    spec.description = "Waits until the test lets it go.";
    spec.exposed = toolkit::exposure::everywhere();
    spec.confirm = toolkit::confirm_posture::not_required;
    spec.handler = [gate](const json::object&,
                          const toolkit::call_options& options) -> asio::awaitable<toolkit::outcome> {
        ++gate->entered;
        gate->work_dir = options.work_dir;
        while (!gate->open) {
            (void)co_await gate->timer.async_wait(asio::as_tuple(asio::use_awaitable));
            if (!gate->open &&
                (co_await asio::this_coro::cancellation_state).cancelled() != asio::cancellation_type::none) {
                co_return toolkit::outcome::failure("cancelled");
            }
        }
        co_return toolkit::outcome::from_json(json::value("released"));
    };
    return toolkit::make_function_tool(std::move(spec));
}

// A human who never answers: every question waits until it is cancelled.
class absent_prompter final : public toolkit::prompter {
public:
    int asked = 0;
    bool cancelled = false;
    [[nodiscard]] bool can_prompt() const override { return true; }
    asio::awaitable<toolkit::approval_reply> approve(toolkit::approval_request) override {
        ++asked;
        asio::steady_timer never(co_await asio::this_coro::executor, asio::steady_timer::time_point::max());
        auto [ec] = co_await never.async_wait(asio::as_tuple(asio::use_awaitable));
        cancelled = ec == asio::error::operation_aborted;
        co_return toolkit::approval_reply{toolkit::reply_status::cancelled, toolkit::approval::deny, "gone", {}};
    }
    asio::awaitable<toolkit::question_reply> ask(toolkit::question) override {
        co_return toolkit::question_reply{toolkit::reply_status::unavailable, false, -1, {}, "absent", {}};
    }
};

struct guarded_state {
    int ran = 0;
};

toolkit::tool_ptr guarded_tool(const std::shared_ptr<guarded_state>& state) {
    toolkit::function_tool_spec spec;
    spec.name = "guarded";
    spec.description = "Changes something; needs approval.";
    spec.exposed = toolkit::exposure::everywhere();
    spec.confirm = toolkit::confirm_posture::required;
    spec.handler = [state](const json::object&, const toolkit::call_options&) -> asio::awaitable<toolkit::outcome> {
        ++state->ran;
        co_return toolkit::outcome::from_json(json::value("changed"));
    };
    return toolkit::make_function_tool(std::move(spec));
}

json::object text_reply(std::string_view text) {
    return json::object{{"reply", json::object{{"content", json::array{json::object{{"type", "text"}, {"text", text}}}},
                                               {"stop_reason", "end_turn"}}}};
}

json::object tool_reply(std::string_view name) {
    return json::object{
        {"reply", json::object{{"content", json::array{json::object{
                                               {"type", "tool_use"}, {"name", name}, {"input", json::object{}}}}},
                               {"stop_reason", "tool_use"}}}};
}

json::object conversation(std::string_view name, std::string_view prompt, json::array steps) {
    return json::object{
        {"name", name}, {"when", json::object{{"prompt_contains", prompt}}}, {"steps", std::move(steps)}};
}

// Works are routed by their prompt (the work's name): each conversation matches one prefix.
std::string script() {
    json::array conversations{
        // HOLD*: calls the hold tool, then answers.
        conversation("hold", "HOLD", json::array{tool_reply("hold"), text_reply("held and released")}),
        // HANG*: the model never answers.
        conversation("hang", "HANG",
                     json::array{json::object{{"faults", json::array{json::object{{"hang", true}}}},
                                              {"reply", text_reply("never")["reply"]}}}),
        // GUARD*: calls the gated tool; the next step checks it was denied for want of an operator.
        conversation("guard", "GUARD-DENY",
                     json::array{tool_reply("guarded"),
                                 json::object{{"expect", json::object{{"last_tool_result_contains",
                                                                       toolkit::reason_no_operator}}},
                                              {"reply", text_reply("denied as expected")["reply"]}}}),
        conversation("allow", "GUARD-ALLOW",
                     json::array{tool_reply("guarded"),
                                 json::object{{"expect", json::object{{"last_tool_result_contains", "changed"}}},
                                              {"reply", text_reply("allowed as expected")["reply"]}}}),
        // GUARD-SILENT: the approval is never given; the run parks on the gate.
        conversation("silent", "GUARD-SILENT", json::array{tool_reply("guarded"), text_reply("not reached")}),
        // Anything else: one answer per turn.
        conversation("plain", "", json::array{text_reply("first answer"), text_reply("second answer")}),
    };
    return json::serialize(json::object{{"conversations", std::move(conversations)}});
}

struct fixture {
    temp_dir dir;
    std::unique_ptr<test::fake_llm_process> fake;
    std::unique_ptr<test::session_harness> h;
    std::shared_ptr<tally> counts = std::make_shared<tally>();
    std::shared_ptr<hold_gate> gate;
    std::shared_ptr<guarded_state> guarded = std::make_shared<guarded_state>();
    std::vector<std::string> log_lines;
    std::unique_ptr<serve::server> server;
    std::future<void> finished;

    explicit fixture(std::size_t workers = 2, std::chrono::nanoseconds report_timeout = 30s,
                     const std::function<void(config::config&)>& adjust = {}) {
        fake = test::start_scripted_fake_llm(FISKAI_FAKE_LLM, dir.path, script());
        config::config cfg;
        cfg.llm.model = "claude-test";
        if (adjust) adjust(cfg);
        std::filesystem::create_directories(dir.path / "runs");
        // The gate's timer lives on the harness's io_context, made below; build the tools after.
        h = std::make_unique<test::session_harness>(cfg, (dir.path / "runs").string(),
                                                    test::fake_model_provider(fake->port()));
        gate = std::make_shared<hold_gate>(h->ioc.get_executor());
        h->rt->tools.push_back(hold_tool(gate));
        h->rt->tools.push_back(guarded_tool(guarded));

        serve::server_options options;
        options.workers = workers;
        options.report_timeout = report_timeout;
        options.log = [this](gocompat::log_level level, std::string_view message, gocompat::log_fields fields) {
            log_lines.push_back(gocompat::format_text_line(level, message, fields));
        };
        server = std::make_unique<serve::server>(h->ioc.get_executor(), h->rt, std::move(options));
    }

    std::shared_ptr<queue_channel> add_channel(std::string name, serve::channel_options options = {}) {
        auto ch = std::make_shared<queue_channel>(h->ioc.get_executor(), std::move(name), counts);
        server->add(ch, options);
        return ch;
    }

    std::unique_ptr<test_work> work(std::string name) { return std::make_unique<test_work>(std::move(name), counts); }

    void start() { finished = asio::co_spawn(h->ioc, server->run(), asio::use_future); }

    // Drives the io_context until `condition` holds; fails the test at the deadline.
    bool pump_until(const std::function<bool()>& condition, std::chrono::steady_clock::duration deadline = 30s) {
        const auto end = std::chrono::steady_clock::now() + deadline;
        while (!condition() && std::chrono::steady_clock::now() < end) {
            if (h->ioc.stopped()) h->ioc.restart();
            h->ioc.run_one_for(20ms);
        }
        return condition();
    }

    [[nodiscard]] bool run_finished() const { return finished.wait_for(0s) == std::future_status::ready; }

    // Waits for run() to return and rethrows what it threw.
    void wait_finished() {
        REQUIRE(pump_until([this] { return run_finished(); }));
        finished.get();
    }

    [[nodiscard]] bool logged(std::string_view text) const {
        return std::any_of(log_lines.begin(), log_lines.end(),
                           [&](const std::string& l) { return l.find(text) != std::string::npos; });
    }
};

}  // namespace

TEST_CASE("a work runs once: run_context then done, each exactly once, and the outcome is the run's") {
    fixture f;
    f.h->rt->cfg.serve.work_dir = (f.dir.path / "work").string();
    auto ch = f.add_channel("q");
    auto w = f.work("HOLD-1");
    ch->push(std::move(w));
    f.start();
    REQUIRE(f.pump_until([&] { return f.gate->entered == 1; }));
    CHECK(f.counts->contexts["HOLD-1"] == 1);
    CHECK_FALSE(f.counts->done("HOLD-1"));
    CHECK(f.server->running() == 1);
    // The run works in its own directory, made private.
    const auto work_dir = f.dir.path / "work" / "s-HOLD-1";
    CHECK(f.gate->work_dir == work_dir.string());
    struct stat st {};
    REQUIRE(::stat(work_dir.c_str(), &st) == 0);
    CHECK((st.st_mode & 0777) == 0700);

    f.gate->release();
    REQUIRE(f.pump_until([&] { return f.counts->done("HOLD-1"); }));
    const auto& o = f.counts->outcomes["HOLD-1"];
    CHECK(o.reason == "completed");
    CHECK(o.text == "held and released");
    CHECK(o.session_id == "s-HOLD-1");
    CHECK(o.counters.llm_calls == 2);
    CHECK_FALSE(o.abandoned);
    CHECK_FALSE(o.interrupted);
    CHECK(f.counts->index_of("context:HOLD-1") < f.counts->index_of("done-called:HOLD-1"));
    CHECK(f.logged("work started work=\"test work HOLD-1\" session=s-HOLD-1"));
    CHECK(f.logged("work ended work=\"test work HOLD-1\" session=s-HOLD-1 reason=completed"));

    f.server->drain();
    f.wait_finished();
    CHECK(f.counts->contexts["HOLD-1"] == 1);
    CHECK(f.counts->dones["HOLD-1"] == 1);
    CHECK(f.server->running() == 0);
}

TEST_CASE("work then slot: with one worker busy, next() is not called until the run has reported") {
    fixture f(1);
    auto ch = f.add_channel("q");
    ch->push(f.work("HOLD-1"));
    ch->push(f.work("plain-2"));
    f.start();
    REQUIRE(f.pump_until([&] { return f.gate->entered == 1; }));
    // The puller is back at its loop head, waiting for a free slot: it has not taken plain-2.
    CHECK(ch->next_calls == 1);
    CHECK(f.counts->contexts.count("plain-2") == 0);

    f.gate->release();
    REQUIRE(f.pump_until([&] { return f.counts->done("plain-2"); }));
    CHECK(ch->next_calls >= 2);
    // The slot came free only once HOLD-1 had reported: its done ran before plain-2 was taken.
    CHECK(f.counts->index_of("done:HOLD-1") < f.counts->index_of("next:q", 1));
    CHECK(f.counts->index_of("done:HOLD-1") < f.counts->index_of("context:plain-2"));
    CHECK(f.counts->outcomes["plain-2"].reason == "completed");
    CHECK(f.counts->outcomes["plain-2"].text == "first answer");

    f.server->drain();
    f.wait_finished();
    CHECK(f.counts->dones["HOLD-1"] == 1);
    CHECK(f.counts->dones["plain-2"] == 1);
}

TEST_CASE("cancel: a run in flight ends interrupted, a work waiting for a slot is abandoned, done runs for both") {
    fixture f(1);
    auto a = f.add_channel("a");
    auto b = f.add_channel("b");
    f.start();
    // Both pullers found the slot free and sit in next().
    REQUIRE(f.pump_until([&] { return a->waiting && b->waiting; }));
    a->push(f.work("HANG-1"));
    REQUIRE(f.pump_until([&] { return f.counts->contexts.count("HANG-1") == 1; }));
    b->push(f.work("plain-2"));
    // plain-2 is taken and waits for the slot HANG-1 holds.
    REQUIRE(f.pump_until([&] { return f.server->running() == 2 && !b->waiting; }));
    CHECK(f.counts->contexts.count("plain-2") == 0);

    f.server->cancel();
    f.wait_finished();

    const auto& hung = f.counts->outcomes["HANG-1"];
    CHECK(hung.reason == "suspended");
    CHECK(hung.interrupted);
    CHECK(hung.error == agent::text::interrupted);
    const auto& waited = f.counts->outcomes["plain-2"];
    CHECK(waited.abandoned);
    CHECK(waited.error == serve::text::abandoned);
    CHECK(waited.reason.empty());
    CHECK(waited.session_id == "s-plain-2");
    CHECK(f.counts->contexts.count("plain-2") == 0);  // never started
    CHECK(f.counts->dones["HANG-1"] == 1);
    CHECK(f.counts->dones["plain-2"] == 1);
    CHECK(a->releases == 1);
    CHECK(b->releases == 1);
    CHECK(f.server->running() == 0);
}

TEST_CASE("a null prompter is replaced by default-deny: a gated tool is denied and never runs") {
    fixture f;
    auto ch = f.add_channel("q");
    ch->push(f.work("GUARD-DENY"));
    f.start();
    REQUIRE(f.pump_until([&] { return f.counts->done("GUARD-DENY"); }));
    // The fake's expect checked the tool result named the missing operator (a 400 otherwise).
    CHECK(f.counts->outcomes["GUARD-DENY"].reason == "completed");
    CHECK(f.counts->outcomes["GUARD-DENY"].text == "denied as expected");
    CHECK(f.guarded->ran == 0);

    SECTION("and a work's own prompter is used when it supplies one") {
        test::scripted_prompter approver;
        auto w = f.work("GUARD-ALLOW");
        w->prompter = &approver;
        ch->push(std::move(w));
        REQUIRE(f.pump_until([&] { return f.counts->done("GUARD-ALLOW"); }));
        CHECK(f.counts->outcomes["GUARD-ALLOW"].text == "allowed as expected");
        CHECK(approver.approvals == 1);
        CHECK(f.guarded->ran == 1);
    }
    f.server->drain();
    f.wait_finished();
}

TEST_CASE("a follow-up from a channel whose deliveries repeat is refused without running") {
    fixture f;
    auto repeating = f.add_channel("queue");  // deliveries_repeat defaults to true
    auto once = f.add_channel("a2a", serve::channel_options{false});
    auto w = f.work("plain-follow");
    w->follow_up = true;
    repeating->push(std::move(w));
    f.start();
    REQUIRE(f.pump_until([&] { return f.counts->done("plain-follow"); }));
    const auto& o = f.counts->outcomes["plain-follow"];
    CHECK(o.error == "internal: follow-up work from channel \"queue\", whose deliveries repeat");
    CHECK(o.reason.empty());
    CHECK_FALSE(o.abandoned);
    CHECK(f.counts->contexts.count("plain-follow") == 0);

    // From a channel that never redelivers, a follow-up continues the session.
    once->push(f.work("plain-open"));
    REQUIRE(f.pump_until([&] { return f.counts->done("plain-open"); }));
    CHECK(f.counts->outcomes["plain-open"].text == "first answer");
    auto next = f.work("plain-open-2");
    next->session_id = "s-plain-open";
    next->prompt = "and then?";
    next->follow_up = true;
    once->push(std::move(next));
    REQUIRE(f.pump_until([&] { return f.counts->done("plain-open-2"); }));
    CHECK(f.counts->outcomes["plain-open-2"].reason == "completed");
    CHECK(f.counts->outcomes["plain-open-2"].text == "second answer");

    f.server->drain();
    f.wait_finished();
}

TEST_CASE("drain closes the hold once, releases every channel and stops every service, and runs in flight finish") {
    fixture f;
    auto a = f.add_channel("a");
    auto b = f.add_channel("b");
    auto svc = std::make_shared<test_service>(f.h->ioc.get_executor());
    f.server->add(svc);
    a->push(f.work("HOLD-1"));
    f.start();
    REQUIRE(f.pump_until([&] { return f.gate->entered == 1 && b->waiting && svc->running; }));

    f.server->drain();
    f.server->drain();
    CHECK(a->releases == 1);
    CHECK(b->releases == 1);
    CHECK(svc->stops == 1);
    // The run goes on: run() waits for it.
    REQUIRE(f.pump_until([&] { return !svc->running; }));
    CHECK_FALSE(f.run_finished());
    CHECK_FALSE(f.counts->done("HOLD-1"));

    f.gate->release();
    f.wait_finished();  // no fault: the channels ended after release
    CHECK(f.counts->outcomes["HOLD-1"].reason == "completed");
    CHECK_FALSE(f.counts->outcomes["HOLD-1"].interrupted);
    // run() drained again on its way out; nothing was released or stopped twice.
    CHECK(a->releases == 1);
    CHECK(b->releases == 1);
    CHECK(svc->stops == 1);
}

TEST_CASE("a channel that fails drains the server and run() throws the fault") {
    fixture f;
    auto good = f.add_channel("good");
    auto bad = f.add_channel("bad");
    auto svc = std::make_shared<test_service>(f.h->ioc.get_executor());
    f.server->add(svc);
    good->push(f.work("HOLD-1"));
    f.start();
    REQUIRE(f.pump_until([&] { return f.gate->entered == 1 && bad->waiting && svc->running; }));

    SECTION("next() throws") {
        bad->fail_with = "the broker went away";
        bad->poke();
        REQUIRE(f.pump_until([&] { return good->releases == 1; }));
        CHECK(svc->stops == 1);
        f.gate->release();  // the run in flight still finishes and reports
        REQUIRE(f.pump_until([&] { return f.run_finished(); }));
        REQUIRE_THROWS_MATCHES(f.finished.get(), serve::fault,
                               Catch::Message("channel \"bad\" failed: the broker went away"));
    }
    SECTION("next() ends before drain") {
        bad->end_when_empty = true;
        bad->poke();
        REQUIRE(f.pump_until([&] { return good->releases == 1; }));
        f.gate->release();
        REQUIRE(f.pump_until([&] { return f.run_finished(); }));
        REQUIRE_THROWS_MATCHES(f.finished.get(), serve::fault, Catch::Message("channel \"bad\" ended unexpectedly"));
    }
    CHECK(f.counts->dones["HOLD-1"] == 1);
    CHECK(bad->releases == 1);
    CHECK(svc->stops == 1);
    CHECK(f.logged("error: channel \"bad\""));
}

TEST_CASE("a service that fails drains the server and run() throws the fault") {
    fixture f;
    auto ch = f.add_channel("q");
    auto svc = std::make_shared<test_service>(f.h->ioc.get_executor());
    svc->fail_with = "port in use";
    f.server->add(svc);
    f.start();
    REQUIRE(f.pump_until([&] { return f.run_finished(); }));
    REQUIRE_THROWS_MATCHES(f.finished.get(), serve::fault, Catch::Message("service \"tools\" failed: port in use"));
    CHECK(ch->releases == 1);
    CHECK(svc->stops == 1);
}

TEST_CASE("a crashed run is reported once, as crashed") {
    fixture f;
    auto ch = f.add_channel("q");
    throwing_sink sink;
    auto w = f.work("plain-crash");
    w->events = &sink;
    ch->push(std::move(w));
    f.start();
    REQUIRE(f.pump_until([&] { return f.counts->done("plain-crash"); }));
    const auto& o = f.counts->outcomes["plain-crash"];
    CHECK(o.crashed);
    CHECK(o.reason.empty());
    CHECK(o.error == agent::text::crashed);
    f.server->drain();
    f.wait_finished();
    CHECK(f.counts->contexts["plain-crash"] == 1);
    CHECK(f.counts->dones["plain-crash"] == 1);
}

TEST_CASE("cancel() does not cancel a report: a done() that waits on a timer still completes") {
    fixture f;
    auto ch = f.add_channel("q");
    auto w = f.work("HANG-1");
    w->done_delay = 200ms;
    auto waited = w->done_wait_result;
    ch->push(std::move(w));
    f.start();
    REQUIRE(f.pump_until([&] { return f.counts->contexts.count("HANG-1") == 1; }));
    f.server->cancel();
    REQUIRE(f.pump_until([&] { return f.counts->index_of("done-called:HANG-1") < f.counts->events.size(); }));
    CHECK(f.counts->index_of("done:HANG-1") == f.counts->events.size());
    CHECK_FALSE(f.run_finished());  // run() waits for the report
    f.wait_finished();
    CHECK_FALSE(*waited);  // the timer expired; it was not cancelled
    CHECK(f.counts->outcomes["HANG-1"].interrupted);
    CHECK(f.counts->dones["HANG-1"] == 1);
}

TEST_CASE("a done() that outlasts report_timeout is logged, cancelled, and frees its slot") {
    fixture f(1, 150ms);
    auto ch = f.add_channel("q");
    auto w = f.work("plain-slow");
    w->done_delay = std::chrono::hours(1);
    auto waited = w->done_wait_result;
    ch->push(std::move(w));
    ch->push(f.work("plain-next"));
    f.start();
    // With one worker, plain-next runs only once plain-slow's slot is given back.
    REQUIRE(f.pump_until([&] { return f.counts->done("plain-next"); }));
    CHECK(f.logged("warning: done for test work plain-slow did not finish within 150ms"));
    // On expiry the done() was cancelled; it still ended on its own and recorded once.
    REQUIRE(f.pump_until([&] { return f.counts->done("plain-slow") && f.counts->outcomes.contains("plain-slow"); }));
    CHECK(*waited == asio::error::operation_aborted);
    f.server->drain();
    f.wait_finished();
    CHECK(f.counts->dones["plain-slow"] == 1);
}

TEST_CASE("prompt_wait bounds the work's prompter: an unanswered approval parks the run") {
    fixture f;
    auto ch = f.add_channel("q");
    absent_prompter nobody;
    auto w = f.work("GUARD-SILENT");
    w->prompter = &nobody;
    w->prompt_wait = 100ms;
    ch->push(std::move(w));
    f.start();
    REQUIRE(f.pump_until([&] { return f.counts->done("GUARD-SILENT"); }));
    const auto& o = f.counts->outcomes["GUARD-SILENT"];
    CHECK(o.reason == "suspended");
    CHECK_FALSE(o.interrupted);  // a silent gate, not a cancel
    CHECK(nobody.asked == 1);
    CHECK(nobody.cancelled);  // the bound cancelled the inner question
    CHECK(f.guarded->ran == 0);
    f.server->drain();
    f.wait_finished();
}

TEST_CASE("cancelling the coroutine that awaits run() is cancel()") {
    fixture f;
    auto ch = f.add_channel("q");
    ch->push(f.work("HANG-1"));
    asio::cancellation_signal signal;
    f.finished =
        asio::co_spawn(f.h->ioc, f.server->run(), asio::bind_cancellation_slot(signal.slot(), asio::use_future));
    REQUIRE(f.pump_until([&] { return f.counts->contexts.count("HANG-1") == 1; }));
    signal.emit(asio::cancellation_type::terminal);
    f.wait_finished();
    CHECK(ch->releases == 1);
    CHECK(f.counts->outcomes["HANG-1"].interrupted);
    CHECK(f.counts->outcomes["HANG-1"].reason == "suspended");
    CHECK(f.counts->dones["HANG-1"] == 1);
}
