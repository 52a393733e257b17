#include <fiskai/gocompat/strict_json.hpp>

#include <boost/json.hpp>

#include <catch2/catch.hpp>

using fiskai::gocompat::decode_strict_object;

// Go: json.NewDecoder(r) with DisallowUnknownFields into a struct; the "(known: ...)" tail
// is this project's addition, naming the fix.
TEST_CASE("gocompat: decode_strict_object reads an object of known keys", "[gocompat][strict_json]") {
    const std::vector<std::string_view> allowed{"stream", "replicas"};
    auto r = decode_strict_object(R"({"stream":"S","replicas":3})", allowed);
    REQUIRE(r);
    CHECK(r->at("stream").as_string() == "S");
    CHECK(r->at("replicas").as_int64() == 3);
    for (const std::string_view empty : {"", "  \n\t", "null", " null "}) {
        INFO(empty);
        auto e = decode_strict_object(empty, allowed);
        REQUIRE(e);
        CHECK(e->empty());
    }
}

TEST_CASE("gocompat: decode_strict_object names the bad key or value", "[gocompat][strict_json]") {
    const std::vector<std::string_view> allowed{"stream", "replicas"};
    auto r = decode_strict_object(R"({"stream":"S","Stream":"T"})", allowed);
    REQUIRE_FALSE(r);
    CHECK(r.error() == R"(json: unknown field "Stream" (known: stream, replicas))");
    r = decode_strict_object("[1]", allowed);
    REQUIRE_FALSE(r);
    CHECK(r.error() == "want a JSON object, got a array");
    r = decode_strict_object(R"("x")", allowed);
    REQUIRE_FALSE(r);
    CHECK(r.error() == "want a JSON object, got a string");
    r = decode_strict_object("{", allowed);
    REQUIRE_FALSE(r);
    CHECK_FALSE(r.error().empty());
    r = decode_strict_object(R"({"a":1})", {});
    REQUIRE_FALSE(r);
    CHECK(r.error() == R"(json: unknown field "a" (known: ))");
}
