#pragma once
// The queue channel against a real nats-server with JetStream (a temp store), the real
// agent on fiskai-fake-llm and the file journal. The test provisions the stream, the bucket
// and the consumer as an operator would (nats.c directly); the worker never creates any.

#include "fake_llm_process.hpp"
#include "js_fixture.hpp"
#include "session_harness.hpp"

#include <fiskai/a2a/codec.hpp>
#include <fiskai/a2a/stamp.hpp>
#include <fiskai/a2a/validator.hpp>
#include <fiskai/jetstream/offload.hpp>
#include <fiskai/serve/queue_channel.hpp>
#include <fiskai/serve/serve.hpp>
#include <fiskai/serve/session_ids.hpp>
#include <fiskai/toolkit/function_tool.hpp>

#include <boost/asio/steady_timer.hpp>
#include <boost/json.hpp>
#include <fmt/format.h>

#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <future>
#include <sstream>

namespace queue_test {

namespace asio = boost::asio;
namespace a2a = fiskai::a2a;
namespace conns = fiskai::conns;
namespace js = fiskai::jetstream;
namespace json = boost::json;
namespace llm = fiskai::llm;
namespace serve = fiskai::serve;
using namespace std::chrono_literals;

inline json::object text_reply(std::string_view text) {
    return json::object{{"content", json::array{json::object{{"type", "text"}, {"text", text}}}},
                        {"stop_reason", "end_turn"}};
}

inline json::object conversation(std::string_view name, std::string_view prompt, json::array steps) {
    json::object c{{"name", name}, {"steps", std::move(steps)}};
    if (!prompt.empty()) c["when"] = json::object{{"prompt_contains", prompt}};
    return c;
}

// SLOW: the first call takes 4.5 s (past a 3 s ack wait); STORM: more 429s than retries;
// TOOL: a tool call, then (after its result) an answer; anything else: "first answer".
inline std::string default_script() {
    json::array storm_faults;
    for (int i = 0; i < 20; ++i)
        storm_faults.push_back(json::object{
            {"status", 429},
            {"body", json::object{{"type", "error"},
                                  {"error", json::object{{"type", "rate_limit_error"}, {"message", "slow down"}}}}}});
    json::array conversations{
        conversation("slow", "SLOW",
                     json::array{json::object{{"faults", json::array{json::object{{"delay_ms", 4500}}}},
                                              {"reply", text_reply("slow answer")}}}),
        conversation("storm", "STORM",
                     json::array{json::object{{"faults", std::move(storm_faults)}, {"reply", text_reply("never")}}}),
        conversation(
            "tool", "TOOL",
            json::array{
                json::object{{"reply", json::object{{"content", json::array{json::object{{"type", "tool_use"},
                                                                                         {"name", "probe"},
                                                                                         {"input", json::object{}}}}},
                                                    {"stop_reason", "tool_use"}}}},
                json::object{{"faults", json::array{json::object{{"hang", true}}}},
                             {"reply", text_reply("tool answer")}}}),
        conversation("plain", "", json::array{json::object{{"reply", text_reply("first answer")}}}),
    };
    return json::serialize(json::object{{"conversations", std::move(conversations)}});
}

// For the fault tests. GATE: a call of the `gate` tool (see add_gate), then (after its
// result) "gate answer"; SLOW: the first two requests wait 5 s, then "slow answer";
// anything else: "first answer".
inline std::string fault_script() {
    json::array conversations{
        conversation(
            "gate", "GATE",
            json::array{
                json::object{{"reply", json::object{{"content", json::array{json::object{{"type", "tool_use"},
                                                                                         {"name", "gate"},
                                                                                         {"input", json::object{}}}}},
                                                    {"stop_reason", "tool_use"}}}},
                json::object{{"reply", text_reply("gate answer")}}}),
        conversation("slow", "SLOW",
                     json::array{json::object{
                         {"faults", json::array{json::object{{"delay_ms", 5000}}, json::object{{"delay_ms", 5000}}}},
                         {"reply", text_reply("slow answer")}}}),
        conversation("plain", "", json::array{json::object{{"reply", text_reply("first answer")}}}),
    };
    return json::serialize(json::object{{"conversations", std::move(conversations)}});
}

// A tool that holds its run until the test opens it: a fault can then strike while a job
// is known to be mid-run, with nothing of the run in flight on the broker.
struct gate_state {
    int entered = 0;
    int passed = 0;
    bool open = false;
};

inline fiskai::toolkit::tool_ptr gate_tool(std::shared_ptr<gate_state> g) {
    fiskai::toolkit::function_tool_spec spec;
    spec.name = "gate";
    spec.description = "Waits until the test opens it.";
    spec.exposed = fiskai::toolkit::exposure::everywhere();
    spec.confirm = fiskai::toolkit::confirm_posture::not_required;
    spec.handler = [g](const json::object&,
                       const fiskai::toolkit::call_options&) -> asio::awaitable<fiskai::toolkit::outcome> {
        ++g->entered;
        asio::steady_timer poll(co_await asio::this_coro::executor);
        while (!g->open) {
            poll.expires_after(20ms);
            co_await poll.async_wait(asio::use_awaitable);
        }
        ++g->passed;
        co_return fiskai::toolkit::outcome::from_json(json::value("opened"));
    };
    return fiskai::toolkit::make_function_tool(std::move(spec));
}

struct provision {
    std::chrono::nanoseconds ack_wait = 30s;
    std::int64_t max_deliver = 5;
    std::int32_t max_msg_size = 1048576;
    bool stream = true;
    bool bucket = true;
    bool consumer = true;
    // JetStream's store in the world's directory, so the broker can be restarted on the
    // same port and store (restart_broker()).
    bool restartable = false;
};

struct world {
    std::filesystem::path dir = [] {
        std::string pattern = (std::filesystem::temp_directory_path() / "fiskai-queue-XXXXXX").string();
        return std::filesystem::path(::mkdtemp(pattern.data()));
    }();
    fiskai::test::js_fixture nats;
    // The broker started again by start_broker(), when the first one was stopped.
    std::unique_ptr<conns::embedded_broker> restarted;
    bool restartable = false;
    std::unique_ptr<fiskai::test::fake_llm_process> fake;
    std::unique_ptr<fiskai::test::session_harness> h;
    std::string llm_log = (dir / "llm.log").string();
    int llm_port = 0;
    std::shared_ptr<int> probes = std::make_shared<int>(0);
    // Every record logged by a channel made with logged_options(), as `message key=value...`.
    std::shared_ptr<std::vector<std::string>> logged = std::make_shared<std::vector<std::string>>();

    static conns::broker_options broker_for(const provision& p, const std::filesystem::path& dir) {
        conns::broker_options o;
        if (p.restartable) o.store_dir = (dir / "jetstream").string();
        return o;
    }

    explicit world(provision p = {}, std::string script = default_script())
        : nats(broker_for(p, dir)), restartable(p.restartable) {
        fake = fiskai::test::start_scripted_fake_llm(FISKAI_FAKE_LLM, dir, script, {"--log", llm_log});
        llm_port = fake->port();
        fiskai::config::config cfg;
        cfg.llm.model = "claude-test";
        std::filesystem::create_directories(dir / "runs");
        h = std::make_unique<fiskai::test::session_harness>(
            cfg, (dir / "runs").string(), fiskai::test::fake_model_provider(fake->port(), "anthropic", 1));
        fiskai::toolkit::function_tool_spec spec;
        spec.name = "probe";
        spec.description = "Looks at something.";
        spec.exposed = fiskai::toolkit::exposure::everywhere();
        spec.confirm = fiskai::toolkit::confirm_posture::not_required;
        spec.handler = [runs = probes](
                           const json::object&,
                           const fiskai::toolkit::call_options&) -> asio::awaitable<fiskai::toolkit::outcome> {
            ++*runs;
            co_return fiskai::toolkit::outcome::from_json(json::value("probed"));
        };
        h->rt->tools.push_back(fiskai::toolkit::make_function_tool(std::move(spec)));
        if (p.stream) {
            fiskai::test::stream_spec s;
            s.name = "FISK_WORK";
            s.subjects = {"choria.fisk-ai.work.>"};
            s.max_msgs_per_subject = -1;
            s.discard_new = false;
            s.discard_new_per_subject = false;
            s.work_queue = true;
            s.max_msg_size = p.max_msg_size;
            nats.add_stream(s);
        }
        if (p.bucket) nats.add_kv("FISK_TASKS", 786432);
        if (p.stream && p.consumer) add_consumer("svc", "choria.fisk-ai.work.svc", p.ack_wait, p.max_deliver);
    }
    ~world() {
        // A fetch still waiting on its thread posts its result to the harness's io_context
        // when it returns (jetstream's offload_to_thread), so that context must outlive it:
        // closing the connection ends the wait at once. The channels and workers went
        // before the world did.
        nats.connection->close();
        js::wait_for_offloaded_threads(10s);
        // A store in our directory goes only once no broker uses it.
        if (restartable) {
            restarted.reset();
            nats.broker.stop();
        }
        std::error_code ec;
        std::filesystem::remove_all(dir, ec);
    }

    void add_consumer(const std::string& durable, const std::string& filter, std::chrono::nanoseconds ack_wait,
                      std::int64_t max_deliver) {
        jsConsumerConfig cfg;
        jsConsumerConfig_Init(&cfg);
        cfg.Durable = durable.c_str();
        cfg.FilterSubject = filter.c_str();
        cfg.AckPolicy = js_AckExplicit;
        cfg.AckWait = ack_wait.count();
        cfg.MaxDeliver = max_deliver;
        cfg.MaxAckPending = 1000;
        cfg.DeliverPolicy = js_DeliverAll;
        jsErrCode ec = static_cast<jsErrCode>(0);
        if (js_AddConsumer(nullptr, nats.raw_js(), "FISK_WORK", &cfg, nullptr, &ec) != NATS_OK)
            throw std::runtime_error("add consumer " + durable + ": " + nats_GetLastError(nullptr));
    }

    // What an operator's `nats stream add FISK_DEAD --subjects 'choria.fisk-ai.dead.>'` makes.
    void add_dead_letter_stream() {
        fiskai::test::stream_spec s;
        s.name = "FISK_DEAD";
        s.subjects = {"choria.fisk-ai.dead.>"};
        s.max_msgs_per_subject = -1;
        s.discard_new = false;
        s.discard_new_per_subject = false;
        s.max_msg_size = 1048576;
        nats.add_stream(s);
    }

    std::vector<js::message> dead_letters(std::size_t count) {
        auto got = fiskai::test::run_on(
            h->ioc, nats.js.ordered_read("FISK_DEAD", "choria.fisk-ai.dead.svc", count, 2000ms), 20s);
        return got.value();
    }

    // SIGTERM to the broker; returns once the connection has noticed.
    void stop_broker() {
        if (restarted)
            restarted->stop();
        else
            nats.broker.stop();
        REQUIRE(until([&] { return !nats.connection->is_connected(); }, 20s));
    }
    // The broker again on the same port and store (provision::restartable); returns once
    // the connection is back.
    void start_broker() {
        conns::broker_options o;
        o.store_dir = nats.broker.store_dir();
        o.port = nats.broker.port();
        restarted = std::make_unique<conns::embedded_broker>(o);
        REQUIRE(until([&] { return nats.connection->is_connected(); }, 30s));
    }

    // Sets a stream's max message size, as `nats stream edit --max-msg-size` does (for a
    // bucket, its stream KV_<bucket>: the max value size).
    void set_max_msg_size(const std::string& stream, std::int32_t size) {
        jsStreamInfo* info = nullptr;
        jsErrCode ec = static_cast<jsErrCode>(0);
        REQUIRE(js_GetStreamInfo(&info, nats.raw_js(), stream.c_str(), nullptr, &ec) == NATS_OK);
        info->Config->MaxMsgSize = size;
        jsStreamInfo* updated = nullptr;
        const auto s = js_UpdateStream(&updated, nats.raw_js(), info->Config, nullptr, &ec);
        jsStreamInfo_Destroy(info);
        INFO(nats_GetLastError(nullptr));
        REQUIRE(s == NATS_OK);
        jsStreamInfo_Destroy(updated);
    }

    // Log lines holding `needle`.
    std::size_t logged_count(std::string_view needle) const {
        return static_cast<std::size_t>(std::count_if(
            logged->begin(), logged->end(), [&](const std::string& l) { return l.find(needle) != std::string::npos; }));
    }

    serve::queue_channel_options logged_options(std::chrono::nanoseconds ack_wait = 30s) const {
        auto o = options(ack_wait);
        o.log = [lines = logged](fiskai::gocompat::log_level, std::string_view message,
                                 fiskai::gocompat::log_fields fields) {
            std::string line(message);
            for (const auto& f : fields) line += fmt::format(" {}={}", f.key, f.value);
            lines->push_back(std::move(line));
        };
        return o;
    }

    serve::queue_channel_options options(std::chrono::nanoseconds ack_wait = 30s) const {
        serve::queue_channel_options o;
        o.identity = "svc";
        o.ack_wait = ack_wait;
        o.context_name = "test";
        o.fetch_wait = 500ms;
        o.crash_delay = 200ms;
        o.put_retry_delay = 200ms;
        o.tool_names = {"probe"};
        return o;
    }

    std::shared_ptr<serve::queue_channel> open(serve::queue_channel_options o) {
        return fiskai::test::run_on(
            h->ioc, serve::queue_channel::open(*nats.connection, nats.js, h->ioc.get_executor(), std::move(o)), 30s);
    }

    // The startup text open() throws, or "" when it binds.
    std::string open_error(serve::queue_channel_options o) {
        try {
            auto ch = open(std::move(o));
            ch->release();
            return {};
        } catch (const serve::queue_error& e) {
            return e.what();
        }
    }

    static std::string job_body(const std::string& task, const std::string& prompt) {
        a2a::task_request r;
        a2a::stamp_request(r, "producer", "svc", task);
        r.prompt = prompt;
        return a2a::encode(r).value();
    }

    std::uint64_t enqueue(const std::string& task, const std::string& prompt, std::string msg_id = {}) {
        return nats.raw_publish("choria.fisk-ai.work.svc", job_body(task, prompt), msg_id.empty() ? task : msg_id);
    }

    // The stored answer of `task`, waiting up to `deadline` while the io_context runs.
    std::optional<js::kv_entry> answer(const std::string& task, std::chrono::steady_clock::duration deadline = 30s,
                                       std::uint64_t newer_than = 0) {
        auto wait = [&]() -> asio::awaitable<std::optional<js::kv_entry>> {
            auto bucket = co_await nats.js.bind_kv("FISK_TASKS");
            if (!bucket) co_return std::nullopt;
            const auto end = std::chrono::steady_clock::now() + deadline;
            asio::steady_timer t(co_await asio::this_coro::executor);
            for (;;) {
                auto got = co_await bucket->get("svc." + task);
                if (got && got->revision > newer_than) co_return *got;
                if (std::chrono::steady_clock::now() >= end) co_return std::nullopt;
                t.expires_after(50ms);
                co_await t.async_wait(asio::use_awaitable);
            }
        };
        return fiskai::test::run_on(h->ioc, wait(), deadline + 10s);
    }

    js::stream_info stream(const std::string& name = "FISK_WORK") {
        auto got = fiskai::test::run_on(h->ioc, nats.js.get_stream_info(name), 10s);
        return got.value();
    }
    js::consumer_info consumer(const std::string& name = "svc") {
        auto got = fiskai::test::run_on(h->ioc, nats.js.get_consumer_info("FISK_WORK", name), 10s);
        return got.value();
    }

    // Runs the io_context until `done` holds or the deadline passes.
    bool until(const std::function<bool()>& done, std::chrono::steady_clock::duration deadline = 30s) {
        const auto end = std::chrono::steady_clock::now() + deadline;
        while (!done()) {
            if (std::chrono::steady_clock::now() >= end) return false;
            if (h->ioc.stopped()) h->ioc.restart();
            h->ioc.run_one_for(20ms);
        }
        return true;
    }

    // The fake LLM's requests whose conversation is `name` (all when empty).
    std::size_t llm_requests(std::string_view name = {}) const {
        std::ifstream in(llm_log);
        std::string line;
        std::size_t n = 0;
        while (std::getline(in, line)) {
            if (line.empty()) continue;
            if (name.empty() || line.find(fmt::format("\"conversation\":\"{}\"", name)) != std::string::npos) ++n;
        }
        return n;
    }
};

// Lines of the file at `path` holding every one of `needles` (the fake LLM's log).
inline std::size_t count_lines(const std::string& path, const std::vector<std::string>& needles) {
    std::ifstream in(path);
    std::string line;
    std::size_t n = 0;
    while (std::getline(in, line)) {
        bool all = true;
        for (const auto& s : needles) all = all && line.find(s) != std::string::npos;
        if (all) ++n;
    }
    return n;
}

template <class M>
M stored_as(const js::kv_entry& e) {
    auto m = a2a::default_validator().check_as<M>(e.value);
    INFO("stored: " << e.value);
    REQUIRE(m.has_value());
    return *m;
}

// A server with the queue channel, running on the world's io_context until drained.
struct worker {
    world& w;
    std::shared_ptr<serve::queue_channel> channel;
    std::unique_ptr<serve::server> server;
    std::future<void> finished;

    explicit worker(world& wd, serve::queue_channel_options o, std::size_t workers = 1) : w(wd) {
        channel = w.open(std::move(o));
        serve::server_options so;
        so.workers = workers;
        server = std::make_unique<serve::server>(w.h->ioc.get_executor(), w.h->rt, so);
        server->add(channel, serve::channel_options{true});
        finished = asio::co_spawn(w.h->ioc, server->run(), asio::use_future);
    }
    ~worker() { stop(); }

    void stop() {
        if (!finished.valid()) return;
        server->drain();
        w.until([&] { return finished.wait_for(0s) == std::future_status::ready; }, 30s);
        if (finished.wait_for(0s) == std::future_status::ready) finished.get();
    }
};

}  // namespace queue_test
