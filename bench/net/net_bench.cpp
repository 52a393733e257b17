// The HTTP client's cost per call on loopback: keep-alive reuse against a fresh connection
// per call, over http and https, against the test server of tests/net (a Beast server on
// its own thread). Prints calls per second and the median and 99th percentile latency, then
// the throughput of a 16 MiB answer read whole and as a stream.

#include <fiskai/net/http_client.hpp>

#include "../../tests/net/test_server.hpp"
#include "../../tests/support/tls_fixture.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <vector>

namespace asio = boost::asio;
using clock_type = std::chrono::steady_clock;
using fiskai::test::http_test_server;

namespace {

asio::awaitable<std::vector<double>> run_calls(std::string url, fiskai::net::client_options options, int calls) {
    auto executor = co_await asio::this_coro::executor;
    fiskai::net::http_client client(executor, std::move(options));
    std::vector<double> micros;
    micros.reserve(calls);
    for (int i = 0; i < calls; ++i) {
        fiskai::net::http_request request{.method = "POST", .url = url, .body = R"({"model":"bench"})"};
        const auto start = clock_type::now();
        auto result = co_await client.send(std::move(request), clock_type::now() + std::chrono::seconds(10));
        micros.push_back(std::chrono::duration<double, std::micro>(clock_type::now() - start).count());
        if (!result) throw std::runtime_error(result.error().message);
    }
    co_return micros;
}

void report(const std::string& name, const std::string& url, fiskai::net::client_options options, int calls) {
    asio::io_context ioc;
    const auto start = clock_type::now();
    auto future = asio::co_spawn(ioc, run_calls(url, std::move(options), calls), asio::use_future);
    ioc.run();
    auto micros = future.get();
    const double seconds = std::chrono::duration<double>(clock_type::now() - start).count();
    std::sort(micros.begin(), micros.end());
    fmt::print("{:<28} {:>8.0f} calls/s   p50 {:>7.1f} us   p99 {:>7.1f} us\n", name, calls / seconds,
               micros[micros.size() / 2], micros[micros.size() * 99 / 100]);
}

asio::awaitable<void> answer(http_test_server::session& s) { co_await s.respond(200, std::string(512, 'r')); }

// Large answers: what a whole response and a streamed one cost per MiB (the read size is
// what matters here: the socket is read into the connection's buffer, then parsed).
constexpr std::size_t large_bytes = 16 << 20;
asio::awaitable<void> large_answer(http_test_server::session& s) {
    co_await s.respond(200, std::string(large_bytes, 'r'));
}

void report_large(const std::string& url, int calls) {
    asio::io_context ioc;
    double whole_seconds = 0;
    double streamed_seconds = 0;
    auto run = [&]() -> asio::awaitable<void> {
        auto executor = co_await asio::this_coro::executor;
        fiskai::net::client_options options;
        options.body_limit = 2 * large_bytes;
        fiskai::net::http_client client(executor, options);
        for (int i = 0; i < calls; ++i) {
            const auto start = clock_type::now();
            fiskai::net::http_request request{.method = "GET", .url = url};
            auto result = co_await client.send(std::move(request), clock_type::now() + std::chrono::seconds(60));
            whole_seconds += std::chrono::duration<double>(clock_type::now() - start).count();
            if (!result || result->body.size() != large_bytes) throw std::runtime_error("the large answer failed");
        }
        for (int i = 0; i < calls; ++i) {
            const auto start = clock_type::now();
            fiskai::net::http_request request{.method = "GET", .url = url};
            auto stream = co_await client.open_stream(std::move(request), clock_type::now() + std::chrono::seconds(60));
            if (!stream) throw std::runtime_error(stream.error().message);
            std::size_t got = 0;
            for (;;) {
                auto piece = co_await stream->read_some(clock_type::now() + std::chrono::seconds(60));
                if (!piece) throw std::runtime_error(piece.error().message);
                if (!*piece) break;
                got += (*piece)->size();
            }
            streamed_seconds += std::chrono::duration<double>(clock_type::now() - start).count();
            if (got != large_bytes) throw std::runtime_error("the streamed answer was short");
        }
    };
    auto future = asio::co_spawn(ioc, run(), asio::use_future);
    ioc.run();
    future.get();
    const double mib = static_cast<double>(large_bytes) / (1 << 20) * calls;
    fmt::print("{:<28} {:>8.0f} MiB/s\n", "http 16 MiB answer, whole", mib / whole_seconds);
    fmt::print("{:<28} {:>8.0f} MiB/s\n", "http 16 MiB answer, streamed", mib / streamed_seconds);
}

}  // namespace

int main(int argc, char** argv) {
    const int calls = argc > 1 ? std::atoi(argv[1]) : 2000;
    const auto& tls = fiskai::test::tls_material::get();
    http_test_server plain(answer);
    http_test_server secure(answer, tls.server_context("localhost"));
    const fiskai::net::client_options reuse{};
    const fiskai::net::client_options fresh{.idle_per_origin = 0};
    fiskai::net::client_options reuse_tls{.ca_file = tls.ca_file};
    fiskai::net::client_options fresh_tls{.idle_per_origin = 0, .ca_file = tls.ca_file};
    fmt::print("{} sequential POSTs each, 512-byte answers, loopback\n", calls);
    report("http keep-alive", plain.url(), reuse, calls);
    report("http new connection", plain.url(), fresh, calls);
    report("https keep-alive", fmt::format("https://localhost:{}/", secure.port()), reuse_tls, calls);
    report("https new connection", fmt::format("https://localhost:{}/", secure.port()), fresh_tls, calls / 4);
    http_test_server large(large_answer);
    report_large(large.url(), 10);
    return 0;
}
