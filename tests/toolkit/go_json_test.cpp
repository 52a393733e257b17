#include <fiskai/toolkit/go_json.hpp>
#include <fiskai/toolkit/outcome.hpp>

#include <boost/json/parse.hpp>

#include <catch2/catch.hpp>

using namespace fiskai::toolkit;

TEST_CASE("Go string escaping matches encoding/json", "[go_json]") {
    CHECK(go_quote("plain") == "\"plain\"");
    CHECK(go_quote("<a>&b") == "\"\\u003ca\\u003e\\u0026b\"");
    CHECK(go_quote("q\"\\") == "\"q\\\"\\\\\"");
    CHECK(go_quote("\n\r\t") == "\"\\n\\r\\t\"");
    CHECK(go_quote("\b\f") == "\"\\b\\f\"");
    CHECK(go_quote(std::string("\x01\x1f", 2)) == "\"\\u0001\\u001f\"");
    CHECK(go_quote("\u2028\u2029") == "\"\\u2028\\u2029\"");
    CHECK(go_quote("caf\u00e9 \U0001F600") == "\"caf\u00e9 \U0001F600\"");
}

TEST_CASE("invalid UTF-8 becomes U+FFFD, one per bad byte", "[go_json]") {
    CHECK(go_quote("a\xff" "b") == "\"a\\ufffdb\"");
    CHECK(go_quote("\xc3") == "\"\\ufffd\"");                 // truncated sequence
    CHECK(go_quote("\xc0\xaf") == "\"\\ufffd\\ufffd\"");      // overlong
    CHECK(go_quote("\xed\xa0\x80") == "\"\\ufffd\\ufffd\\ufffd\"");  // surrogate
}

TEST_CASE("go_json keeps object order and integers exactly", "[go_json]") {
    auto v = boost::json::parse(R"({"z":1,"a":[true,null,"<"],"n":9007199254740993})");
    CHECK(go_json(v) == R"({"z":1,"a":[true,null,"\u003c"],"n":9007199254740993})");
}

TEST_CASE("command result envelope omits zero exit code and false truncated", "[outcome]") {
    CHECK(to_json(command_result{"stream info -- ORDERS", 0, "ok\n", false}) ==
          R"({"command":"stream info -- ORDERS","output":"ok\n"})");
    CHECK(to_json(command_result{"stream info -- ORDERS", 3, "boom\n", false}) ==
          R"({"command":"stream info -- ORDERS","exit_code":3,"output":"boom\n"})");
    CHECK(to_json(command_result{"x", -1, "", true}) == R"({"command":"x","exit_code":-1,"output":"","truncated":true})");
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
