#include <fiskai/toolkit/schema_validator.hpp>

#include <boost/json/parse.hpp>

#include <string>

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

TEST_CASE("patterns run in linear time and bounded stack whatever the input's length", "[schema][hostile]") {
    // std::regex recursed once per character here and overflowed the stack near 15,000.
    auto v = make(
        R"({"type":"object","properties":{"d":{"type":"string","pattern":"^[-+]?([0-9]*(\\.[0-9]*)?[a-z]+)+$"}}})");
    for (const std::size_t n : {15'000UL, 1'000'000UL}) {
        const std::string ok = std::string(n, '9') + "s";
        CHECK_FALSE(v.validate(json::value{{"d", ok}}));
        const std::string bad = std::string(n, '9') + "!";
        const auto problem = v.validate(json::value{{"d", bad}});
        REQUIRE(problem);
        CHECK_THAT(*problem, Catch::Contains("property \"d\"") && Catch::Contains("regex"));
    }
}

TEST_CASE("format checks survive huge values", "[schema][hostile]") {
    auto v = make(R"({"type":"object","properties":{"t":{"type":"string","format":"date-time"},
        "d":{"type":"string","format":"date"}}})");
    CHECK_FALSE(v.validate(json::parse(R"({"t":"2026-12-01T10:00:00Z","d":"2026-12-01"})")));
    const std::string digits(1'000'000, '1');
    CHECK(v.validate(json::value{{"t", digits + "-01-01T00:00:00Z!"}}));
    CHECK(v.validate(json::value{{"d", digits + "-13-01"}}));
}

TEST_CASE("patternProperties use the same engine", "[schema][hostile]") {
    auto v = make(R"({"type":"object","patternProperties":{"^x[0-9]+$":{"type":"integer"}}})");
    CHECK_FALSE(v.validate(json::parse(R"({"x12":3})")));
    CHECK(v.validate(json::value{{"x" + std::string(200'000, '7'), "not an integer"}}));
}

TEST_CASE("a pattern RE2 cannot compile refuses every value and is reported", "[schema]") {
    auto v = make(R"({"type":"object","properties":{"p":{"type":"string","pattern":"^(?=a)a$"}}})");
    REQUIRE(v.unenforced_keywords().size() == 1);
    CHECK_THAT(v.unenforced_keywords().front(), Catch::Contains("/properties/p/pattern") &&
                                                    Catch::Contains("not valid RE2 syntax") &&
                                                    Catch::Contains("every value will be refused"));
    CHECK(v.validate(json::parse(R"({"p":"a"})")));
}

// Boost.JSON holds integers from 2^63 to 2^64-1 as unsigned; valijson's adapter read them
// through int64 and saw them negative, so a maximum let 18446744073709551615 through as -1
// and a minimum refused 2^63 as below 0. Doubles at 2^63 were cast to int64 (undefined).
TEST_CASE("integers past the int64 range are compared as the numbers they are", "[schema]") {
    auto v = make(R"({"type":"object","properties":{
        "small":{"type":"integer","maximum":100},
        "positive":{"type":"integer","minimum":0},
        "even":{"type":"integer","multipleOf":2},
        "whole":{"type":"integer"}}})");
    CHECK(v.validate(json::parse(R"({"small":18446744073709551615})")));
    CHECK(v.validate(json::parse(R"({"small":9223372036854775808})")));
    CHECK_FALSE(v.validate(json::parse(R"({"small":100})")));
    CHECK_FALSE(v.validate(json::parse(R"({"positive":9223372036854775808})")));
    CHECK_FALSE(v.validate(json::parse(R"({"positive":18446744073709551615})")));
    CHECK(v.validate(json::parse(R"({"positive":-1})")));
    CHECK_FALSE(v.validate(json::parse(R"({"even":18446744073709551614})")));
    CHECK_FALSE(v.validate(json::parse(R"({"even":9.223372036854775808e18})")));
    CHECK_FALSE(v.validate(json::parse(R"({"whole":9223372036854775808})")));
    CHECK(v.validate(json::parse(R"({"whole":1e300})")));
    CHECK(v.validate(json::parse(R"({"whole":1.5})")));
    const auto big = v.validate(json::parse(R"({"small":18446744073709551615})"));
    REQUIRE(big);
    CHECK_THAT(*big, !Catch::Contains("-1"));
}

// valijson refuses a divisor that is not positive (0, or -1 against -2^63, would make the
// remainder a hardware fault); the integer path is exact to the ends of the int64 range.
TEST_CASE("multipleOf must be greater than 0 and is exact for int64", "[schema]") {
    for (const char* bad :
         {R"({"multipleOf":0})", R"({"multipleOf":-1})", R"({"multipleOf":-0.5})", R"({"multipleOf":0.0})"}) {
        INFO(bad);
        CHECK_THROWS_WITH(make(bad), Catch::Contains("must be positive"));
    }
    // 2^63-1 is 7 x 1317624576693539401; -2^63 is no multiple of 7.
    auto v = make(R"({"multipleOf":7})");
    CHECK_FALSE(v.validate(json::parse("-9223372036854775807")));
    CHECK(v.validate(json::parse("-9223372036854775808")));
}

// valijson read strings through c_str(): "a\u0000b" was checked as "a".
TEST_CASE("a string with an embedded NUL is checked whole", "[schema]") {
    auto v = make(R"({"type":"object","properties":{"name":{"type":"string","pattern":"^[a-z]+$","maxLength":3},
        "mode":{"enum":["a"]}}})");
    CHECK(v.validate(json::parse(R"({"name":"a\u0000b"})")));
    CHECK(v.validate(json::parse(R"({"name":"ab\u0000cd"})")));
    CHECK(v.validate(json::parse(R"({"mode":"a\u0000b"})")));
    CHECK_FALSE(v.validate(json::parse(R"({"name":"abc","mode":"a"})")));
}

// The vendored valijson builds a child's error path only when errors are collected, as
// they are here (the a2a validator's quick pass collects none, and builds none): every kind
// of child still names its whole path, however deep.
TEST_CASE("a violation at any depth names its whole path", "[schema]") {
    auto v = make(R"({"type":"object","properties":{"a":{"type":"array",
        "items":[{"type":"string"}],
        "additionalItems":{"type":"object",
            "patternProperties":{"^x":{"type":"integer"}},
            "additionalProperties":{"type":"object","properties":{"deep":{"type":"string"}}}}},
        "list":{"type":"array","items":{"type":"object","properties":{"n":{"type":"integer"}}}}}})");
    CHECK_FALSE(v.validate(json::parse(R"({"a":["s",{"x1":1,"y":{"deep":"ok"}}],"list":[{"n":1}]})")));
    const auto tuple_item = v.validate(json::parse(R"({"a":[5]})"));
    REQUIRE(tuple_item);
    CHECK_THAT(*tuple_item, Catch::Contains("property \"a.0\""));
    const auto pattern_member = v.validate(json::parse(R"({"a":["s",{"x1":"no"}]})"));
    REQUIRE(pattern_member);
    CHECK_THAT(*pattern_member, Catch::Contains("property \"a.1.x1\""));
    const auto additional_member = v.validate(json::parse(R"({"a":["s",{"y":{"deep":3}}]})"));
    REQUIRE(additional_member);
    CHECK_THAT(*additional_member, Catch::Contains("property \"a.1.y.deep\""));
    const auto list_item = v.validate(json::parse(R"({"list":[{"n":1},{"n":"two"}]})"));
    REQUIRE(list_item);
    CHECK_THAT(*list_item, Catch::Contains("property \"list.1.n\""));
}

// The vendored valijson skips an additionalProperties that no value can fail (absent, or
// `{}`) instead of gathering the matched names and checking every member against it again:
// whatever else the object's schema says is still enforced, and a real additionalProperties
// still sees exactly the members no other keyword matched.
TEST_CASE("an additionalProperties that accepts anything still lets patternProperties and properties check",
          "[schema]") {
    for (const char* additional : {"", R"(,"additionalProperties":{})"}) {
        CAPTURE(additional);
        auto v = make((std::string(R"({"type":"object","required":["id"],"properties":{"id":{"type":"string"}},)"
                                   R"("patternProperties":{"^n_":{"type":"integer"}})") +
                       additional + "}")
                          .c_str());
        CHECK_FALSE(v.validate(json::parse(R"({"id":"a","n_1":1,"anything":[true,{"x":null}]})")));
        CHECK(v.validate(json::parse(R"({"id":1})")));
        CHECK(v.validate(json::parse(R"({"id":"a","n_1":"one"})")));
        CHECK(v.validate(json::parse(R"({"n_1":1})")));
    }
    auto typed = make(R"({"type":"object","properties":{"id":{"type":"string"}},
        "patternProperties":{"^n_":{"type":"integer"}},"additionalProperties":{"type":"boolean"}})");
    CHECK_FALSE(typed.validate(json::parse(R"({"id":"a","n_1":1,"flag":true})")));
    const auto extra = typed.validate(json::parse(R"({"id":"a","n_1":1,"flag":"yes"})"));
    REQUIRE(extra);
    CHECK_THAT(*extra, Catch::Contains("property \"flag\""));
}
