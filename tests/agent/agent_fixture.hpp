#pragma once
// The agent tests' fixture: a scripted fiskai-fake-llm, the demo application, the file
// journal in a temp directory, a recording event sink, and a store whose journal fails
// on demand.

#include "temp_dir.hpp"
#include "fake_llm_process.hpp"
#include "session_harness.hpp"

#include <fiskai/runstate/state.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/json.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace agent_test {

using namespace fiskai;
using namespace std::chrono_literals;
namespace asio = boost::asio;
namespace json = boost::json;

using fiskai::test::temp_dir;

struct recording_sink final : agent::event_sink {
    std::vector<agent::warning> warnings;
    std::vector<agent::tool_call_trace> calls;
    std::vector<agent::tool_result_trace> results;
    std::vector<std::string> phases;
    int started = 0;
    void starting(const agent::run_info&) override { ++started; }
    void warn(const agent::warning& w) override { warnings.push_back(w); }
    void status(std::int64_t, std::string_view phase, const llm::usage&) override { phases.emplace_back(phase); }
    void tool_call(const agent::tool_call_trace& t) override { calls.push_back(t); }
    void tool_result(const agent::tool_result_trace& t) override {
        results.push_back(t);
        if (on_result) on_result(t);
    }
    std::function<void(const agent::tool_result_trace&)> on_result;
    void crashed(std::string_view what) override { crash = what; }
    std::string crash;
    [[nodiscard]] bool warned(std::string_view kind) const {
        return std::any_of(warnings.begin(), warnings.end(), [&](const auto& w) { return w.kind == kind; });
    }
};

// One scripted conversation: each step is a reply (content blocks and stop reason), with
// optional faults and expectations.
inline std::string script_of(const json::array& steps) {
    json::object conv{{"name", "c"}, {"when", json::object{{"prompt_contains", ""}}}, {"steps", steps}};
    json::object script{{"conversations", json::array{conv}}};
    return json::serialize(script);
}

inline json::object text_step(std::string_view text, std::string_view stop = "end_turn") {
    return json::object{{"reply", json::object{{"content", json::array{json::object{{"type", "text"}, {"text", text}}}},
                                               {"stop_reason", stop}}}};
}

inline json::object tool_step(std::string_view name, json::value input, json::object usage = {}) {
    json::object reply{{"content", json::array{json::object{{"type", "tool_use"}, {"name", name}, {"input", input}}}},
                       {"stop_reason", "tool_use"}};
    if (!usage.empty()) reply["usage"] = usage;
    return json::object{{"reply", reply}};
}

inline json::object expect_result(json::object step, std::string_view contains) {
    step["expect"] = json::object{{"last_tool_result_contains", contains}};
    return step;
}

struct fixture {
    temp_dir dir;
    std::string script_path;
    std::unique_ptr<test::fake_llm_process> fake;
    config::config cfg;
    std::unique_ptr<test::session_harness> h;
    recording_sink sink;
    int requests_seen = 0;

    // `provider`: `anthropic`, or `openai` (the fake speaks both).
    explicit fixture(const json::array& steps, const std::function<void(config::config&)>& adjust = {},
                     toolkit::tool_list extra = {}, std::string_view provider = "anthropic") {
        script_path = (dir.path / "script.json").string();
        std::ofstream(script_path) << script_of(steps);
        fake = std::make_unique<test::fake_llm_process>(
            FISKAI_FAKE_LLM, std::vector<std::string>{"--script", script_path, "--port", "0", "--exit-with-parent"});
        cfg.llm.model = "claude-test";
        cfg.application_path = FISK_DEMO_PATH;
        cfg.harness.confirm_tags = {"change:config"};
        if (adjust) adjust(cfg);
        std::filesystem::create_directories(dir.path / "runs");
        h = std::make_unique<test::session_harness>(
            cfg, (dir.path / "runs").string(), test::fake_model_provider(fake->port(), provider), std::move(extra));
    }

    agent::run_request request(std::string prompt = "do it", std::string session = "s1",
                               agent::session_mode mode = agent::session_mode::open_or_create) {
        auto r = h->request(std::move(session), std::move(prompt), mode);
        r.events = &sink;
        return r;
    }

    // The tool_result records' contents, in journal order.
    std::vector<runstate::tool_result_record> results(const std::string& session = "s1") {
        std::vector<runstate::tool_result_record> out;
        for (auto& r : h->records(session)) {
            if (auto* t = std::get_if<runstate::tool_result_record>(&r.payload)) out.push_back(*t);
        }
        return out;
    }

    std::optional<runstate::terminal_record> last_terminal(const std::string& session = "s1") {
        auto records = h->records(session);
        if (records.empty()) return std::nullopt;
        if (auto* t = std::get_if<runstate::terminal_record>(&records.back().payload)) return *t;
        return std::nullopt;
    }

    // Swaps the fake's script (several conversations, chosen by the first user text).
    void replace_script(const json::object& script) {
        auto status = test::run_on(h->ioc, [this, body = json::serialize(script)]() -> asio::awaitable<int> {
            net::http_request post{"POST", fmt::format("http://127.0.0.1:{}/_fake/script", fake->port()), {}, body};
            auto got = co_await h->client.send(std::move(post), std::chrono::steady_clock::now() + 10s);
            co_return got ? got->status : 0;
        }());
        if (status != 200) throw std::runtime_error(fmt::format("the fake refused the script: HTTP {}", status));
    }

    // The request bodies the fake has seen, in order.
    std::vector<json::object> request_bodies() {
        auto body = test::run_on(h->ioc, [this]() -> asio::awaitable<std::string> {
            net::http_request get{"GET", fmt::format("http://127.0.0.1:{}/_fake/requests", fake->port()), {}, ""};
            auto got = co_await h->client.send(std::move(get), std::chrono::steady_clock::now() + 10s);
            co_return got ? got->body : std::string();
        }());
        std::vector<json::object> out;
        std::size_t at = 0;
        while (at < body.size()) {
            const auto end = body.find('\n', at);
            const auto line = body.substr(at, end == std::string::npos ? std::string::npos : end - at);
            at = end == std::string::npos ? body.size() : end + 1;
            if (line.empty()) continue;
            auto logged = json::parse(line).as_object();
            auto request = logged["body"].is_string() ? json::parse(logged["body"].as_string()) : logged["body"];
            out.push_back(request.as_object());
        }
        return out;
    }

    // How many requests the fake has answered so far.
    int request_count() {
        auto body = test::run_on(h->ioc, [this]() -> asio::awaitable<std::string> {
            net::http_request get{"GET", fmt::format("http://127.0.0.1:{}/_fake/requests", fake->port()), {}, ""};
            auto got = co_await h->client.send(std::move(get), std::chrono::steady_clock::now() + 10s);
            co_return got ? got->body : std::string();
        }());
        return static_cast<int>(std::count(body.begin(), body.end(), '\n'));
    }

    // Cuts the journal back to its first `keep` records: what a crash would have left.
    void truncate_journal(std::size_t keep, const std::string& session = "s1") {
        const auto path = dir.path / "runs" / (session + ".json");
        std::ifstream in(path);
        std::string line, kept;
        for (std::size_t i = 0; i < keep && std::getline(in, line); ++i) kept += line + "\n";
        in.close();
        std::ofstream(path, std::ios::trunc) << kept;
    }
};

// Payload variant indexes (runstate::payload) for failing_store.
inline constexpr std::size_t user_payload = 2;
inline constexpr std::size_t tool_result_payload = 3;
inline constexpr std::size_t no_payload = 99;

// A real file journal whose appends of one record kind fail once (a full disk, a broker
// that timed out), and whose close may fail: the decorator only injects the failure.
class failing_journal final : public runstate::journal {
public:
    failing_journal(std::unique_ptr<runstate::journal> inner, std::size_t fail_index, bool fail_close)
        : inner_(std::move(inner)), fail_index_(fail_index), fail_close_(fail_close) {}
    asio::awaitable<runstate::result<void>> append(std::uint64_t seq, runstate::record rec) override {
        if (!failed_ && rec.payload.index() == fail_index_) {
            failed_ = true;
            co_return runstate::make_error(runstate::errc::storage, "writing record: no space left on device");
        }
        auto written = co_await inner_->append(seq, std::move(rec));
        co_return written;
    }
    asio::awaitable<runstate::result<std::vector<runstate::record>>> records() override {
        auto got = co_await inner_->records();
        co_return got;
    }
    [[nodiscard]] std::uint64_t last_seq() const noexcept override { return inner_->last_seq(); }
    runstate::result<void> close() override {
        auto closed = inner_->close();
        if (closed && fail_close_) return runstate::make_error(runstate::errc::storage, "closing: input/output error");
        return closed;
    }

private:
    std::unique_ptr<runstate::journal> inner_;
    std::size_t fail_index_;
    bool fail_close_;
    bool failed_ = false;
};

class failing_store final : public runstate::store {
public:
    failing_store(std::shared_ptr<runstate::store> inner, std::size_t fail_index, bool fail_close = false)
        : inner_(std::move(inner)), fail_index_(fail_index), fail_close_(fail_close) {}
    asio::awaitable<runstate::result<std::unique_ptr<runstate::journal>>> create(std::string id,
                                                                                 runstate::meta_record meta) override {
        auto j = co_await inner_->create(std::move(id), std::move(meta));
        if (!j) co_return j.error();
        co_return std::unique_ptr<runstate::journal>(
            std::make_unique<failing_journal>(std::move(*j), fail_index_, fail_close_));
    }
    asio::awaitable<runstate::result<std::unique_ptr<runstate::journal>>> open(std::string id) override {
        if (before_open) before_open(id);
        auto j = co_await inner_->open(std::move(id));
        if (!j) co_return j.error();
        co_return std::unique_ptr<runstate::journal>(
            std::make_unique<failing_journal>(std::move(*j), fail_index_, fail_close_));
    }
    asio::awaitable<runstate::result<std::vector<runstate::record>>> read(std::string id) override {
        auto r = co_await inner_->read(std::move(id));
        co_return r;
    }
    asio::awaitable<runstate::result<bool>> exists(std::string id) override {
        auto r = co_await inner_->exists(std::move(id));
        co_return r;
    }
    asio::awaitable<runstate::result<std::vector<runstate::run_info>>> list() override {
        auto r = co_await inner_->list();
        co_return r;
    }
    asio::awaitable<runstate::result<void>> remove(std::string id) override {
        auto r = co_await inner_->remove(std::move(id));
        co_return r;
    }
    [[nodiscard]] std::string location() const override { return inner_->location(); }

    // Runs as open() starts, before the lock is taken: where another worker's writes land
    // between a resume's read and its open.
    std::function<void(const std::string& id)> before_open;

private:
    std::shared_ptr<runstate::store> inner_;
    std::size_t fail_index_;
    bool fail_close_;
};

}  // namespace agent_test
