// Against a real nats-server: the embedded broker's life cycle, dialling from a context
// (credentials included), and which connections a provider closes.

#include <fiskai/conns/connection.hpp>
#include <fiskai/conns/embedded_broker.hpp>

#include "nkeys.hpp"

#include <nats/nats.h>
#include <openssl/rand.h>

#include <catch2/catch.hpp>

#include <csignal>
#include <filesystem>
#include <fstream>

namespace fs = std::filesystem;
using namespace fiskai::conns;

namespace {

connect_options quick() {
    connect_options o;
    o.name = connection_name("conns-test");
    o.connect_timeout = std::chrono::milliseconds(1000);
    return o;
}

bool alive(pid_t pid) { return ::kill(pid, 0) == 0; }

}  // namespace

TEST_CASE("the embedded broker listens on an ephemeral loopback port and stops cleanly", "[conns][broker]") {
    embedded_broker broker;
    REQUIRE(broker.running());
    CHECK(broker.port() != 0);
    CHECK(broker.url() == "nats://127.0.0.1:" + std::to_string(broker.port()));
    const auto pid = broker.pid();
    const auto store = broker.store_dir();
    CHECK(fs::exists(store));

    auto c = connection::dial_url(broker.url(), quick());
    CHECK(c->is_connected());
    CHECK(c->connected_url() == broker.url());
    CHECK(c->max_payload() == 1024 * 1024);

    CHECK(broker.stop());  // SIGTERM sufficed
    CHECK_FALSE(broker.running());
    CHECK_FALSE(alive(pid));
    CHECK_FALSE(fs::exists(store));
    CHECK(broker.stop());  // idempotent
}

TEST_CASE("two embedded brokers get different ports, a fixed port can be reused after a stop", "[conns][broker]") {
    embedded_broker a;
    embedded_broker b;
    CHECK(a.port() != b.port());
    const auto port = a.port();
    a.stop();
    broker_options again;
    again.port = port;
    embedded_broker c(again);
    CHECK(c.port() == port);
}

TEST_CASE("an embedded broker that cannot start says why", "[conns][broker]") {
    broker_options missing;
    missing.executable = "/nonexistent/nats-server";
    CHECK_THROWS_WITH(embedded_broker(missing),
                      Catch::Contains("/nonexistent/nats-server") && Catch::Contains("nats-server package"));

    broker_options bad;
    bad.extra_args = {"--no-such-flag"};
    CHECK_THROWS_WITH(embedded_broker(bad),
                      Catch::Contains("starting the embedded NATS server") && Catch::Contains("exited"));
}

TEST_CASE("dialling nothing fails at once with the context named", "[conns][connection]") {
    embedded_broker broker;
    const auto port = broker.port();
    broker.stop();
    nats_context ctx;
    ctx.name = "gone";
    ctx.url = "127.0.0.1:" + std::to_string(port);  // scheme added
    CHECK_THROWS_WITH(connection::dial(ctx, quick()), Catch::StartsWith("connecting to NATS context \"gone\": "));
}

TEST_CASE("settings nats.c cannot honour are refused rather than ignored", "[conns][connection]") {
    nats_context ctx;
    ctx.name = "x";
    ctx.tls_first = true;
    CHECK_THROWS_WITH(connection::dial(ctx, quick()), Catch::Contains("tls_first"));
    ctx.tls_first = false;
    ctx.socks_proxy = "socks5://proxy:1080";
    CHECK_THROWS_WITH(connection::dial(ctx, quick()), Catch::Contains("socks_proxy"));
    ctx.socks_proxy.clear();
    ctx.creds = "op://vault/item/creds";
    CHECK_THROWS_WITH(connection::dial(ctx, quick()), Catch::Contains("1Password"));
}

TEST_CASE("a context's user and password are used", "[conns][connection]") {
    broker_options o;
    o.extra_args = {"--user", "alice", "--pass", "s3cret"};
    embedded_broker broker(o);
    nats_context ctx;
    ctx.name = "auth";
    ctx.url = broker.url();
    CHECK_THROWS_WITH(connection::dial(ctx, quick()), Catch::Contains("connecting to NATS context \"auth\""));
    ctx.user = "alice";
    ctx.password = "s3cret";
    CHECK(connection::dial(ctx, quick())->is_connected());
}

TEST_CASE("an nkey seed file authenticates: the public key is derived from the seed", "[conns][connection][nkey]") {
    unsigned char raw[32];
    REQUIRE(RAND_bytes(raw, sizeof raw) == 1);
    const auto seed = detail::encode_user_seed(raw);
    REQUIRE(seed.size() == 58);
    REQUIRE(seed.rfind("SU", 0) == 0);
    REQUIRE(detail::find_user_seed("# a comment\n" + seed + "\n") == seed);
    const auto pub = detail::user_public_key(seed);
    REQUIRE(pub);
    // The seed is random: a failure must say which, so it can be replayed (a throwaway key).
    INFO("seed " << seed << " public key " << *pub);
    CHECK(pub->size() == 56);
    CHECK(pub->front() == 'U');
    std::string corrupt = seed;
    corrupt[20] = corrupt[20] == 'A' ? 'B' : 'A';
    CHECK_FALSE(detail::user_public_key(corrupt));

    char tmpl[] = "/tmp/fiskai-nkey-XXXXXX";
    const fs::path dir = ::mkdtemp(tmpl);
    std::ofstream(dir / "server.conf") << "authorization { users = [ { nkey: " << *pub << " } ] }\n";
    std::ofstream(dir / "user.nk") << seed << "\n";
    broker_options o;
    o.extra_args = {"-c", (dir / "server.conf").string()};
    embedded_broker broker(o);

    nats_context ctx;
    ctx.name = "nk";
    ctx.url = broker.url();
    CHECK_THROWS(connection::dial(ctx, quick()));  // no credentials: refused
    ctx.nkey = (dir / "user.nk").string();
    CHECK(connection::dial(ctx, quick())->is_connected());

    // The same key as an inline JWT-less seed is not a thing; a wrong seed is refused.
    unsigned char other[32];
    REQUIRE(RAND_bytes(other, sizeof other) == 1);
    std::ofstream(dir / "other.nk") << detail::encode_user_seed(other) << "\n";
    ctx.nkey = (dir / "other.nk").string();
    CHECK_THROWS(connection::dial(ctx, quick()));
    fs::remove_all(dir);
}

TEST_CASE("a provider closes only the connection it dialled", "[conns][provider]") {
    embedded_broker broker;

    SECTION("nothing provisioned") {
        provider p;
        CHECK(p.nats() == nullptr);
        p.close();
        p.close();
    }
    SECTION("borrowed: left open") {
        auto c = connection::dial_url(broker.url(), quick());
        {
            provider p(*c);
            CHECK(p.nats() == c.get());
            CHECK_FALSE(p.owns());
            p.close();
            CHECK(p.nats() == nullptr);
        }
        CHECK(c->is_connected());
    }
    SECTION("owned: closed by close() and by the destructor") {
        auto c = connection::dial_url(broker.url(), quick());
        natsConnection* raw = c->native_handle();
        REQUIRE(raw);
        provider p = provider::owning(std::move(c));
        CHECK(p.owns());
        provider moved = std::move(p);
        CHECK(p.nats() == nullptr);
        CHECK(moved.nats() != nullptr);
        moved.close();
        CHECK(moved.nats() == nullptr);
    }
    SECTION("dial: from a context file, named fisk-ai <identity>") {
        char tmpl[] = "/tmp/fiskai-ctx-XXXXXX";
        const fs::path dir = ::mkdtemp(tmpl);
        fs::create_directories(dir / "nats/context");
        std::ofstream(dir / "nats/context/local.json") << R"({"url":")" << broker.url() << R"("})";
        const context_environment env{dir.string(), "/nonexistent"};
        auto p = provider::dial("local", "agent-7", quick(), env);
        CHECK(p.owns());
        CHECK(p.nats()->context().name == "local");
        CHECK(p.nats()->is_connected());
        CHECK(p.nats()->new_inbox().rfind("_INBOX.", 0) == 0);
        CHECK_THROWS_WITH(provider::dial("missing", "agent-7", quick(), env),
                          Catch::Contains("unknown context \"missing\""));
        fs::remove_all(dir);
    }
}

TEST_CASE("a custom inbox prefix is used for reply subjects", "[conns][connection]") {
    embedded_broker broker;
    nats_context ctx;
    ctx.url = broker.url();
    ctx.inbox_prefix = "_PRIVATE.me";
    auto c = connection::dial(ctx, quick());
    CHECK(c->new_inbox().rfind("_PRIVATE.me.", 0) == 0);
    CHECK(connection::new_nuid().size() == 22);
}

TEST_CASE("an embedded broker with a token admits only clients that present it, and keeps it off argv and disk",
          "[conns][broker]") {
    broker_options o;
    o.jetstream = false;
    o.token = "t0k3n_ABC-123";
    embedded_broker broker(o);
    nats_context ctx;
    ctx.name = "local";
    ctx.url = broker.url();
    CHECK_THROWS_WITH(connection::dial(ctx, quick()), Catch::Contains("connecting to NATS context \"local\""));
    ctx.token = o.token;
    CHECK(connection::dial(ctx, quick())->is_connected());

    // Not on the command line (world-readable), and the config file is gone once it listens.
    std::ifstream cmdline("/proc/" + std::to_string(broker.pid()) + "/cmdline");
    const std::string argv((std::istreambuf_iterator<char>(cmdline)), std::istreambuf_iterator<char>());
    CHECK(argv.find("-c") != std::string::npos);
    CHECK(argv.find(o.token) == std::string::npos);
    const auto at = argv.find("auth.conf");
    REQUIRE(at != std::string::npos);
    const auto start = argv.rfind('\0', at) + 1;
    CHECK_FALSE(fs::exists(argv.substr(start, argv.find('\0', at) - start)));

    broker_options bad;
    bad.token = "has space";
    CHECK_THROWS_WITH(embedded_broker(bad), Catch::Contains("may hold only letters, digits"));
}
