// Hostile bodies: the size cap before any parse, deep nesting, huge strings, wrong types,
// invalid UTF-8 and identities that would shape a subject. Nothing crashes, everything is
// refused with a reason or accepted as Go would accept it.

#include <fiskai/a2a/codec.hpp>
#include <fiskai/a2a/validator.hpp>

#include "support.hpp"

#include <catch2/catch.hpp>

#include <chrono>

using namespace fiskai::a2a;
using a2a_test::body;

namespace {

// A valid tool reply of exactly `size` bytes (its output padded with 'x').
std::string reply_of_size(std::size_t size) {
    const std::string empty = body(protocols::tool_reply, R"(,"output":"")");
    std::string out = empty;
    out.insert(out.size() - 2, std::string(size - empty.size(), 'x'));
    return out;
}

}  // namespace

TEST_CASE("a2a.hostile: the size cap: 786432 bytes accepted, 786433 refused before any parse", "[a2a][hostile]") {
    CHECK(max_message_size == 786432);
    const auto at_cap = reply_of_size(786432);
    REQUIRE(at_cap.size() == 786432);
    CHECK(default_validator().check(at_cap));
    CHECK(decode(at_cap));

    const auto over = reply_of_size(786433);
    REQUIRE(over.size() == 786433);
    CHECK(default_validator().check(over).error().code == errc::too_large);
    CHECK(decode(over).error().code == errc::too_large);
    CHECK(default_validator().validate(over).error().message == "message exceeds 786432 bytes");

    // Garbage over the cap is "too large", not "invalid JSON": nothing was parsed.
    CHECK(default_validator().check(std::string(786433, '[')).error().code == errc::too_large);
    CHECK(default_validator().check(std::string(786432, '[')).error().code == errc::invalid_json);
}

TEST_CASE("a2a.hostile: deep nesting is refused without exhausting the stack", "[a2a][hostile]") {
    const std::string brackets(100000, '[');
    CHECK(default_validator().check(brackets).error().code == errc::invalid_json);
    CHECK(decode(brackets).error().code == errc::invalid_json);

    auto nested_input = [](std::size_t depth) {
        std::string input = std::string(depth, '[') + std::string(depth, ']');
        return body(protocols::tool_request, R"(,"name":"n","input":{"a":)" + input + "}");
    };
    // Go's decoder allows 10000 levels: the message, the input object and 9998 arrays.
    const auto deep_ok = nested_input(9998);
    const auto m = default_validator().check(deep_ok);
    REQUIRE(m);
    CHECK(encode(*m).value() == deep_ok);
    CHECK(default_validator().check(nested_input(9999)).error().code == errc::invalid_json);

    // Deep unknown properties are parsed (within the limit) and discarded.
    const auto deep_unknown =
        body(protocols::tool_request, R"(,"name":"n","junk":)" + std::string(9000, '[') + std::string(9000, ']'));
    const auto accepted = default_validator().check(deep_unknown);
    REQUIRE(accepted);
    CHECK(encode(*accepted).value().find("junk") == std::string::npos);
}

TEST_CASE("a2a.hostile: huge strings: carried when legitimate, refused quickly where a pattern applies",
          "[a2a][hostile]") {
    const std::string big(700000, 'a');
    CHECK(default_validator().check(body(protocols::tool_reply, R"(,"output":")" + big + "\"")));

    std::string text = body(protocols::discovery_request);
    text.replace(text.find(R"("name":"caller")"), 15, R"("name":")" + big + "\"");
    const auto start = std::chrono::steady_clock::now();
    const auto r = default_validator().check(text);
    const auto took = std::chrono::steady_clock::now() - start;
    REQUIRE_FALSE(r);
    CHECK(r.error().code == errc::schema_violation);
    CHECK(took < std::chrono::seconds(2));

    // An unknown protocol id of any length is echoed bounded.
    const auto long_protocol = default_validator().check(body(big));
    REQUIRE_FALSE(long_protocol);
    CHECK(long_protocol.error().code == errc::unknown_protocol);
    CHECK(long_protocol.error().message.size() < 200);
}

TEST_CASE("a2a.hostile: wrong types in every header field are refused", "[a2a][hostile]") {
    const std::vector<std::pair<std::string, std::string>> fields = {
        {"id", "1"},   {"request", "[]"}, {"conversation", "{}"},   {"parent", "true"},       {"sequence", "\"0\""},
        {"time", "0"}, {"sender", "[]"},  {"recipient", "\"svc\""}, {"must_understand", "1"},
    };
    for (const auto& [field, value] : fields) {
        CAPTURE(field, value);
        const auto text = body(protocols::discovery_request, ",\"" + field + "\":" + value);
        const auto r = default_validator().check(text);
        REQUIRE_FALSE(r);
        CHECK(r.error().code == errc::schema_violation);
        // And the schema-less decoder refuses them too (except where Go's decode would not).
        CHECK_FALSE(decode(text));
    }
}

TEST_CASE("a2a.hostile: bodies that are not objects, not JSON, or JSON with trailing garbage", "[a2a][hostile]") {
    for (const char* bad :
         {"", " ", "null", "1", "\"x\"", "[]", "true", "{", "}", "{}x", "{\"a\":1}{}", "\xEF\xBB\xBF{}",
          "{\"protocol\":\"io.choria.fisk-ai.v1.tool.reply\",}", "{'protocol':1}", "{\"a\":NaN}"}) {
        CAPTURE(bad);
        const auto r = default_validator().check(bad);
        REQUIRE_FALSE(r);
        CHECK((r.error().code == errc::invalid_json || r.error().code == errc::unknown_protocol));
        CHECK_FALSE(decode(bad));
    }
}

TEST_CASE("a2a.hostile: invalid UTF-8 is accepted where any string is, and becomes U+FFFD", "[a2a][hostile]") {
    const auto text = body(protocols::tool_reply, ",\"output\":\"\xC0\x80\xFF\xFE\xED\xA0\x80\"");
    const auto m = default_validator().check(text);
    REQUIRE(m);
    const auto& out = std::get<tool_reply>(*m).output;
    std::string seven;
    for (int i = 0; i < 7; ++i) seven += "\xEF\xBF\xBD";  // one U+FFFD per byte Go's DecodeRune refuses
    CHECK(out == seven);
    // In a name that must be a subject token it is refused.
    std::string bad_sender = body(protocols::discovery_request);
    bad_sender.replace(bad_sender.find("caller"), 6, "call\xFFr");
    CHECK(default_validator().check(bad_sender).error().code == errc::schema_violation);
    // In a key it is just an unknown property.
    CHECK(default_validator().check(body(protocols::tool_reply, ",\"\xFF\":1")));
}

TEST_CASE("a2a.hostile: identities that would shape a subject are refused", "[a2a][hostile]") {
    for (const char* name : {"a.b", "a b", "*", ">", "a.*", "a.>", "\\t", "a\\r\\nb", "a\\u0000b", "a\\n"}) {
        CAPTURE(name);
        std::string text = body(protocols::tool_request, R"(,"name":"n")");
        text.replace(text.find("caller"), 6, name);
        CHECK(default_validator().check(text).error().code == errc::schema_violation);
        CHECK_FALSE(is_valid_identity(name));
    }
}

TEST_CASE("a2a.hostile: many unknown keys are accepted and discarded", "[a2a][hostile]") {
    std::string payload;
    for (int i = 0; i < 20000; ++i) payload += ",\"k" + std::to_string(i) + "\":" + std::to_string(i);
    const auto m = default_validator().check(body(protocols::tool_reply, payload));
    REQUIRE(m);
    CHECK(*m == decode(body(protocols::tool_reply)).value());
}

TEST_CASE("a2a.hostile: numbers out of every range", "[a2a][hostile]") {
    // Raw input keeps them verbatim.
    const auto m = default_validator().check(body(
        protocols::tool_request, R"(,"name":"n","input":{"a":1e400,"b":-1e-400,"c":123456789012345678901234567890})"));
    REQUIRE(m);
    CHECK(std::get<tool_request>(*m).input->text() == R"({"a":1e400,"b":-1e-400,"c":123456789012345678901234567890})");
    // Typed integers do not.
    CHECK_FALSE(default_validator().check(body(protocols::tool_reply, R"(,"exec":{"exit_code":1e400})")));
    CHECK_FALSE(
        default_validator().check(body(protocols::tool_reply, R"(,"exec":{"exit_code":99999999999999999999})")));
}

TEST_CASE("a2a.hostile: an escaped NUL cannot shorten a string past the schema", "[a2a][hostile]") {
    // valijson reads strings up to the first NUL; the validator makes sure that never
    // lets "a\u0000b" pass as "a".
    std::string sender = body(protocols::discovery_request);
    sender.replace(sender.find("caller"), 6, R"(a\u0000b)");
    CHECK(default_validator().check(sender).error().code == errc::schema_violation);

    CHECK(
        default_validator().check(body(R"(io.choria.fisk-ai.v1.tool.request\u0000)", R"(,"name":"n")")).error().code ==
        errc::unknown_protocol);

    const auto block =
        default_validator().check(body(protocols::task_event, R"(,"block":{"type":"text\u0000","text":"t"})"));
    REQUIRE(block);
    CHECK(std::get<unknown_block>(std::get<task_event>(*block).block).type() == std::string("text\0", 5));

    const auto key = default_validator().check(body(protocols::tool_request, R"(,"name":"n","prompt\u0000":"x")"));
    CHECK(key);  // an unknown property, not the refused sibling `prompt`
    CHECK(default_validator().check(body(protocols::tool_reply, R"(,"output":"a\\u0000b \u0000")")));
}
