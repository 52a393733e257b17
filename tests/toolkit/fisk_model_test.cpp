#include "test_data.hpp"

#include <fiskai/toolkit/fisk_model.hpp>

#include <catch2/catch.hpp>

using namespace fiskai::toolkit;

TEST_CASE("the note's introspection document parses", "[fisk_model]") {
    auto app = parse_fisk_model(fiskai::test::note_example());
    CHECK(app.name == "demo");
    CHECK(app.version == "1.2.3");
    REQUIRE(app.commands.size() == 4);
    const auto& stream = app.commands[0];
    CHECK(stream.name == "stream");
    CHECK_FALSE(stream.is_leaf());
    REQUIRE(stream.commands.size() == 2);
    const auto& info = stream.commands[0];
    CHECK(info.tags == std::vector<std::string>{"impact:ro", "ai:no_defer"});
    REQUIRE(info.restricted_schema);
    CHECK(info.restricted_schema->at("required").as_array().size() == 1);
    REQUIRE(info.flags.size() == 1);
    CHECK(info.flags[0].boolean);
    CHECK(info.flags[0].negatable);
    const auto& pub = app.commands[1];
    CHECK(pub.flags[0].defaults == std::vector<std::string>{"1"});
    CHECK(pub.flags[2].cumulative);
    CHECK(pub.flags[3].completions == std::vector<std::string>{"sync", "async"});
    CHECK(pub.args[1].cumulative);
    CHECK(app.commands[2].hidden);
    REQUIRE(app.flags.size() == 3);
    CHECK(app.flags[1].hidden);
    CHECK(app.flags[2].required);
}

TEST_CASE("parsing tolerates unknown keys, absent keys and key case", "[fisk_model]") {
    auto app = parse_fisk_model(R"({"NAME":"x","future":{"a":1},"commands":[{"name":"a","Help":"h","extra":[1],
        "restricted_schema":{"type":"object"}}]})");
    CHECK(app.name == "x");
    REQUIRE(app.commands.size() == 1);
    CHECK(app.commands[0].help == "h");
    CHECK(app.commands[0].is_leaf());
    CHECK(app.flags.empty());
}

TEST_CASE("parse errors say what is wrong", "[fisk_model]") {
    CHECK_THROWS_WITH(parse_fisk_model("this is not json"), Catch::Contains("syntax error"));
    CHECK_THROWS_WITH(parse_fisk_model("[1,2]"), Catch::Contains("document: expected object, got array"));
    CHECK_THROWS_WITH(parse_fisk_model(R"({"commands":{"a":1}})"), Catch::Contains("expected array, got object"));
    CHECK_THROWS_WITH(parse_fisk_model(R"({"commands":[{"name":"a","tags":"x"}]})"),
                      Catch::Contains("a.tags: expected array of strings, got string"));
    CHECK_THROWS(parse_fisk_model(R"({"name":"x"} trailing)"));
}

TEST_CASE("a hostile, deeply nested tree is refused without exhausting the stack", "[fisk_model]") {
    std::string doc = R"({"name":"x","commands":[)";
    for (int i = 0; i < 100; ++i) doc += R"({"name":"c","commands":[)";
    for (int i = 0; i < 100; ++i) doc += "]}";
    doc += "]}";
    CHECK_THROWS_WITH(parse_fisk_model(doc), Catch::Contains("nested more than 64 levels"));
    std::string deep(100000, '[');
    CHECK_THROWS(parse_fisk_model(deep));
}
