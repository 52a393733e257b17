#pragma once
// A real nats-server per test (loopback, ephemeral port, JetStream in a temporary
// directory), connections to it, and helpers that drive the io_context until a condition
// holds, with a deadline: never a sleep.

#include "engine_support.hpp"

#include <fiskai/a2a/client.hpp>
#include <fiskai/a2a/server.hpp>
#include <fiskai/a2a_nats/transport.hpp>
#include <fiskai/conns/connection.hpp>
#include <fiskai/conns/embedded_broker.hpp>
#include <fiskai/toolkit/application.hpp>

#include <nats/nats.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <catch2/catch.hpp>

#include <future>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

// A result shows its error text in a failed assertion.
template <typename T>
struct Catch::StringMaker<boost::system::result<T, fiskai::a2a::error>> {
    static std::string convert(const boost::system::result<T, fiskai::a2a::error>& r) {
        return r ? std::string("{value}") : "{error: " + r.error().message + "}";
    }
};

namespace nats_test {

namespace asio = boost::asio;
namespace a2a = fiskai::a2a;
namespace a2a_nats = fiskai::a2a_nats;
namespace conns = fiskai::conns;
namespace toolkit = fiskai::toolkit;
using namespace std::chrono_literals;
using a2a_test::run_until;

inline conns::connect_options test_options(const std::string& who) {
    conns::connect_options o;
    o.name = conns::connection_name(who);
    o.connect_timeout = 2s;
    o.reconnect_wait = 100ms;  // the broker-restart test waits for it
    o.max_reconnect = -1;
    return o;
}

// A raw NATS reply as a peer that is not this library sees it.
struct raw_reply {
    natsStatus status = NATS_OK;
    std::string data;
    std::map<std::string, std::string> headers;
    bool no_responders = false;
};

// A blocking nats.c request made on another thread while `ioc` keeps running, so that
// services on `ioc` can answer.
inline raw_reply raw_request(asio::io_context& ioc, conns::connection& c, const std::string& subject,
                             const std::string& data, std::chrono::milliseconds timeout = 2000ms) {
    auto f = std::async(std::launch::async, [&] {
        raw_reply out;
        natsMsg* reply = nullptr;
        out.status = natsConnection_Request(&reply, c.native_handle(), subject.c_str(), data.data(),
                                            static_cast<int>(data.size()), timeout.count());
        if (out.status == NATS_NO_RESPONDERS) out.no_responders = true;
        if (reply) {
            if (natsMsg_GetData(reply))
                out.data.assign(natsMsg_GetData(reply), static_cast<std::size_t>(natsMsg_GetDataLength(reply)));
            const char** keys = nullptr;
            int n = 0;
            if (natsMsgHeader_Keys(reply, &keys, &n) == NATS_OK) {
                for (int i = 0; i < n; ++i) {
                    const char* v = nullptr;
                    if (natsMsgHeader_Get(reply, keys[i], &v) == NATS_OK && v) out.headers[keys[i]] = v;
                }
                std::free(const_cast<char**>(keys));
            }
            natsMsg_Destroy(reply);
        }
        return out;
    });
    REQUIRE(run_until(
        ioc, [&] { return f.wait_for(0s) == std::future_status::ready; }, timeout + 5s));
    return f.get();
}

// A broker, a server connection and a client connection, and an io_context to run on.
struct nats_env {
    conns::embedded_broker broker;
    asio::io_context ioc;
    std::unique_ptr<conns::connection> server_conn = conns::connection::dial_url(broker.url(), test_options("server"));
    std::unique_ptr<conns::connection> client_conn = conns::connection::dial_url(broker.url(), test_options("client"));

    nats_env() = default;
    explicit nats_env(conns::broker_options o) : broker(std::move(o)) {}
};

// The demo application's tools, as `fisk-ai-a2a serve` loads them with the example config.
inline toolkit::tool_list demo_tools(asio::io_context& ioc) {
    toolkit::application_options o;
    o.application_path = FISK_DEMO_PATH;
    o.derive.confirm_tags = {"change:config"};
    auto loaded = a2a_test::run(ioc, toolkit::load_application_tools(o), 30s);
    return loaded.tools;
}

// An engine serving `tools` as `identity` over its own transport, until stop().
struct serving {
    a2a_nats::nats_transport transport;
    a2a::server server;
    std::shared_ptr<std::optional<bool>> done;

    serving(asio::io_context& ioc, conns::connection& conn, toolkit::tool_list tools, a2a::server_options o)
        : transport(conn, ioc.get_executor()),
          server(ioc.get_executor(), std::move(tools), std::move(o)),
          done(a2a_test::start(ioc, a2a_test::serve_until_stopped(server, transport))) {}

    // Waits until both endpoints are registered with the broker (INFO lists them).
    bool ready(asio::io_context& ioc) {
        return run_until(ioc, [&] {
            auto s = transport.service(server.identity());
            return s && s->info_json().find("\"tool\"") != std::string::npos &&
                   s->info_json().find("\"discovery\"") != std::string::npos;
        });
    }

    void stop(asio::io_context& ioc) {
        server.stop();
        REQUIRE(run_until(
            ioc, [&] { return done->has_value(); }, 30s));
    }
};

inline a2a::server_options options(std::string identity, std::size_t concurrency = 2,
                                   std::chrono::steady_clock::duration timeout = 30s) {
    a2a::server_options o;
    o.identity = std::move(identity);
    o.version = "v1";
    o.concurrency = concurrency;
    o.call_timeout = timeout;
    return o;
}

}  // namespace nats_test

namespace nats_test {

// The same request, blocking the calling thread (for use inside std::async).
inline raw_reply raw_request_blocking(conns::connection& c, const std::string& subject, const std::string& data,
                                      std::chrono::milliseconds timeout = std::chrono::milliseconds(5000)) {
    raw_reply out;
    natsMsg* reply = nullptr;
    out.status = natsConnection_Request(&reply, c.native_handle(), subject.c_str(), data.data(),
                                        static_cast<int>(data.size()), timeout.count());
    out.no_responders = out.status == NATS_NO_RESPONDERS;
    if (reply) {
        if (natsMsg_GetData(reply))
            out.data.assign(natsMsg_GetData(reply), static_cast<std::size_t>(natsMsg_GetDataLength(reply)));
        const char* v = nullptr;
        for (const char* key : {"Nats-Service-Error", "Nats-Service-Error-Code"}) {
            if (natsMsgHeader_Get(reply, key, &v) == NATS_OK && v) out.headers[key] = v;
        }
        natsMsg_Destroy(reply);
    }
    return out;
}

// Waits until a message sits in nats.c's queue for `ep`, not yet taken.
inline bool wait_for_pending(asio::io_context& ioc, const fiskai::a2a_nats::micro::endpoint& ep, std::size_t n = 1) {
    return run_until(ioc, [&] { return ep.pending() >= n; });
}

// A tool named `gate` whose calls each wait until the test opens their gate, in the
// order the calls arrived.
struct gates {
    std::vector<std::shared_ptr<asio::steady_timer>> waiting;

    std::shared_ptr<a2a_test::fake_tool> tool() {
        return a2a_test::make_tool(
            {.name = "gate",
             .run = [this](const boost::json::value&, toolkit::call_options) -> asio::awaitable<toolkit::outcome> {
                 auto t = std::make_shared<asio::steady_timer>(co_await asio::this_coro::executor,
                                                               std::chrono::steady_clock::time_point::max());
                 waiting.push_back(t);
                 boost::system::error_code ec;
                 co_await t->async_wait(asio::redirect_error(asio::use_awaitable, ec));
                 co_return toolkit::outcome::from_command({"gate", 0, "opened\n", false});
             }});
    }
    void open(std::size_t i) { waiting.at(i)->cancel(); }
};

}  // namespace nats_test
