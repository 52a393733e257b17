#include <fiskai/toolkit/schema_validator.hpp>

#include <boost/json/parse.hpp>

#include <catch2/catch.hpp>

using namespace fiskai::toolkit;
namespace json = boost::json;

namespace {
schema_validator make(const char* schema) { return schema_validator(json::parse(schema).as_object()); }
}  // namespace

TEST_CASE("valid arguments pass", "[schema]") {
    auto v = make(R"({"type":"object","additionalProperties":false,"required":["name"],
        "properties":{"name":{"type":"string"},"count":{"type":"integer"},"mode":{"type":"string","enum":["a","b"]}}})");
    CHECK_FALSE(v.validate(json::parse(R"({"name":"x","count":3,"mode":"a"})")));
}

TEST_CASE("each violation names the property", "[schema]") {
    auto v = make(R"({"type":"object","additionalProperties":false,"required":["name"],
        "properties":{"name":{"type":"string"},"count":{"type":"integer"},"mode":{"type":"string","enum":["a","b"]},
        "tags":{"type":"array","items":{"type":"string"}}}})");
    auto missing = v.validate(json::parse(R"({})"));
    REQUIRE(missing);
    CHECK_THAT(*missing, Catch::Contains("name"));
    auto wrong_type = v.validate(json::parse(R"({"name":"x","count":"three"})"));
    REQUIRE(wrong_type);
    CHECK_THAT(*wrong_type, Catch::Contains("property \"count\""));
    auto bad_enum = v.validate(json::parse(R"({"name":"x","mode":"c"})"));
    REQUIRE(bad_enum);
    CHECK_THAT(*bad_enum, Catch::Contains("property \"mode\""));
    auto unknown = v.validate(json::parse(R"({"name":"x","nope":1})"));
    REQUIRE(unknown);
    CHECK_THAT(*unknown, Catch::Contains("nope"));
    auto item = v.validate(json::parse(R"({"name":"x","tags":["a",2]})"));
    REQUIRE(item);
    CHECK_THAT(*item, Catch::Contains("tags.1"));
}

TEST_CASE("the duration pattern of fisk is enforced", "[schema]") {
    auto v = make(R"({"type":"object","properties":{"timeout":{"type":"string",
        "pattern":"^(0|[-+]?(\\d+(\\.\\d+)?(ns|us|µs|ms|s|m|h))+)$"}}})");
    CHECK_FALSE(v.validate(json::parse(R"({"timeout":"1m30s"})")));
    CHECK(v.validate(json::parse(R"({"timeout":"soon"})")));
}

TEST_CASE("a schema that cannot compile is refused with a clear error", "[schema]") {
    CHECK_THROWS_WITH(make(R"({"$ref":"#/nowhere"})"), Catch::StartsWith("the input schema cannot be compiled"));
    CHECK_THROWS_AS(make(R"({"type":7})"), std::invalid_argument);
}

TEST_CASE("keywords valijson does not enforce are listed", "[schema]") {
    auto v = make(R"({"type":"object","unevaluatedProperties":false,
        "properties":{"email":{"type":"string","format":"email"},"when":{"type":"string","format":"date-time"},
                      "tuple":{"type":"array","prefixItems":[{"type":"string"}]}}})");
    const auto& k = v.unenforced_keywords();
    REQUIRE(k.size() == 3);
    CHECK_THAT(k[0], Catch::Contains("unevaluatedProperties"));
    CHECK_THAT(k[1], Catch::Contains("/properties/email/format"));
    CHECK_THAT(k[2], Catch::Contains("/properties/tuple/prefixItems"));
}
