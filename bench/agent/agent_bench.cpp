// The agent loop's own cost per iteration: 10-iteration sessions (9 tool turns calling an
// instant in-process tool, then an answer) against fiskai-fake-llm with the file journal.
// The provider's time and every journal append are timed apart, so
//   overhead per iteration = (session time - provider time - journal time) / iterations
// is what the loop itself adds (request building, dispatch, events, bookkeeping). The
// journal's own time per iteration (one fdatasync per record) is printed beside it: the
// fsync floor.
//   agent_bench <fiskai-fake-llm> [sessions]

#include <fiskai/agent/agent.hpp>
#include <fiskai/llm/provider.hpp>
#include <fiskai/net/http_client.hpp>
#include <fiskai/runstate/file_store.hpp>
#include <fiskai/runstate/store.hpp>
#include <fiskai/toolkit/function_tool.hpp>

#include "fake_llm_process.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/json.hpp>
#include <fmt/format.h>

#include <filesystem>
#include <fstream>

using namespace fiskai;
namespace asio = boost::asio;
namespace json = boost::json;
using clock_type = std::chrono::steady_clock;

namespace {

clock_type::duration provider_time{};
clock_type::duration journal_time{};
std::int64_t appends = 0;

class timed_provider final : public llm::provider {
public:
    explicit timed_provider(std::shared_ptr<llm::provider> inner) : inner_(std::move(inner)) {}
    [[nodiscard]] llm::capabilities caps() const override { return inner_->caps(); }
    asio::awaitable<llm::call_result<llm::response>> call(llm::request req, std::chrono::nanoseconds t) override {
        const auto start = clock_type::now();
        auto got = co_await inner_->call(std::move(req), t);
        provider_time += clock_type::now() - start;
        co_return got;
    }

private:
    std::shared_ptr<llm::provider> inner_;
};

class timed_journal final : public runstate::journal {
public:
    explicit timed_journal(std::unique_ptr<runstate::journal> inner) : inner_(std::move(inner)) {}
    asio::awaitable<runstate::result<void>> append(std::uint64_t seq, runstate::record rec) override {
        const auto start = clock_type::now();
        auto written = co_await inner_->append(seq, std::move(rec));
        journal_time += clock_type::now() - start;
        ++appends;
        co_return written;
    }
    asio::awaitable<runstate::result<std::vector<runstate::record>>> records() override {
        auto got = co_await inner_->records();
        co_return got;
    }
    [[nodiscard]] std::uint64_t last_seq() const noexcept override { return inner_->last_seq(); }
    runstate::result<void> close() override { return inner_->close(); }

private:
    std::unique_ptr<runstate::journal> inner_;
};

class timed_store final : public runstate::store {
public:
    explicit timed_store(std::shared_ptr<runstate::store> inner) : inner_(std::move(inner)) {}
    asio::awaitable<runstate::result<std::unique_ptr<runstate::journal>>> create(std::string id,
                                                                                 runstate::meta_record meta) override {
        const auto start = clock_type::now();
        auto j = co_await inner_->create(std::move(id), std::move(meta));
        journal_time += clock_type::now() - start;
        ++appends;
        if (!j) co_return j.error();
        co_return std::unique_ptr<runstate::journal>(std::make_unique<timed_journal>(std::move(*j)));
    }
    asio::awaitable<runstate::result<std::unique_ptr<runstate::journal>>> open(std::string id) override {
        auto j = co_await inner_->open(std::move(id));
        co_return j;
    }
    asio::awaitable<runstate::result<std::vector<runstate::record>>> read(std::string id) override {
        auto r = co_await inner_->read(std::move(id));
        co_return r;
    }
    asio::awaitable<runstate::result<bool>> exists(std::string id) override {
        const auto start = clock_type::now();
        auto r = co_await inner_->exists(std::move(id));
        journal_time += clock_type::now() - start;
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

private:
    std::shared_ptr<runstate::store> inner_;
};

std::string script() {
    json::array steps;
    for (int i = 0; i < 9; ++i) {
        steps.push_back(json::object{
            {"reply", json::object{{"content", json::array{json::object{{"type", "text"}, {"text", "Checking."}},
                                                           json::object{{"type", "tool_use"},
                                                                        {"name", "noop"},
                                                                        {"input", json::object{{"n", i}}}}}},
                                   {"stop_reason", "tool_use"},
                                   {"usage", json::object{{"input_tokens", 100}, {"output_tokens", 10}}}}}});
    }
    steps.push_back(
        json::object{{"reply", json::object{{"content", json::array{json::object{{"type", "text"}, {"text", "Done."}}}},
                                            {"stop_reason", "end_turn"}}}});
    json::object conv{{"name", "b"}, {"when", json::object{{"prompt_contains", ""}}}, {"steps", steps}};
    return json::serialize(json::object{{"conversations", json::array{conv}}});
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        fmt::print(stderr, "usage: agent_bench <fiskai-fake-llm> [sessions]\n");
        return 2;
    }
    const int sessions = argc > 2 ? std::stoi(argv[2]) : 50;
    std::string pattern = (std::filesystem::temp_directory_path() / "fiskai-agent-bench-XXXXXX").string();
    const std::filesystem::path dir = ::mkdtemp(pattern.data());
    std::ofstream(dir / "script.json") << script();
    test::fake_llm_process fake(argv[1], {"--script", (dir / "script.json").string(), "--port", "0"});

    asio::io_context ioc;
    asio::thread_pool blocking(1);
    net::http_client client(ioc.get_executor());
    llm::provider_config p;
    p.name = "anthropic";
    p.base_url = fmt::format("http://127.0.0.1:{}", fake.port());
    p.api_key = "bench";
    auto rt = std::make_shared<agent::runtime>();
    rt->cfg.llm.model = "claude-bench";
    rt->configured = agent::limits::from(rt->cfg);
    rt->provider = std::make_shared<timed_provider>(llm::make_provider(p, ioc.get_executor(), client));
    rt->sessions =
        std::make_shared<timed_store>(runstate::make_file_store((dir / "runs").string(), blocking.get_executor()));
    toolkit::function_tool_spec noop;
    noop.name = "noop";
    noop.description = "Does nothing";
    noop.exposed = toolkit::exposure{toolkit::surface::agent};
    noop.confirm = toolkit::confirm_posture::not_required;
    noop.handler = [](const json::object&, const toolkit::call_options&) -> asio::awaitable<toolkit::outcome> {
        co_return toolkit::outcome::from_json(json::object{{"ok", true}});
    };
    rt->tools.push_back(toolkit::make_function_tool(std::move(noop)));

    agent::agent loop(ioc.get_executor(), rt);
    auto run_all = [&]() -> asio::awaitable<std::pair<clock_type::duration, std::int64_t>> {
        clock_type::duration total{};
        std::int64_t iterations = 0;
        for (int i = 0; i < sessions + 1; ++i) {
            if (i == 1) {  // the first session warms the connection pool and caches
                total = {};
                iterations = 0;
                provider_time = {};
                journal_time = {};
                appends = 0;
            }
            agent::run_request r;
            r.session_id = fmt::format("bench-{}", i);
            r.prompt = "benchmark";
            r.effective = rt->configured;
            const auto start = clock_type::now();
            auto result = co_await loop.run(std::move(r));
            total += clock_type::now() - start;
            if (result.reason != "completed")
                throw std::runtime_error("session ended " + result.reason + ": " + result.error);
            iterations += result.counters.llm_calls;
        }
        co_return std::make_pair(total, iterations);
    };
    auto future = asio::co_spawn(ioc, run_all(), asio::use_future);
    while (future.wait_for(std::chrono::seconds(0)) != std::future_status::ready) {
        if (ioc.stopped()) ioc.restart();
        ioc.run_one_for(std::chrono::milliseconds(20));
    }
    auto [total, iterations] = future.get();
    blocking.join();
    std::filesystem::remove_all(dir);

    auto ms = [](clock_type::duration d) { return std::chrono::duration<double, std::milli>(d).count(); };
    const double per_iter = static_cast<double>(iterations);
    const double overhead = (ms(total) - ms(provider_time) - ms(journal_time)) / per_iter;
    fmt::print("sessions: {} x {} iterations (file journal, fake LLM on loopback)\n", sessions, iterations / sessions);
    fmt::print("session time per iteration:        {:.3f} ms\n", ms(total) / per_iter);
    fmt::print("  provider (model) per iteration:   {:.3f} ms\n", ms(provider_time) / per_iter);
    fmt::print("  journal (fsync floor) per iter:   {:.3f} ms ({:.2f} appends, {:.3f} ms each)\n",
               ms(journal_time) / per_iter, static_cast<double>(appends) / per_iter,
               ms(journal_time) / static_cast<double>(appends));
    fmt::print("loop overhead per iteration:        {:.3f} ms (goal < 0.5 ms)\n", overhead);
    return 0;
}
