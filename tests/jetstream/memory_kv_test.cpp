// The memory KV backend against a real nats-server: the shared memory contract with the
// read-before-update guard, Go's bind checks and texts, key prefixes (identity, shared,
// flat), a concurrent change refused as stale, the guard switched off.

#include <fiskai/memory/kv_store.hpp>

#include "js_fixture.hpp"
#include "../memory/store_contract.hpp"

#include <catch2/catch.hpp>

namespace js = fiskai::jetstream;
namespace mem = fiskai::memory;
using namespace std::chrono_literals;
using fiskai::test::js_fixture;
using fiskai::test::memory_contract::await;

namespace {

mem::context memory_context(js_fixture& f, const std::string& identity = "agent-a") {
    return mem::context{f.pool.get_executor(), {}, identity, f.connection.get()};
}

std::shared_ptr<mem::store> bind(js_fixture& f, mem::kv_store_options o, const std::string& identity = "agent-a") {
    return await(mem::bind_kv_store(std::move(o), memory_context(f, identity)));
}

std::shared_ptr<mem::store> bind(js_fixture& f, const std::string& bucket, const std::string& identity = "agent-a") {
    mem::kv_store_options o;
    o.bucket = bucket;
    return bind(f, o, identity);
}

std::string bind_failure(js_fixture& f, mem::kv_store_options o, const std::string& identity = "agent-a") {
    try {
        (void)bind(f, std::move(o), identity);
    } catch (const mem::startup_error& e) {
        return e.what();
    }
    return "bound";
}

std::string bind_failure(js_fixture& f, const std::string& bucket) {
    mem::kv_store_options o;
    o.bucket = bucket;
    return bind_failure(f, o);
}

}  // namespace

TEST_CASE("memory kv: the memory contract, read-before-update on", "[memory][jetstream][nats]") {
    js_fixture f;
    int n = 0;
    fiskai::test::memory_contract::run_store_contract(
        [&] {
            const auto bucket = "mem" + std::to_string(++n);
            f.add_kv(bucket, 70000);
            return bind(f, bucket);
        },
        {.read_before_update = true});
}

TEST_CASE("memory kv: a server without JetStream is named, with the fix", "[memory][jetstream][nats]") {
    js_fixture f(fiskai::test::without_jetstream());
    CHECK(bind_failure(f, "agent-memory") ==
          "jetstream memory: cannot bind KV bucket \"agent-memory\": " + f.not_enabled_text());
}

TEST_CASE("memory kv: bind checks in Go's words, nothing is provisioned", "[memory][jetstream][nats]") {
    js_fixture f;
    CHECK(bind_failure(f, "agent-memory") ==
          "jetstream memory: KV bucket \"agent-memory\" does not exist; create it first, e.g. `nats kv add "
          "agent-memory --history=1 --max-value-size=70000`");
    CHECK(await(f.js.bind_kv("agent-memory")).error().code == js::errc::not_found);

    f.add_kv("expiring", 70000, std::chrono::nanoseconds(24h).count());
    CHECK(bind_failure(f, "expiring") ==
          "jetstream memory: KV bucket \"expiring\" has a 24h0m0s TTL set; stored memories would silently expire. "
          "Recreate the bucket without a TTL for durable memory");
    // Sized to Go's entry bound: create and update add a header the server counts, so a
    // full entry would not fit.
    f.add_kv("entry-sized", 69600);
    CHECK(bind_failure(f, "entry-sized") ==
          "jetstream memory: KV bucket \"entry-sized\" max value size is 69600 bytes, below the 70000 byte memory "
          "entry limit; large memories would fail to write. Recreate the bucket with --max-value-size=70000");
    f.add_kv("content-sized", 65536);
    CHECK(bind_failure(f, "content-sized").find("max value size is 65536 bytes") != std::string::npos);

    mem::kv_store_options none;
    CHECK(bind_failure(f, none) ==
          "jetstream memory: options.bucket is required (the KV bucket name); the bucket must already exist");
    f.add_kv("ok", -1);
    mem::kv_store_options bad_prefix;
    bad_prefix.bucket = "ok";
    bad_prefix.prefix = "a/b";
    CHECK(bind_failure(f, bad_prefix) ==
          "jetstream memory: options.prefix \"a/b\" is invalid: memory key \"a/b\" is invalid: use only letters, "
          "digits and '.', '_', '=' or '-' (no slashes or spaces)");
    mem::kv_store_options by_identity;
    by_identity.bucket = "ok";
    CHECK(bind_failure(f, by_identity, "my agent") ==
          "jetstream memory: the agent identity \"my agent\" cannot be used as a key prefix (memory key \"my agent\" "
          "is invalid: use only letters, digits and '.', '_', '=' or '-' (no slashes or spaces)); set "
          "options.prefix to a legal value, or \"\" for a flat keyspace");
    mem::context no_nats{f.pool.get_executor(), {}, "agent-a", nullptr};
    CHECK_THROWS_WITH(await(mem::bind_kv_store(by_identity, no_nats)),
                      "jetstream memory: requires a NATS connection but none is configured; set nats_context in the "
                      "config to a context created with `nats context add`");
    // Registered beside the file backend, needing NATS.
    CHECK(mem::needs_nats("jetstream"));
    CHECK(mem::backends() == std::vector<std::string>{"file", "jetstream"});
    // An unlimited bucket binds; the factory decodes options strictly.
    CHECK(bind(f, "ok")->location() == "KV bucket \"ok\"");
    CHECK(mem::make_kv_store(R"({"bucket":"ok","prefix":"","no_require_read_before_update":true})", memory_context(f))
              ->location() == "KV bucket \"ok\"");
    CHECK_THROWS_AS(mem::make_kv_store(R"({"bucket":"ok","ttl":1})", memory_context(f)), mem::startup_error);
}

TEST_CASE("memory kv: a full-size entry fits a 70000-byte bucket through create and update",
          "[memory][jetstream][nats]") {
    js_fixture f;
    f.add_kv("mem", 70000);
    auto store = bind(f, "mem");
    auto v = store->open_view();
    // 500 four-byte runes: the longest description; the largest content.
    std::string description;
    for (int i = 0; i < 500; ++i) description += "\xF0\x9F\x98\x80";
    const std::string content(mem::max_content_bytes, 'c');
    REQUIRE(await(v->write("full", description, content, false)).has_value());
    REQUIRE(await(v->write("full", description, std::string(mem::max_content_bytes, 'd'), true)).has_value());
    auto e = await(store->open_view()->read("full"));
    REQUIRE(e.has_value());
    CHECK(e->content == std::string(mem::max_content_bytes, 'd'));
}

TEST_CASE("memory kv: keys live under the identity, a shared prefix or none", "[memory][jetstream][nats]") {
    js_fixture f;
    f.add_kv("mem", 70000);
    auto a = bind(f, "mem", "agent-a");
    auto b = bind(f, "mem", "agent-b");
    REQUIRE(await(a->open_view()->write("note", "from a", "x", false)).has_value());
    REQUIRE(await(b->open_view()->write("note", "from b", "y", false)).has_value());
    auto la = await(a->open_view()->list());
    REQUIRE(la.has_value());
    CHECK(*la == std::vector<mem::item>{{"note", "from a"}});
    auto kv = await(f.js.bind_kv("mem"));
    REQUIRE(kv.has_value());
    CHECK(await(kv->get("agent-a.note")).has_value());
    CHECK(await(kv->get("agent-b.note")).has_value());

    mem::kv_store_options shared;
    shared.bucket = "mem";
    shared.prefix = "team";
    auto s1 = bind(f, shared, "agent-a");
    auto s2 = bind(f, shared, "agent-b");
    REQUIRE(await(s1->open_view()->write("plan", "shared plan", "z", false)).has_value());
    auto seen = await(s2->open_view()->read("plan"));
    REQUIRE(seen.has_value());
    CHECK(seen->description == "shared plan");

    mem::kv_store_options flat;
    flat.bucket = "mem";
    flat.prefix = "";
    auto fl = bind(f, flat);
    REQUIRE(await(fl->open_view()->write("top", "flat", "t", false)).has_value());
    CHECK(await(kv->get("top")).has_value());
    // Flat sees the whole bucket, prefixed keys included.
    auto all = await(fl->open_view()->list());
    REQUIRE(all.has_value());
    CHECK(all->size() == 4);
}

TEST_CASE("memory kv: an overwrite after another writer's change is stale, the guard can be switched off",
          "[memory][jetstream][nats]") {
    js_fixture f;
    f.add_kv("mem", 70000);
    auto store = bind(f, "mem");
    auto mine = store->open_view();
    REQUIRE(await(mine->write("k", "d", "one", false)).has_value());
    auto theirs = store->open_view();
    REQUIRE(await(theirs->read("k")).has_value());
    REQUIRE(await(theirs->write("k", "d", "two", true)).has_value());

    auto stale = await(mine->write("k", "d", "mine", true));
    REQUIRE(!stale.has_value());
    CHECK(stale.error().code == mem::errc::stale);
    CHECK(stale.error().message ==
          "memory changed since it was read: memory \"k\" changed since it was read; read it again before overwriting");
    // The authority is dropped: a retry without a read is refused as unread.
    auto unread = await(mine->write("k", "d", "mine", true));
    REQUIRE(!unread.has_value());
    CHECK(unread.error().message ==
          "memory changed since it was read: memory \"k\" was not read in this run; read it before overwriting");
    REQUIRE(await(mine->read("k")).has_value());
    REQUIRE(await(mine->write("k", "d", "mine", true)).has_value());

    mem::kv_store_options blind;
    blind.bucket = "mem";
    blind.no_require_read_before_update = true;
    auto loose = bind(f, blind);
    REQUIRE(await(loose->open_view()->write("k", "d", "blind", true)).has_value());
    auto e = await(store->open_view()->read("k"));
    REQUIRE(e.has_value());
    CHECK(e->content == "blind");
}
