// The schemas: each names its own required fields and refuses its siblings' payload fields
// by name; unknown properties are accepted and discarded; the identity pattern and the
// request id's character set and length are enforced; an unknown protocol is refused.

#include <fiskai/a2a/codec.hpp>
#include <fiskai/a2a/validator.hpp>

#include "support.hpp"

#include <boost/json.hpp>
#include <catch2/catch.hpp>

#include <map>

using namespace fiskai::a2a;
using a2a_test::body;

namespace {

struct shape {
    std::string_view protocol;
    std::vector<std::string> own;  // payload fields
    std::vector<std::string> required;
    std::string minimal;  // the required payload, as ",k:v" members
};

const std::vector<shape>& shapes() {
    static const std::vector<shape> all = {
        {protocols::discovery_request, {}, {}, ""},
        {protocols::discovery_reply,
         {"name", "version", "description", "protocols", "tools"},
         {"name", "version"},
         R"(,"name":"svc","version":"v1")"},
        {protocols::tool_request, {"name", "input"}, {"name"}, R"(,"name":"ping")"},
        {protocols::tool_reply, {"is_error", "output", "exec"}, {}, ""},
        {protocols::task_request,
         {"prompt", "context", "tool_hints", "budget", "stream"},
         {"prompt"},
         R"(,"prompt":"p")"},
        {protocols::task_event, {"block"}, {"block"}, R"(,"block":{"type":"text","text":"t"})"},
        {protocols::task_result, {"stop_reason", "text", "usage"}, {"stop_reason"}, R"(,"stop_reason":"end_turn")"},
        {protocols::task_error, {"stop_reason", "error", "code"}, {"error"}, R"(,"error":"e")"},
        {protocols::task_cancel, {"reason"}, {}, ""},
        {protocols::task_ack, {"accepted", "reason"}, {"accepted"}, R"(,"accepted":true)"},
        {protocols::task_question,
         {"question_id", "kind", "question", "options", "default", "call_id", "tool", "command", "tag", "window"},
         {"question_id", "kind", "question", "window"},
         R"(,"question_id":"q1","kind":"input","question":"Name?","window":"2m0s")"},
        {protocols::task_answer,
         {"question_id", "confirmed", "selected", "value", "decision", "declined", "reason"},
         {"question_id"},
         R"(,"question_id":"q1","confirmed":true)"},
        {protocols::task_keepalive, {"question_id"}, {}, ""},
    };
    return all;
}

// A value each payload field would accept in its own message.
const std::map<std::string, std::string>& sample_values() {
    static const std::map<std::string, std::string> values = {
        {"name", R"("x")"},
        {"version", R"("v")"},
        {"description", R"("d")"},
        {"protocols", "[]"},
        {"tools", "[]"},
        {"input", "{}"},
        {"is_error", "true"},
        {"output", R"("o")"},
        {"exec", "{}"},
        {"prompt", R"("p")"},
        {"context", R"("c")"},
        {"tool_hints", "[]"},
        {"budget", "{}"},
        {"stream", "true"},
        {"block", R"({"type":"text","text":"t"})"},
        {"stop_reason", R"("end_turn")"},
        {"text", R"("t")"},
        {"usage", "{}"},
        {"error", R"("e")"},
        {"code", R"("c")"},
        {"reason", R"("r")"},
        {"accepted", "true"},
        {"question_id", R"("q1")"},
        {"kind", R"("input")"},
        {"question", R"("q")"},
        {"options", R"(["a"])"},
        {"default", R"("d")"},
        {"call_id", R"("c1")"},
        {"tool", R"("t")"},
        {"command", R"("c")"},
        {"tag", R"("ai:confirm")"},
        {"window", R"("1m0s")"},
        {"confirmed", "true"},
        {"selected", "0"},
        {"value", R"("v")"},
        {"decision", R"("once")"},
        {"declined", "true"},
    };
    return values;
}

result<message> check(std::string_view text) { return default_validator().check(text); }

std::string error_of(std::string_view text) {
    const auto r = check(text);
    if (r) return "accepted";
    return r.error().message;
}

}  // namespace

TEST_CASE("a2a.schema: each message's minimal form validates and carries only its own protocol", "[a2a][schema]") {
    for (const auto& s : shapes()) {
        CAPTURE(s.protocol);
        const auto text = body(s.protocol, s.minimal);
        const auto m = default_validator().check(text, s.protocol);
        REQUIRE(m);
        CHECK(protocol_of(*m) == s.protocol);
    }
}

TEST_CASE("a2a.schema: each schema refuses its siblings' payload fields by name", "[a2a][schema]") {
    std::size_t refused = 0;
    for (const auto& s : shapes()) {
        for (const auto& [field, value] : sample_values()) {
            if (std::find(s.own.begin(), s.own.end(), field) != s.own.end()) continue;
            CAPTURE(s.protocol, field);
            const auto r = check(body(s.protocol, s.minimal + ",\"" + field + "\":" + value));
            REQUIRE_FALSE(r);
            CHECK(r.error().code == errc::schema_violation);
            CHECK_THAT(r.error().message, Catch::Contains("/" + field + ": property not allowed here"));
            ++refused;
        }
    }
    // Every field of every other message: 13 messages x 37 sample fields, less the 43 each
    // message owns (reason is shared by cancel, ack and answer; question_id by the new three).
    CHECK(refused == 13 * 37 - 43);
}

TEST_CASE("a2a.schema: each schema requires its own fields", "[a2a][schema]") {
    for (const auto& s : shapes()) {
        for (const auto& field : s.required) {
            CAPTURE(s.protocol, field);
            // Every required member but this one.
            std::string payload;
            for (const auto& other : s.required) {
                if (other != field) payload += ",\"" + other + "\":" + sample_values().at(other);
            }
            if (s.protocol == protocols::discovery_reply)
                payload = field == "name" ? R"(,"version":"v")" : R"(,"name":"n")";
            const auto r = check(body(s.protocol, payload));
            REQUIRE_FALSE(r);
            CHECK(r.error().code == errc::schema_violation);
        }
    }
    // The header's seven required fields, on every message.
    const auto text = body(protocols::tool_reply);
    for (const char* field : {"protocol", "id", "request", "conversation", "sequence", "time", "sender"}) {
        CAPTURE(field);
        auto doc = boost::json::parse(text).as_object();
        doc.erase(field);
        const auto r = check(boost::json::serialize(doc));
        REQUIRE_FALSE(r);
        CHECK(r.error().code ==
              (std::string_view(field) == "protocol" ? errc::unknown_protocol : errc::schema_violation));
    }
}

TEST_CASE("a2a.schema: unknown properties are accepted and discarded", "[a2a][schema]") {
    const auto text = body(protocols::tool_request, R"(,"name":"ping","x_future":{"deep":[1,2,3]},"Name":"other")");
    const auto m = check(text);
    REQUIRE(m);
    const auto again = encode(*m).value();
    CHECK(again.find("x_future") == std::string::npos);
    CHECK(again.find("other") == std::string::npos);
    CHECK(std::get<tool_request>(*m).name == "ping");

    // In nested records too.
    CHECK(check(body(protocols::tool_reply, R"(,"exec":{"command":"c","pid":7})")));
    CHECK(check(
        a2a_test::body(protocols::tool_request, R"(,"name":"n")").replace(0, 1, R"({"sender2":{"name":"x.y"},)")));
}

TEST_CASE("a2a.schema: an unknown protocol id is refused outright, not as a schema failure", "[a2a][schema]") {
    CHECK(error_of(body("nope")) == R"(unknown protocol: "nope")");
    CHECK(error_of(body("io.choria.fisk-ai.v2.tool.request")) ==
          R"(unknown protocol: "io.choria.fisk-ai.v2.tool.request")");
    CHECK(error_of(R"({"id":"x"})") == R"(unknown protocol: "")");
}

TEST_CASE("a2a.schema: protocol is a constant per schema, and the path check refuses another type", "[a2a][schema]") {
    const auto discovery = body(protocols::discovery_request);
    const auto r = default_validator().check(discovery, protocols::tool_request);
    REQUIRE_FALSE(r);
    CHECK(r.error().code == errc::protocol_mismatch);
    CHECK(
        r.error().message ==
        R"(unexpected message protocol: got "io.choria.fisk-ai.v1.discovery.request", want "io.choria.fisk-ai.v1.tool.request")");
    CHECK(default_validator().check_as<discovery_request>(discovery));
    CHECK_FALSE(default_validator().check_as<tool_request>(discovery));
}

TEST_CASE("a2a.schema: stop reasons: the known ones, and an unknown one carried", "[a2a][schema]") {
    for (const char* reason : {"end_turn", "max_tokens", "refusal", "canceled", "error", "budget_exhausted",
                               "suspended", "max_iterations", "tea_break"}) {
        CAPTURE(reason);
        const auto m = check(body(protocols::task_result, std::string(R"(,"stop_reason":")") + reason + "\""));
        REQUIRE(m);
        CHECK(std::get<task_result>(*m).stop_reason == reason);
        CHECK(is_known_stop_reason(reason) == (std::string_view(reason) != "tea_break"));
    }
    CHECK_FALSE(check(body(protocols::task_result, R"(,"stop_reason":"")")));
    CHECK_FALSE(check(body(protocols::task_result, R"(,"stop_reason":7)")));
    CHECK(check(body(protocols::task_error, R"(,"error":"e","stop_reason":"tea_break")")));
}

TEST_CASE("a2a.schema: identities are single subject tokens", "[a2a][schema]") {
    auto with_sender = [](std::string_view sender) {
        std::string text = body(protocols::discovery_request);
        const auto at = text.find(R"("sender":{"name":"caller"})");
        return text.replace(at, 26, std::string(R"("sender":)") + std::string(sender));
    };
    CHECK(check(with_sender(R"({"name":"caller"})")));
    CHECK(check(with_sender(R"({"name":"a_b-C9","instance":"i-1"})")));
    CHECK(check(with_sender("{\"name\":\"" + std::string(128, 'a') + "\"}")));
    for (std::string bad : std::vector<std::string>{
             R"({"name":""})", R"({"name":"a.b"})", R"({"name":"a b"})", R"({"name":"a*"})", R"({"name":">"})",
             R"({"name":"agent\n"})", R"({"name":"caf\u00e9"})", R"({})", R"({"name":"ok","instance":"x.y"})",
             R"({"name":"ok","instance":""})", R"("caller")", "{\"name\":\"" + std::string(129, 'a') + "\"}"}) {
        CAPTURE(bad);
        const auto r = check(with_sender(bad));
        REQUIRE_FALSE(r);
        CHECK(r.error().code == errc::schema_violation);
    }
    // The recipient too.
    CHECK_FALSE(check(body(protocols::discovery_request, R"(,"recipient":{"name":"a.>"})")));
    CHECK(is_valid_identity("svc"));
    CHECK_FALSE(is_valid_identity("svc\n"));
    CHECK_FALSE(is_valid_identity(std::string(129, 'x')));
}

TEST_CASE("a2a.schema: the request id's character set and length are constrained", "[a2a][schema]") {
    auto with_request = [](std::string_view id) {
        std::string text = body(protocols::discovery_request);
        const auto at = text.find(R"("request":")") + 11;
        return text.replace(at, 27, std::string(id));
    };
    CHECK(check(with_request("x")));
    CHECK(check(with_request(std::string(64, 'k'))));
    for (std::string bad :
         std::vector<std::string>{std::string(), std::string(65, 'k'), std::string("a.b"), std::string("a*"),
                                  std::string("a>"), std::string("a b"), std::string("a/b")}) {
        CAPTURE(bad);
        CHECK_FALSE(check(with_request(bad)));
    }
    CHECK(check(body(protocols::discovery_request, R"(,"parent":"p-1")")));
    CHECK_FALSE(check(body(protocols::discovery_request, R"(,"parent":"p.1")")));
    // id and conversation are opaque.
    CHECK(check(body(protocols::discovery_request)
                    .replace(body(protocols::discovery_request).find(R"("id":")") + 6, 27, "any thing.*>")));
    CHECK(is_valid_request_id(std::string(64, 'a')));
    CHECK_FALSE(is_valid_request_id(std::string(65, 'a')));
}

TEST_CASE("a2a.schema: field types: wrong types, null input, non-object schemas", "[a2a][schema]") {
    CHECK_FALSE(check(body(protocols::tool_request, R"(,"name":"n","input":null)")));
    CHECK_FALSE(check(body(protocols::tool_request, R"(,"name":"n","input":[1])")));
    CHECK_FALSE(check(body(protocols::tool_request, R"(,"name":"n","input":"{}")")));
    CHECK_FALSE(check(body(protocols::tool_request, R"(,"name":7)")));
    CHECK_FALSE(check(
        body(protocols::discovery_reply, R"(,"name":"n","version":"v","tools":[{"name":"t","input_schema":null}])")));
    CHECK_FALSE(
        check(body(protocols::discovery_reply, R"(,"name":"n","version":"v","tools":[{"description":"no name"}])")));
    CHECK_FALSE(check(body(protocols::discovery_reply, R"(,"name":"n","version":"v","protocols":[1])")));
    CHECK_FALSE(check(body(protocols::tool_reply, R"(,"exec":{"exit_code":"3"})")));
    CHECK_FALSE(check(body(protocols::tool_reply, R"(,"is_error":"true")")));
    CHECK_FALSE(check(body(protocols::task_request, R"(,"prompt":"p","budget":{"max_tokens":-1})")));
    CHECK_FALSE(check(body(protocols::task_request, R"(,"prompt":"p","tool_hints":"x")")));
    CHECK_FALSE(check(body(protocols::task_result, R"(,"stop_reason":"end_turn","usage":{"input_tokens":-1})")));
    CHECK_FALSE(check(body(protocols::discovery_request, R"(,"must_understand":"yes")")));
    CHECK_FALSE(
        check(body(protocols::discovery_request)
                  .replace(body(protocols::discovery_request).find(R"("sequence":0)"), 12, R"("sequence":-1)")));
    CHECK_FALSE(
        check(body(protocols::discovery_request)
                  .replace(body(protocols::discovery_request).find(R"("sequence":0)"), 12, R"("sequence":1.0)")));
    // A time the schema passes (a string) but the strict decode refuses.
    const auto bad_time = check(body(protocols::discovery_request)
                                    .replace(body(protocols::discovery_request).find("2026-05-04T"), 10, "2026/05/04"));
    REQUIRE_FALSE(bad_time);
    CHECK(bad_time.error().code == errc::invalid_field);
}

TEST_CASE("a2a.schema: event blocks: six kinds, a fallback for unknown kinds, siblings refused", "[a2a][schema]") {
    auto event = [](std::string_view block_json) {
        return body(protocols::task_event, std::string(R"(,"block":)") + std::string(block_json));
    };
    CHECK(check(event(R"({"type":"thinking","text":"t","signature":"s","provider":"p"})")));
    CHECK(check(event(R"({"type":"tool_call","id":"1","name":"n","input":{"a":1}})")));
    CHECK(check(event(R"({"type":"tool_result","call_id":"1","exec":{"command":"c"}})")));
    CHECK(check(event(R"({"type":"agent_call","id":"1","name":"n","task":"t"})")));
    CHECK(check(event(R"({"type":"status","iteration":2,"phase":"calling-llm","usage":{"input_tokens":1}})")));
    CHECK(check(event(R"({"type":"status","future_field":1})")));

    const auto unknown = check(event(R"({"type":"bogus","anything":[1,{"x":null}]})"));
    REQUIRE(unknown);
    CHECK(std::get<unknown_block>(std::get<task_event>(*unknown).block).raw().text() ==
          R"({"type":"bogus","anything":[1,{"x":null}]})");

    for (const char* bad :
         {R"({})", R"({"type":7})", R"({"type":"text"})", R"({"type":"text","text":"t","call_id":"1"})",
          R"({"type":"tool_call","id":"1"})", R"({"type":"tool_call","id":"1","name":"n","input":[]})",
          R"({"type":"agent_call","id":"1","name":"n"})", R"({"type":"status","iteration":-1})",
          R"({"type":"thinking","text":"t","task":"x"})", R"("text")", R"(null)"}) {
        CAPTURE(bad);
        const auto r = check(event(bad));
        REQUIRE_FALSE(r);
        CHECK(r.error().code == errc::schema_violation);
    }
}

TEST_CASE("a2a.schema: the schema files carry the note's $ids and compile as draft 7", "[a2a][schema]") {
    const auto files = schema_files();
    REQUIRE(files.size() == 14);
    CHECK(files[0].name == "common.json");
    for (const auto& f : files) {
        CAPTURE(f.name);
        const auto doc = boost::json::parse(f.text).as_object();
        CHECK(doc.at("$id").as_string() == std::string(schema_base_url) + "/" + std::string(f.name));
        CHECK(doc.at("$schema").as_string() == "http://json-schema.org/draft-07/schema#");
        // The embedded bytes are the source tree's file.
        CHECK(a2a_test::read_file(std::filesystem::path(FISKAI_SOURCE_DIR) / "schemas" / std::string(f.name)) ==
              f.text);
    }
    for (auto id : protocols::all) CHECK_FALSE(schema_file_name(id).empty());
    CHECK(schema_file_name(protocols::tool_request) == "tool.request.json");
    CHECK(schema_file_name(protocols::task_request) == "request.json");
    CHECK(schema_file_name("nope").empty());
}

TEST_CASE("a2a.schema: questions, answers and keepalives: kinds, options, one answer", "[a2a][schema]") {
    const auto q = [](std::string_view payload) {
        return check(
            body(protocols::task_question,
                 std::string(R"(,"question_id":"q1","question":"Q?","window":"1m0s")") + std::string(payload)));
    };
    CHECK(q(R"(,"kind":"confirm")"));
    CHECK(q(R"(,"kind":"input","default":"x")"));
    CHECK(q(R"(,"kind":"select","options":["a","b"])"));
    CHECK(q(R"(,"kind":"approval","tool":"t","command":"c","call_id":"k","tag":"ai:confirm")"));
    for (const char* bad : {R"(,"kind":"select")", R"(,"kind":"select","options":[])",
                            R"(,"kind":"approval","tool":"t")", R"(,"kind":"guess")"}) {
        CAPTURE(bad);
        const auto r = q(bad);
        REQUIRE_FALSE(r);
        CHECK(r.error().code == errc::schema_violation);
    }
    std::string many = R"(,"kind":"select","options":[)";
    for (int i = 0; i < 26; ++i) many += (i ? ",\"o\"" : "\"o\"");
    CHECK_FALSE(q(many + "]"));

    const auto a = [](std::string_view payload) {
        return check(body(protocols::task_answer, R"(,"question_id":"q1")" + std::string(payload)));
    };
    for (const char* one : {R"(,"confirmed":false)", R"(,"selected":0)", R"(,"value":"")", R"(,"decision":"deny")",
                            R"(,"declined":true,"reason":"no")"}) {
        CAPTURE(one);
        CHECK(a(one));
    }
    for (const char* bad : {"", R"(,"confirmed":true,"value":"x")", R"(,"selected":-1)", R"(,"decision":"maybe")",
                            R"(,"declined":false)", R"(,"selected":1.5)"}) {
        CAPTURE(bad);
        const auto r = a(bad);
        REQUIRE_FALSE(r);
        CHECK(r.error().code == errc::schema_violation);
    }
    CHECK(check(body(protocols::task_keepalive)));
    CHECK_FALSE(check(body(protocols::task_keepalive, R"(,"question_id":"a>b")")));
}

TEST_CASE("a2a.schema: an answer's zero values survive a round trip", "[a2a][schema]") {
    for (const char* payload : {R"(,"question_id":"q1","confirmed":false)", R"(,"question_id":"q1","selected":0)",
                                R"(,"question_id":"q1","value":"")"}) {
        CAPTURE(payload);
        const auto text = body(protocols::task_answer, payload);
        const auto m = check(text);
        REQUIRE(m);
        const auto again = encode(*m);
        REQUIRE(again);
        CHECK(*again == text);
    }
}

// The quick pass builds no error paths (the vendored valijson builds them only when errors
// are collected); the pass that describes a failure still names the whole path.
TEST_CASE("a2a.schema: a violation inside an array item names its whole path", "[a2a][schema]") {
    const auto tools = [](std::string_view second) {
        return body(protocols::discovery_reply,
                    R"(,"name":"svc","version":"v1","tools":[{"name":"ping","input_schema":{"type":"object"}},)" +
                        std::string(second) + "]");
    };
    CHECK(check(tools(R"({"name":"pong"})")));
    const auto r = check(tools(R"({"name":5})"));
    REQUIRE_FALSE(r);
    CHECK(r.error().code == errc::schema_violation);
    CHECK(
        r.error().message ==
        R"(schema validation failed: discovery.reply.json: /"tools"/1/"name": Value type not permitted by 'type' constraint)");
}
