#include <fiskai/toolkit/outcome.hpp>

#include <boost/json/parse.hpp>

#include <catch2/catch.hpp>

using namespace fiskai::toolkit;

TEST_CASE("command result envelope omits zero exit code and false truncated", "[outcome]") {
    CHECK(to_json(command_result{"stream info -- ORDERS", 0, "ok\n", false}) ==
          R"({"command":"stream info -- ORDERS","output":"ok\n"})");
    CHECK(to_json(command_result{"stream info -- ORDERS", 3, "boom\n", false}) ==
          R"({"command":"stream info -- ORDERS","exit_code":3,"output":"boom\n"})");
    CHECK(to_json(command_result{"x", -1, "", true}) ==
          R"({"command":"x","exit_code":-1,"output":"","truncated":true})");
}

TEST_CASE("outcome renders each kind", "[outcome]") {
    auto cmd = outcome::from_command({"a", 2, "o", false});
    CHECK_FALSE(cmd.is_error());
    CHECK(cmd.render() == R"({"command":"a","exit_code":2,"output":"o"})");
    auto js = outcome::from_json(boost::json::parse(R"({"hits":[1,2]})"));
    CHECK(js.type() == outcome::kind::json);
    CHECK(js.render() == R"({"hits":[1,2]})");
    auto err = outcome::failure("nope");
    CHECK(err.is_error());
    CHECK(err.render() == "nope");
    CHECK(err.command() == nullptr);
}

TEST_CASE("a JSON outcome writes floats as Go does, not as Boost.JSON", "[outcome]") {
    CHECK(outcome::from_json(boost::json::parse(R"({"p":1.5,"big":1e21,"small":1e-7,"<":2.0})")).render() ==
          R"({"p":1.5,"big":1e+21,"small":1e-7,"\u003c":2})");
}
