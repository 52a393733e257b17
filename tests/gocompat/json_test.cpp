#include <fiskai/gocompat/json.hpp>

#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>

#include <catch2/catch.hpp>

#include <limits>
#include <string>

using namespace fiskai::gocompat;

namespace {
std::string float_text(double d) {
    std::string out;
    append_json_float(out, d);
    return out;
}
}  // namespace

// Expected bytes: what json.Marshal writes for the same Go string.
TEST_CASE("gocompat: json_string escapes as encoding/json with escapeHTML", "[gocompat][json]") {
    CHECK(json_string("plain") == R"("plain")");
    CHECK(json_string("") == R"("")");
    CHECK(json_string("<a>&b") == R"("\u003ca\u003e\u0026b")");
    CHECK(json_string("q\"\\/") == R"("q\"\\/")");
    CHECK(json_string("\n\r\t") == R"("\n\r\t")");
    CHECK(json_string("\b\f") == R"("\b\f")");  // Go 1.22 and later
    CHECK(json_string(std::string("\x00\x01\x1f", 3)) == R"("\u0000\u0001\u001f")");
    CHECK(json_string("\x7f") == "\"\x7f\"");  // DEL is in Go's htmlSafeSet
    CHECK(json_string("\u2028\u2029") == R"("\u2028\u2029")");
    CHECK(json_string("caf\u00e9 \U0001F600 \u00a0") == "\"caf\u00e9 \U0001F600 \u00a0\"");
}

TEST_CASE("gocompat: json_string writes one U+FFFD escape per invalid byte", "[gocompat][json]") {
    CHECK(json_string("a\xff"
                      "b") == R"("a\ufffdb")");
    CHECK(json_string("\xc3") == R"("\ufffd")");                                // truncated
    CHECK(json_string("\xc0\xaf") == R"("\ufffd\ufffd")");                      // overlong
    CHECK(json_string("\xed\xa0\x80") == R"("\ufffd\ufffd\ufffd")");            // surrogate
    CHECK(json_string("\xf4\x90\x80\x80") == R"("\ufffd\ufffd\ufffd\ufffd")");  // past U+10FFFF
    CHECK(json_string("\xef\xbf\xbd") == "\"\xef\xbf\xbd\"");                   // a real U+FFFD stays raw
}

TEST_CASE("gocompat: floats in encoding/json's format", "[gocompat][json]") {
    CHECK(float_text(1.5) == "1.5");
    CHECK(float_text(1.0) == "1");
    CHECK(float_text(0.0) == "0");
    CHECK(float_text(-0.0) == "-0");
    CHECK(float_text(0.1) == "0.1");
    CHECK(float_text(-2.75) == "-2.75");
    CHECK(float_text(123456789.0) == "123456789");
    CHECK(float_text(1e20) == "100000000000000000000");
    CHECK(float_text(1e21) == "1e+21");
    CHECK(float_text(1.5e300) == "1.5e+300");
    CHECK(float_text(0.000001) == "0.000001");
    CHECK(float_text(1e-7) == "1e-7");
    CHECK(float_text(2.5e-7) == "2.5e-7");
    CHECK(float_text(-1e-7) == "-1e-7");
    CHECK(float_text(1e-10) == "1e-10");
    CHECK(float_text(5e-324) == "5e-324");
    CHECK(float_text(std::numeric_limits<double>::max()) == "1.7976931348623157e+308");
    CHECK(float_text(std::numeric_limits<double>::quiet_NaN()) == "null");
    CHECK(float_text(std::numeric_limits<double>::infinity()) == "null");
}

TEST_CASE("gocompat: to_json keeps stored order or sorts like a Go map", "[gocompat][json]") {
    const auto v = boost::json::parse(R"({"z":1,"a":[true,null,"<",1.5,2.0,1e21],"n":9007199254740993,"m":-3,"e":{}})");
    CHECK(to_json(v) == R"({"z":1,"a":[true,null,"\u003c",1.5,2,1e+21],"n":9007199254740993,"m":-3,"e":{}})");
    CHECK(to_json(v, key_order::sorted) ==
          R"({"a":[true,null,"\u003c",1.5,2,1e+21],"e":{},"m":-3,"n":9007199254740993,"z":1})");
    const auto nested = boost::json::parse(R"({"b":{"y":1,"x":[{"d":0,"c":0}]},"a":"\u2028"})");
    CHECK(to_json(nested, key_order::sorted) == R"({"a":"\u2028","b":{"x":[{"c":0,"d":0}],"y":1}})");
    CHECK(to_json(boost::json::parse("18446744073709551615")) == "18446744073709551615");
    CHECK(to_json(boost::json::value(0.5)) == "0.5");
}

TEST_CASE("gocompat: json_kind_name names every kind", "[gocompat][json]") {
    CHECK(std::string(json_kind_name(boost::json::parse("null"))) == "null");
    CHECK(std::string(json_kind_name(boost::json::parse("true"))) == "boolean");
    CHECK(std::string(json_kind_name(boost::json::parse("-1"))) == "number");
    CHECK(std::string(json_kind_name(boost::json::parse("1.5"))) == "number");
    CHECK(std::string(json_kind_name(boost::json::parse("\"s\""))) == "string");
    CHECK(std::string(json_kind_name(boost::json::parse("[]"))) == "array");
    CHECK(std::string(json_kind_name(boost::json::parse("{}"))) == "object");
}
