#pragma once
// The contract every memory backend passes (agent-llm-state.md §6, 60-65), against a real
// backing store: call run_store_contract(make, traits) from a TEST_CASE; `make` returns a
// fresh, empty store each time.

#include <fiskai/memory/store.hpp>

#include "async_test.hpp"

#include <catch2/catch.hpp>

#include <functional>
#include <memory>
#include <string>

namespace fiskai::test::memory_contract {

namespace mem = fiskai::memory;
using store_factory = std::function<std::shared_ptr<mem::store>()>;

struct traits {
    // The KV backend with its guard on refuses an overwrite the view has not read.
    bool read_before_update = false;
};

template <class T>
T await(boost::asio::awaitable<T> a) {
    return run_awaitable(std::move(a), std::chrono::seconds(30));
}

inline void run_store_contract(const store_factory& make, traits t = {}) {
    SECTION("create then read") {
        auto store = make();
        auto v = store->open_view();
        REQUIRE(await(v->write("build", "how the build works", "run make", false)).has_value());
        auto e = await(v->read("build"));
        REQUIRE(e.has_value());
        CHECK(e->description == "how the build works");
        CHECK(e->content == "run make");
    }

    SECTION("create over an existing key is refused and leaves it untouched") {
        auto store = make();
        auto v = store->open_view();
        REQUIRE(await(v->write("k", "first", "one", false)).has_value());
        auto r = await(v->write("k", "second", "two", false));
        REQUIRE(!r.has_value());
        CHECK(r.error().code == mem::errc::exists);
        CHECK(r.error().message == "memory key already exists");
        auto e = await(store->open_view()->read("k"));
        REQUIRE(e.has_value());
        CHECK(e->content == "one");
    }

    SECTION("overwrite after a read; repeated overwrites") {
        auto store = make();
        auto writer = store->open_view();
        REQUIRE(await(writer->write("k", "d", "one", false)).has_value());
        auto v = store->open_view();
        REQUIRE(await(v->read("k")).has_value());
        REQUIRE(await(v->write("k", "d2", "two", true)).has_value());
        REQUIRE(await(v->write("k", "d3", "three", true)).has_value());
        auto e = await(store->open_view()->read("k"));
        REQUIRE(e.has_value());
        CHECK(e->description == "d3");
        CHECK(e->content == "three");
    }

    SECTION("read authority belongs to the view that read") {
        auto store = make();
        auto a = store->open_view();
        REQUIRE(await(a->write("k", "d", "one", false)).has_value());
        auto reader = store->open_view();
        REQUIRE(await(reader->read("k")).has_value());
        auto other = store->open_view();
        auto r = await(other->write("k", "d", "clobber", true));
        if (t.read_before_update) {
            REQUIRE(!r.has_value());
            CHECK(r.error().code == mem::errc::stale);
            // List never grants authority.
            REQUIRE(await(other->list()).has_value());
            r = await(other->write("k", "d", "clobber", true));
            REQUIRE(!r.has_value());
            CHECK(r.error().code == mem::errc::stale);
        } else {
            CHECK(r.has_value());
        }
    }

    SECTION("missing key, idempotent delete, re-create after delete") {
        auto store = make();
        auto v = store->open_view();
        auto e = await(v->read("absent"));
        REQUIRE(!e.has_value());
        CHECK(e.error().code == mem::errc::not_exist);
        CHECK(e.error().message == "memory key does not exist");
        auto d = await(v->remove("absent"));
        REQUIRE(d.has_value());
        CHECK(!*d);
        REQUIRE(await(v->write("k", "d", "c", false)).has_value());
        d = await(v->remove("k"));
        REQUIRE(d.has_value());
        CHECK(*d);
        d = await(v->remove("k"));
        REQUIRE(d.has_value());
        CHECK(!*d);
        REQUIRE(await(v->write("k", "again", "c2", false)).has_value());
        auto l = await(v->list());
        REQUIRE(l.has_value());
        REQUIRE(l->size() == 1);
        CHECK((*l)[0] == mem::item{"k", "again"});
    }

    SECTION("invalid keys are refused before any I/O; descriptions collapse to one line") {
        auto store = make();
        auto v = store->open_view();
        auto r = await(v->write("a/b", "d", "c", false));
        REQUIRE(!r.has_value());
        CHECK(r.error().code == mem::errc::invalid_key);
        CHECK(
            r.error().message ==
            R"(memory key "a/b" is invalid: use only letters, digits and '.', '_', '=' or '-' (no slashes or spaces))");
        auto rd = await(v->read(".dot"));
        REQUIRE(!rd.has_value());
        CHECK(rd.error().code == mem::errc::invalid_key);
        auto rm = await(v->remove("a..b"));
        REQUIRE(!rm.has_value());
        CHECK(rm.error().code == mem::errc::invalid_key);
        REQUIRE(await(v->write("multi", "line one\n\tline  two\r\n", "", false)).has_value());
        auto e = await(v->read("multi"));
        REQUIRE(e.has_value());
        CHECK(e->description == "line one line two");
        CHECK(e->content.empty());
        auto big = await(v->write("big", "d", std::string(mem::max_content_bytes + 1, 'x'), false));
        REQUIRE(!big.has_value());
        CHECK(big.error().message == "memory content is too large: 65537 bytes, limit is 65536");
    }

    SECTION("a full-size entry with YAML-significant text round-trips") {
        auto store = make();
        auto v = store->open_view();
        const std::string description = "- key: \"value\" # not a comment";
        std::string content(mem::max_content_bytes, 'y');
        content.replace(0, 9, "---\nbody\n");
        REQUIRE(await(v->write("full", description, content, false)).has_value());
        auto e = await(store->open_view()->read("full"));
        REQUIRE(e.has_value());
        CHECK(e->description == description);
        CHECK(e->content == content);
    }

    SECTION("list is sorted by key") {
        auto store = make();
        auto v = store->open_view();
        for (const char* k : {"zeta", "alpha", "mid.dle", "Upper"}) {
            REQUIRE(await(v->write(k, std::string("about ") + k, "x", false)).has_value());
        }
        auto l = await(v->list());
        REQUIRE(l.has_value());
        REQUIRE(l->size() == 4);
        CHECK((*l)[0].key == "Upper");
        CHECK((*l)[1].key == "alpha");
        CHECK((*l)[2].key == "mid.dle");
        CHECK((*l)[3] == mem::item{"zeta", "about zeta"});
    }
}

}  // namespace fiskai::test::memory_contract
