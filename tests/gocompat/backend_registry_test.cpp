#include <fiskai/gocompat/backend_registry.hpp>

#include <catch2/catch.hpp>

#include <functional>

using registry = fiskai::gocompat::backend_registry<std::function<int()>>;

TEST_CASE("gocompat: backend_registry maps names to factories", "[gocompat][backend_registry]") {
    registry r("lib", {{"file", {[] { return 1; }, false}}, {"jetstream", {[] { return 2; }, true}}});
    CHECK(r.names() == std::vector<std::string>{"file", "jetstream"});
    CHECK(r.needs_nats("jetstream"));
    CHECK_FALSE(r.needs_nats("file"));
    CHECK_FALSE(r.needs_nats("nope"));
    REQUIRE(r.find("file"));
    CHECK((*r.find("file"))() == 1);
    CHECK_FALSE(r.find("nope"));

    r.add(
        "extra", [] { return 3; }, true);
    CHECK(r.names() == std::vector<std::string>{"extra", "file", "jetstream"});
    CHECK((*r.find("extra"))() == 3);
}

TEST_CASE("gocompat: backend_registry refuses bad registrations by name", "[gocompat][backend_registry]") {
    registry r("lib", {{"file", {[] { return 1; }, false}}});
    CHECK_THROWS_WITH(r.add(
                          "", [] { return 0; }, false),
                      "lib: register_backend called with an empty backend name");
    CHECK_THROWS_WITH(r.add("x", {}, false), "lib: register_backend called with an empty factory for backend x");
    CHECK_THROWS_WITH(r.add(
                          "file", [] { return 0; }, false),
                      "lib: register_backend called twice for backend file");
}
