// fisk-ai's Anthropic provider calling fiskai-fake-llm: N calls with C in flight on one
// io_context thread (as the served agent runs it); prints one JSON line with calls/s, p50
// and the process's peak RSS.
//   llm_bench <base url> <calls> <in flight>

#include <fiskai/llm/provider.hpp>
#include <fiskai/net/http_client.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/json.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <sys/resource.h>

namespace asio = boost::asio;
using namespace fiskai;
using clock_type = std::chrono::steady_clock;

namespace {

llm::request bench_request() {
    llm::request r;
    r.model = "claude-bench";
    r.system = {"You are an operator of a NATS JetStream cluster. Answer briefly."};
    r.messages = {llm::message{llm::role::user, {llm::text_block{"How many messages are in ORDERS?"}}}};
    r.tools = {llm::tool_def{
        "stream_info", "Shows the state of a stream",
        boost::json::parse(
            R"({"type":"object","properties":{"stream":{"type":"string","description":"Stream name"}},"required":["stream"]})")
            .as_object(),
        false}};
    return r;
}

struct run_figures {
    double calls_per_s = 0;
    double p50_ms = 0;
    int errors = 0;
};

run_figures run(asio::io_context& ioc, llm::provider& provider, int calls, int inflight) {
    std::vector<double> latencies;
    latencies.reserve(static_cast<std::size_t>(calls));
    int next = 0;
    int errors = 0;
    int running = inflight;
    auto end = clock_type::now();
    auto worker = [&]() -> asio::awaitable<void> {
        while (next < calls) {
            ++next;
            const auto start = clock_type::now();
            auto got = co_await provider.call(bench_request(), std::chrono::seconds(30));
            if (!got || got->content.size() != 2) {
                if (!got && errors == 0) std::cerr << got.error().message << '\n';
                ++errors;
            }
            latencies.push_back(std::chrono::duration<double, std::milli>(clock_type::now() - start).count());
        }
        // The last worker stops the clock and the context: the client's idle pool would
        // otherwise keep run() going until its idle timeout.
        if (--running == 0) {
            end = clock_type::now();
            ioc.stop();
        }
    };
    const auto start = clock_type::now();
    for (int i = 0; i < inflight; ++i) asio::co_spawn(ioc, worker(), asio::detached);
    ioc.restart();
    ioc.run();
    const double seconds = std::chrono::duration<double>(end - start).count();
    std::sort(latencies.begin(), latencies.end());
    return {calls / seconds, latencies.empty() ? 0 : latencies[latencies.size() / 2], errors};
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 4) {
        std::cerr << "usage: llm_bench <base url> <calls> <in flight>\n";
        return 2;
    }
    const std::string url = argv[1];
    const int calls = std::atoi(argv[2]);
    const int inflight = std::max(1, std::atoi(argv[3]));
    asio::io_context ioc{1};
    net::client_options options;
    options.idle_per_origin = static_cast<std::size_t>(std::max(inflight, 4));
    net::http_client client(ioc.get_executor(), options);
    llm::provider_config config;
    config.name = "anthropic";
    config.base_url = url;
    config.api_key = "bench-key";
    config.max_retries = 0;
    auto provider = llm::make_provider(config, ioc.get_executor(), client);

    (void)run(ioc, *provider, std::min(200, calls), inflight);  // warm-up: connections
    const auto figures = run(ioc, *provider, calls, inflight);
    rusage usage{};
    ::getrusage(RUSAGE_SELF, &usage);
    std::cout
        << fmt::format(
               R"({{"client":"fisk-ai","inflight":{},"calls":{},"calls_per_s":{:.1f},"p50_ms":{:.3f},"errors":{},"rss_mb":{:.1f}}})",
               inflight, calls, figures.calls_per_s, figures.p50_ms, figures.errors, usage.ru_maxrss / 1024.0)
        << std::endl;
    return figures.errors == 0 ? 0 : 1;
}
