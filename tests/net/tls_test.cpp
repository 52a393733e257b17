// TLS against a loopback server whose CA is made at test time: refused unless trusted,
// trusted through client_options::ca_file or SSL_CERT_FILE, names checked.

#include <fiskai/net/http_client.hpp>

#include "async_test.hpp"
#include "test_server.hpp"
#include "tls_fixture.hpp"

#include <boost/asio/this_coro.hpp>
#include <catch2/catch.hpp>

#include <cstdlib>

using namespace std::chrono_literals;
namespace asio = boost::asio;
using fiskai::net::client_options;
using fiskai::net::http_client;
using fiskai::net::http_error;
using fiskai::net::http_request;
using fiskai::net::http_response;
using fiskai::net::http_result;
using fiskai::test::http_test_server;
using fiskai::test::run_awaitable;
using fiskai::test::tls_material;
using clock_type = std::chrono::steady_clock;

namespace {

http_result<http_response> get(std::string url, client_options options = {}) {
    return run_awaitable([](std::string u, client_options o) -> asio::awaitable<http_result<http_response>> {
        auto executor = co_await asio::this_coro::executor;
        http_client client(executor, std::move(o));
        http_request request{.method = "GET", .url = std::move(u)};  // a local: see docs/net.md on GCC 12
        co_return co_await client.send(std::move(request), clock_type::now() + 10s);
    }(std::move(url), std::move(options)));
}

asio::awaitable<void> answer_tls(http_test_server::session& s) { co_await s.respond(200, "over tls"); }

std::string https_url(const http_test_server& server, const std::string& host) {
    return fmt::format("https://{}:{}/", host, server.port());
}

// Sets an environment variable for one scope (the test process is single-threaded here).
struct scoped_env {
    std::string name;
    std::optional<std::string> previous;
    scoped_env(std::string n, const std::string& value) : name(std::move(n)) {
        if (const char* old = std::getenv(name.c_str())) previous = old;
        ::setenv(name.c_str(), value.c_str(), 1);
    }
    ~scoped_env() {
        if (previous) {
            ::setenv(name.c_str(), previous->c_str(), 1);
        } else {
            ::unsetenv(name.c_str());
        }
    }
};

}  // namespace

TEST_CASE("tls: a certificate from an untrusted CA is refused with the verify cause", "[net][tls]") {
    const auto& material = tls_material::get();
    http_test_server server(answer_tls, material.server_context("localhost"));
    auto result = get(https_url(server, "localhost"));
    REQUIRE(result.has_error());
    CHECK(result.error().what == http_error::kind::tls);
    CHECK_THAT(
        result.error().message,
        Catch::StartsWith(fmt::format("TLS handshake with localhost:{}: certificate verify failed (", server.port())));
    CHECK(fiskai::test::wait_until([&] { return server.handshake_failures == 1; }));
    CHECK(server.requests == 0);
}

TEST_CASE("tls: client_options::ca_file trusts the CA, by name and by address", "[net][tls]") {
    const auto& material = tls_material::get();
    http_test_server server(answer_tls, material.server_context("localhost"));
    for (const auto* host : {"localhost", "127.0.0.1"}) {
        auto result = get(https_url(server, host), {.ca_file = material.ca_file});
        INFO(host << ": " << (result.has_error() ? result.error().message : std::string()));
        REQUIRE(result.has_value());
        CHECK(result->body == "over tls");
    }
}

TEST_CASE("tls: SSL_CERT_FILE is honoured", "[net][tls]") {
    const auto& material = tls_material::get();
    http_test_server server(answer_tls, material.server_context("localhost"));
    scoped_env trust("SSL_CERT_FILE", material.ca_file);
    auto result = get(https_url(server, "localhost"));
    REQUIRE(result.has_value());
    CHECK(result->body == "over tls");
}

TEST_CASE("tls: a certificate for another name is refused as a hostname mismatch", "[net][tls]") {
    const auto& material = tls_material::get();
    http_test_server server(answer_tls, material.server_context("elsewhere"));
    auto result = get(https_url(server, "localhost"), {.ca_file = material.ca_file});
    REQUIRE(result.has_error());
    CHECK(result.error().what == http_error::kind::tls);
    CHECK(result.error().message ==
          fmt::format("TLS handshake with localhost:{}: certificate verify failed (hostname mismatch)", server.port()));
    auto by_address = get(https_url(server, "127.0.0.1"), {.ca_file = material.ca_file});
    REQUIRE(by_address.has_error());
    CHECK(
        by_address.error().message ==
        fmt::format("TLS handshake with 127.0.0.1:{}: certificate verify failed (IP address mismatch)", server.port()));
}

TEST_CASE("tls: keep-alive works over TLS", "[net][tls]") {
    const auto& material = tls_material::get();
    http_test_server server(answer_tls, material.server_context("localhost"));
    run_awaitable([&]() -> asio::awaitable<void> {
        auto executor = co_await asio::this_coro::executor;
        http_client client(executor, {.ca_file = material.ca_file});
        for (int i = 0; i < 3; ++i) {
            http_request request{.method = "GET", .url = https_url(server, "localhost")};
            auto result = co_await client.send(std::move(request), clock_type::now() + 10s);
            REQUIRE(result.has_value());
        }
    }());
    CHECK(server.connections == 1);
    CHECK(server.requests == 3);
}

TEST_CASE("tls: a CA file that does not load is named when the client is made", "[net][tls]") {
    asio::io_context ioc;
    CHECK_THROWS_WITH(http_client(ioc.get_executor(), {.ca_file = "/nonexistent/ca.pem"}),
                      Catch::StartsWith("CA file \"/nonexistent/ca.pem\" could not be loaded ("));
}

// Loading the system's CA bundle costs tens of milliseconds; a client that never dials TLS
// (a local model over plain HTTP) does not pay it. Shown by trust that arrives after the
// client was made: a context built with the client would not have it.
TEST_CASE("tls: the system's CA certificates are read at the first TLS dial, not when the client is made",
          "[net][tls]") {
    const auto& material = tls_material::get();
    http_test_server plain(
        [](http_test_server::session& s) -> asio::awaitable<void> { co_await s.respond(200, "plain"); });
    http_test_server secure(answer_tls, material.server_context("localhost"));
    std::optional<scoped_env> trust;
    run_awaitable([&]() -> asio::awaitable<void> {
        auto executor = co_await asio::this_coro::executor;
        http_client client(executor);
        http_request first{.method = "GET", .url = fmt::format("http://127.0.0.1:{}/", plain.port())};
        auto answered = co_await client.send(std::move(first), clock_type::now() + 10s);
        REQUIRE(answered.has_value());
        CHECK(answered->body == "plain");
        trust.emplace("SSL_CERT_FILE", material.ca_file);
        http_request second{.method = "GET", .url = https_url(secure, "localhost")};
        auto over_tls = co_await client.send(std::move(second), clock_type::now() + 10s);
        INFO((over_tls.has_error() ? over_tls.error().message : std::string()));
        REQUIRE(over_tls.has_value());
        CHECK(over_tls->body == "over tls");
    }());
}
