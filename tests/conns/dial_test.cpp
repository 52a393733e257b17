// Dialling a server that greets and then goes silent: nats.c 3.4.1 would spin in its connect
// forever (nats-io/nats.c#707); the dial watchdog ends the attempt as a timeout.

#include <fiskai/conns/connection.hpp>

#include "conns_test_support.hpp"
#include "fake_nats_server.hpp"
#include "sockets.hpp"

#include <catch2/catch.hpp>

#include <future>
#include <memory>

using namespace fiskai::conns;
using namespace std::chrono_literals;

TEST_CASE("server URLs give the ports a dial connects to", "[conns][dial]") {
    CHECK(detail::server_ports({"nats://127.0.0.1:4333", "tls://user:p%40ss@host.example:7422", "localhost",
                                "nats://[::1]:5222", "nats://[::1]", "nats://host:0", "nats://host:99999",
                                "nats://host:12ab"}) == std::vector<std::uint16_t>{4333, 7422, 4222, 5222, 4222});
}

TEST_CASE("a server that greets and then goes silent fails the dial as a timeout, and the process stays well",
          "[conns][dial]") {
    fiskai::test::fake_nats_server server({}, false);
    nats_context ctx;
    ctx.name = "silent";
    ctx.url = server.url();
    const auto o = fiskai::test::quick_dial("dial-test", 500ms);
    // On a thread of its own, so that a dial that never returns fails the test instead of
    // hanging it (the thread is then left behind). A dial that returned is joined: a thread
    // still ending when the process exits has OpenSSL's per-thread state half torn down,
    // which LeakSanitizer reports as leaked (seen once under load).
    struct outcome {
        std::promise<std::string> said;
    };
    auto shared = std::make_shared<outcome>();
    auto said = shared->said.get_future();
    const auto started = std::chrono::steady_clock::now();
    std::thread dialler([shared, ctx, o] {
        try {
            (void)connection::dial(ctx, o);
            shared->said.set_value("connected");
        } catch (const connect_error& e) {
            shared->said.set_value(std::string(e.what()) +
                                   (e.code() == make_error_code(errc::timed_out) ? " [timed_out]" : ""));
        } catch (const std::exception& e) {
            shared->said.set_value(std::string("other error: ") + e.what());
        }
    });
    const bool returned = said.wait_for(10s) == std::future_status::ready;
    if (returned) {
        dialler.join();
    } else {
        dialler.detach();
    }
    REQUIRE(returned);
    CHECK(std::chrono::steady_clock::now() - started < 3s);
    CHECK(said.get() ==
          "connecting to NATS context \"silent\": the server sent its greeting (INFO) but did not answer the connect "
          "within 500 ms [timed_out]");
    const auto seen = server.seen();
    REQUIRE(seen.size() == 1);
    CHECK(seen[0].connect);
}
