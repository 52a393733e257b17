// Every failure conns reports carries a code a caller can branch on, and its text is the
// one the other tests pin: a refused or silent server, refused credentials, settings this
// client cannot honour, a missing, misnamed or malformed context, a broker that cannot run.

#include <fiskai/conns/connection.hpp>
#include <fiskai/conns/embedded_broker.hpp>
#include <fiskai/conns/error.hpp>

#include "conns_test_support.hpp"

#include <catch2/catch.hpp>

#include <arpa/inet.h>
#include <filesystem>
#include <fstream>
#include <functional>
#include <netinet/in.h>
#include <string>
#include <sys/socket.h>
#include <system_error>
#include <unistd.h>

namespace fs = std::filesystem;
using namespace fiskai::conns;

namespace {

connect_options quick() { return fiskai::test::quick_dial("conns-error-test"); }

using fiskai::test::failure_of;

// A loopback port that completes TCP handshakes (the kernel's backlog) but never says
// anything, as a hung server would.
struct silent_listener {
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    unsigned short port = 0;
    silent_listener() {
        sockaddr_in addr{};
        addr.sin_family = AF_INET;
        addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
        REQUIRE(::listen(fd, 16) == 0);
        socklen_t len = sizeof addr;
        REQUIRE(::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0);
        port = ntohs(addr.sin_port);
    }
    ~silent_listener() { ::close(fd); }
};

struct scratch {
    fs::path root;
    scratch() {
        char tmpl[] = "/tmp/fiskai-conns-error-XXXXXX";
        root = ::mkdtemp(tmpl);
    }
    ~scratch() { fs::remove_all(root); }
};

}  // namespace

TEST_CASE("conns: a failed dial says whether the server refused or stayed silent or refused the credentials",
          "[conns][errc]") {
    SECTION("nobody listening") {
        embedded_broker broker;
        const auto port = broker.port();
        broker.stop();
        nats_context ctx;
        ctx.name = "gone";
        ctx.url = "127.0.0.1:" + std::to_string(port);
        const auto f = failure_of([&] { (void)connection::dial(ctx, quick()); });
        CHECK(f.code == errc::connection_refused);
        CHECK_THAT(f.message, Catch::StartsWith("connecting to NATS context \"gone\": "));
    }
    SECTION("a server that accepts and never speaks") {
        silent_listener silent;
        nats_context ctx;
        ctx.name = "silent";
        ctx.url = "127.0.0.1:" + std::to_string(silent.port);
        const auto f = failure_of([&] { (void)connection::dial(ctx, quick()); });
        CHECK(f.code == errc::timed_out);
        CHECK_THAT(f.message, Catch::StartsWith("connecting to NATS context \"silent\": "));
    }
    SECTION("wrong credentials") {
        broker_options o;
        o.extra_args = {"--user", "alice", "--pass", "s3cret"};
        embedded_broker broker(o);
        nats_context ctx;
        ctx.name = "auth";
        ctx.url = broker.url();
        ctx.user = "alice";
        ctx.password = "wrong";
        const auto f = failure_of([&] { (void)connection::dial(ctx, quick()); });
        CHECK(f.code == errc::not_authorized);
        CHECK_THAT(f.message, Catch::StartsWith("connecting to NATS context \"auth\": "));
    }
}

TEST_CASE("conns: context failures carry their own codes", "[conns][errc]") {
    scratch dir;
    const context_environment env{.xdg_config_home = dir.root.string(), .home = ""};
    CHECK(failure_of([&] { (void)load_context("../up", env); }).code == errc::invalid_context_name);
    CHECK(failure_of([&] { (void)load_context("nope", env); }).code == errc::context_not_found);
    CHECK(failure_of([&] { (void)parse_context("[1]", "inline", env); }).code == errc::malformed_context);
    CHECK(failure_of([&] { (void)parse_context("{\"url\": 5}", "inline", env); }).code == errc::malformed_context);
    const context_environment nowhere{};
    CHECK(failure_of([&] { (void)nowhere.config_root(); }).code == errc::no_context_directory);

    nats_context ctx;
    ctx.name = "x";
    ctx.tls_first = true;
    const auto f = failure_of([&] { (void)connection::dial(ctx, quick()); });
    CHECK(f.code == errc::unsupported_setting);
    CHECK_THAT(f.message, Catch::Contains("tls_first"));
    ctx.tls_first = false;
    ctx.nkey = (dir.root / "missing.nk").string();
    CHECK(failure_of([&] { (void)connection::dial(ctx, quick()); }).code == errc::unreadable_file);
}

TEST_CASE("conns: a broker that cannot run says whether it is missing or failed", "[conns][errc]") {
    broker_options missing;
    missing.executable = "/nonexistent/nats-server";
    CHECK(failure_of([&] { embedded_broker b(missing); }).code == errc::broker_not_installed);
    broker_options bad;
    bad.extra_args = {"--no-such-flag"};
    CHECK(failure_of([&] { embedded_broker b(bad); }).code == errc::broker_failed);
}

TEST_CASE("conns: the codes are Boost.System and std::error_code alike", "[conns][errc]") {
    const boost::system::error_code boost_code = errc::connection_refused;
    CHECK(boost_code.category() == conns_category());
    CHECK(boost_code.message() == "no NATS server accepted the connection");
    const std::error_code std_code = errc::timed_out;
    CHECK(std_code.message() == "NATS connection timed out");
    CHECK(std::string(std_code.category().name()) == "fiskai.conns");
    CHECK(std_code == std::error_code(boost::system::error_code(errc::timed_out)));
}
