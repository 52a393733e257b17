// a2a over NATS, each figure beside its floor, all in one run on one embedded broker:
//   1. a tool call over a2a (client -> NATS -> engine -> `fisk-demo echo` -> reply);
//   2. the floors it is made of: a bare nats.c request-reply to an echo responder on the
//      same broker, and a bare posix_spawn of the same command (with, for comparison, the
//      same spawn through the toolkit runner); the call's p50 against the sum of the two
//      floors' p50s is the figure to watch;
//   3. discovery over a2a (the protocol work alone: stamp, encode, validate, no spawn);
//   4. throughput with several calls in flight, against the server's concurrency.
// The server runs on its own thread and io_context, as it would in its own process.
//
// Usage: a2a_bench [sequential calls] [calls per throughput run]

#include "../support/bare_spawn.hpp"

#include <fiskai/a2a/client.hpp>
#include <fiskai/a2a/server.hpp>
#include <fiskai/a2a_nats/transport.hpp>
#include <fiskai/conns/connection.hpp>
#include <fiskai/conns/embedded_broker.hpp>
#include <fiskai/toolkit/application.hpp>
#include <fiskai/toolkit/process.hpp>

#include <nats/nats.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>

#include <fmt/format.h>

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

extern char** environ;

namespace {

namespace asio = boost::asio;
namespace a2a = fiskai::a2a;
namespace conns = fiskai::conns;
namespace toolkit = fiskai::toolkit;
using clock_type = std::chrono::steady_clock;

struct stats {
    double mean_us, p50_us, p99_us;
};

stats summarise(std::vector<double> us) {
    std::sort(us.begin(), us.end());
    double sum = 0;
    for (double v : us) sum += v;
    auto pct = [&](double p) { return us[std::min(us.size() - 1, static_cast<std::size_t>(p * us.size()))]; };
    return {sum / us.size(), pct(0.5), pct(0.99)};
}

void row(const std::string& name, const stats& s) {
    fmt::print("  {:<62} mean {:>8.1f} us  p50 {:>8.1f} us  p99 {:>8.1f} us  ({:>7.0f}/s one at a time)\n", name,
               s.mean_us, s.p50_us, s.p99_us, 1e6 / s.mean_us);
}

double since_us(clock_type::time_point t) {
    return std::chrono::duration<double, std::micro>(clock_type::now() - t).count();
}

template <class T>
T run_on(asio::io_context& ioc, asio::awaitable<T> a) {
    auto f = asio::co_spawn(ioc, std::move(a), asio::use_future);
    ioc.restart();
    while (f.wait_for(std::chrono::seconds(0)) != std::future_status::ready) ioc.run_one();
    return f.get();
}

// A bare responder: the nats.c callback answers with the request's own bytes.
void echo_handler(natsConnection* nc, natsSubscription*, natsMsg* msg, void*) {
    if (const char* reply = natsMsg_GetReply(msg)) {
        natsConnection_Publish(nc, reply, natsMsg_GetData(msg), natsMsg_GetDataLength(msg));
    }
    natsMsg_Destroy(msg);
}

}  // namespace

int main(int argc, char** argv) {
    const int n = argc > 1 ? std::atoi(argv[1]) : 300;
    const int burst = argc > 2 ? std::atoi(argv[2]) : 400;
    conns::embedded_broker broker;
    fmt::print("a2a over NATS (nats-server at {}, {} sequential calls, {} calls per throughput run)\n", broker.url(), n,
               burst);

    conns::connect_options opts;
    opts.name = conns::connection_name("bench");
    auto server_conn = conns::connection::dial_url(broker.url(), opts);
    auto client_conn = conns::connection::dial_url(broker.url(), opts);

    // The server: the demo application's tools, on its own thread.
    asio::io_context server_ioc;
    toolkit::application_options app;
    app.application_path = FISK_DEMO_PATH;
    auto loaded = run_on(server_ioc, toolkit::load_application_tools(app));
    fiskai::a2a_nats::nats_transport server_transport(*server_conn, server_ioc.get_executor());
    a2a::server_options so;
    so.identity = "bench";
    so.concurrency = 4;
    a2a::server srv(server_ioc.get_executor(), loaded.tools, so);
    auto serving = asio::co_spawn(server_ioc, srv.serve(server_transport), asio::use_future);
    server_ioc.restart();
    auto guard = asio::make_work_guard(server_ioc);
    std::thread server_thread([&] { server_ioc.run(); });

    // The bare echo responder on the same broker.
    natsSubscription* echo_sub = nullptr;
    natsConnection_Subscribe(&echo_sub, server_conn->native_handle(), "bench.echo", echo_handler, nullptr);
    natsConnection_Flush(server_conn->native_handle());

    asio::io_context ioc;
    fiskai::a2a_nats::nats_transport transport(*client_conn, ioc.get_executor());
    a2a::client client(transport, {"bench-client"});
    const std::string input = R"({"text":["hello","bench"]})";

    // Warm up every path once; the server subscribes on its own thread, so the first
    // calls may find no responder yet: retry those until a deadline.
    {
        const auto deadline = clock_type::now() + std::chrono::seconds(10);
        auto warm = run_on(ioc, client.invoke("bench", "echo", input));
        while (!warm && warm.error().message.find("no responders") != std::string::npos &&
               clock_type::now() < deadline) {
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
            warm = run_on(ioc, client.invoke("bench", "echo", input));
        }
        if (!warm) {
            fmt::print(stderr, "a2a warm-up call failed: {}\n", warm.error().message);
            std::_Exit(1);
        }
    }

    fmt::print("\n== round trip, one call at a time (the four interleaved, so load on the machine hits all alike)\n");
    {
        std::vector<double> a2a_us, runner_us, spawn_us, nats_us;
        toolkit::process_spec spec;
        spec.executable = FISK_DEMO_PATH;
        spec.arguments = {"echo", "--", "hello", "bench"};
        spec.environment = toolkit::scrubbed_environment();
        const std::string body = *client.prepare_tool_call("bench", "echo", input);
        for (int i = 0; i < n; ++i) {
            auto t = clock_type::now();
            auto r = run_on(ioc, client.invoke("bench", "echo", input));
            a2a_us.push_back(since_us(t));
            if (!r || r->output != "hello bench\n") return 1;

            t = clock_type::now();
            auto p = run_on(ioc, toolkit::run_process(spec));
            runner_us.push_back(since_us(t));
            if (p.output != "hello bench\n") return 1;

            t = clock_type::now();
            if (fiskai::bench::bare_spawn(spec.executable, spec.arguments).output != "hello bench\n") return 1;
            spawn_us.push_back(since_us(t));

            natsMsg* reply = nullptr;
            t = clock_type::now();
            natsConnection_Request(&reply, client_conn->native_handle(), "bench.echo", body.data(),
                                   static_cast<int>(body.size()), 5000);
            nats_us.push_back(since_us(t));
            if (!reply) return 1;
            natsMsg_Destroy(reply);
        }
        const auto a2a_stats = summarise(a2a_us);
        const auto runner_stats = summarise(runner_us);
        const auto spawn_stats = summarise(spawn_us);
        const auto nats_stats = summarise(nats_us);
        row("a2a tool call (echo over NATS, spawned by the engine)", a2a_stats);
        row("direct spawn through the toolkit runner (run_process)", runner_stats);
        row("floor: bare posix_spawn + read + reap of the same command", spawn_stats);
        row("floor: bare nats.c request-reply, same body, echo responder", nats_stats);
        // The spawn floor is the quicker of the two spawns, so a loaded machine that slows
        // the blocking bare spawn more than the runner cannot flatter the figure.
        const double floor_p50 = std::min(spawn_stats.p50_us, runner_stats.p50_us) + nats_stats.p50_us;
        fmt::print("  a2a tool call p50 {:.1f} us = {:.2f}x (bare request-reply + spawn, p50 {:.1f} us); target 1.3x\n",
                   a2a_stats.p50_us, a2a_stats.p50_us / floor_p50, floor_p50);
    }
    {
        std::vector<double> us;
        for (int i = 0; i < n; ++i) {
            const auto t = clock_type::now();
            auto r = run_on(ioc, client.discover("bench"));
            us.push_back(since_us(t));
            if (!r) return 1;
        }
        row("a2a discovery (protocol work only, no spawn)", summarise(us));
    }

    fmt::print("\n== throughput, calls in flight (server concurrency {})\n", so.concurrency);
    for (int in_flight : {1, 4, 16}) {
        std::atomic<int> done{0};
        int failed = 0;
        const auto t = clock_type::now();
        auto worker = [&](int count) -> asio::awaitable<void> {
            for (int i = 0; i < count; ++i) {
                auto r = co_await client.invoke("bench", "echo", input);
                if (!r || r->output != "hello bench\n") ++failed;
                ++done;
            }
        };
        for (int w = 0; w < in_flight; ++w) asio::co_spawn(ioc, worker(burst / in_flight), asio::detached);
        ioc.restart();
        ioc.run();
        const double secs = since_us(t) / 1e6;
        fmt::print("  a2a tool calls, {:>2} in flight: {:>6.0f} calls/s ({} calls, {} failed)\n", in_flight,
                   done / secs, done.load(), failed);
    }
    {
        // The floor for throughput: spawning the same command, as many at once.
        toolkit::process_spec spec;
        spec.executable = FISK_DEMO_PATH;
        spec.arguments = {"echo", "--", "hello", "bench"};
        spec.environment = toolkit::scrubbed_environment();
        int count = 0;
        const auto t = clock_type::now();
        auto worker = [&](int k) -> asio::awaitable<void> {
            for (int i = 0; i < k; ++i) {
                co_await toolkit::run_process(spec);
                ++count;
            }
        };
        for (int w = 0; w < 4; ++w) asio::co_spawn(ioc, worker(burst / 4), asio::detached);
        ioc.restart();
        ioc.run();
        fmt::print("  floor: direct spawns, 4 at once:  {:>6.0f} calls/s\n", count / (since_us(t) / 1e6));
    }

    natsSubscription_Unsubscribe(echo_sub);
    natsSubscription_Destroy(echo_sub);
    asio::post(server_ioc, [&] { srv.stop(); });
    serving.wait();
    guard.reset();
    server_thread.join();
    return 0;
}
