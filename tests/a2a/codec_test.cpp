// The codec: Go's bytes on encode, any valid JSON on decode, every message and block
// surviving a round trip as its own type.

#include <fiskai/a2a/codec.hpp>
#include <fiskai/a2a/ids.hpp>
#include <fiskai/a2a/stamp.hpp>
#include <fiskai/a2a/validator.hpp>

#include "support.hpp"

#include <boost/json.hpp>
#include <catch2/catch.hpp>

using namespace fiskai::a2a;
using namespace std::chrono_literals;

namespace {

header sample_header(std::string id = "2wJ4H0sTQqS7xYvEo1Rm9LkPbZd") {
    header h;
    h.id = id;
    h.request = id;
    h.conversation = id;
    h.time = *timestamp::parse("2026-05-04T09:15:27.482913304Z");
    h.sender = {"caller", ""};
    h.recipient = identity{"svc", ""};
    return h;
}

raw_json raw(std::string_view text) { return raw_json::parse(text).value(); }

template <class M>
M with_header(M m, header h = sample_header()) {
    static_cast<header&>(m) = std::move(h);
    return m;
}

std::string encoded(const message& m) { return encode(m).value(); }

// Every message type, fully populated.
std::vector<message> every_message() {
    std::vector<message> out;
    out.emplace_back(with_header(discovery_request{}));

    discovery_reply card = with_header(discovery_reply{});
    card.name = "svc";
    card.version = "v1";
    card.description = "serves <tools> & more";
    card.protocols = {std::string(protocols::v1)};
    card.tools = {{"ping", "a command", raw(R"({"type":"object"})")}, {"pong", "", std::nullopt}};
    out.emplace_back(card);

    tool_request call = with_header(tool_request{});
    call.name = "stream_info";
    call.input = raw(R"({"stream":"ORDERS","n":1.50})");
    out.emplace_back(call);

    tool_reply reply = with_header(tool_reply{});
    reply.output = "boom\n";
    reply.exec = exec_result{"stream info -- ORDERS", 3, true};
    out.emplace_back(reply);

    task_request task = with_header(task_request{});
    task.prompt = "list streams";
    task.context = "east";
    task.tool_hints = {"stream_ls"};
    task.budget = budget{1000, 5, "60s"};
    task.stream = false;
    out.emplace_back(task);

    task_event ev = with_header(task_event{});
    ev.sequence = 1;
    ev.block = text_block{"hi"};
    out.emplace_back(ev);

    task_result res = with_header(task_result{});
    res.stop_reason = std::string(stop_reasons::suspended);
    res.text = "done";
    res.usage = usage{10, 20};
    out.emplace_back(res);

    task_error err = with_header(task_error{});
    err.stop_reason = std::string(stop_reasons::error);
    err.error = "it broke";
    err.code = "E42";
    out.emplace_back(err);

    task_cancel cancel = with_header(task_cancel{});
    cancel.reason = "enough";
    out.emplace_back(cancel);

    task_ack ack = with_header(task_ack{});
    ack.accepted = true;
    out.emplace_back(ack);
    return out;
}

std::vector<block> every_block() {
    return {
        thinking_block{"hmm", "sig", "anthropic"},
        text_block{"hi"},
        tool_call_block{"call-1", "stream_ls", raw(R"({"a":1})")},
        tool_result_block{"call-1", true, "boom", exec_result{"stream ls", 2, false}},
        agent_call_block{"call-2", "orders", "2wJ4Jsub"},
        status_block{2, "calling-llm", usage{10, 20}},
        unknown_block::from_raw(raw(R"({"type":"image","url":"x","size":1.0E3})")).value(),
    };
}

}  // namespace

TEST_CASE("a2a.codec: every message type survives encode and decode as its own type", "[a2a][codec]") {
    for (const auto& m : every_message()) {
        CAPTURE(protocol_of(m));
        const auto text = encoded(m);
        const auto back = decode(text);
        REQUIRE(back);
        CHECK(back->index() == m.index());
        CHECK(*back == m);
        CHECK(encoded(*back) == text);
        // Fully populated, every type validates against its schema.
        const auto checked = default_validator().check(text, protocol_of(m));
        REQUIRE(checked);
        CHECK(*checked == m);
    }
}

TEST_CASE("a2a.codec: every block kind survives a round trip inside an event", "[a2a][codec]") {
    for (const auto& b : every_block()) {
        CAPTURE(block_type(b));
        task_event ev = with_header(task_event{});
        ev.block = b;
        const auto back = decode(encoded(ev));
        REQUIRE(back);
        CHECK(std::get<task_event>(*back).block == b);
        // And on its own.
        const auto alone = decode_block(encode(b).value());
        REQUIRE(alone);
        CHECK(*alone == b);
    }
}

TEST_CASE("a2a.codec: the header sits flat at the top level, in Go's order", "[a2a][codec]") {
    task_request m = with_header(task_request{});
    m.prompt = "p";
    CHECK(encoded(m) == R"({"protocol":"io.choria.fisk-ai.v1.request","id":"2wJ4H0sTQqS7xYvEo1Rm9LkPbZd",)"
                        R"("request":"2wJ4H0sTQqS7xYvEo1Rm9LkPbZd","conversation":"2wJ4H0sTQqS7xYvEo1Rm9LkPbZd",)"
                        R"("sequence":0,"time":"2026-05-04T09:15:27.482913304Z","sender":{"name":"caller"},)"
                        R"("recipient":{"name":"svc"},"prompt":"p"})");

    m.parent = "p1";
    m.must_understand = true;
    m.recipient.reset();
    m.sender.instance = "i1";
    CHECK(encoded(m) == R"({"protocol":"io.choria.fisk-ai.v1.request","id":"2wJ4H0sTQqS7xYvEo1Rm9LkPbZd",)"
                        R"("request":"2wJ4H0sTQqS7xYvEo1Rm9LkPbZd","conversation":"2wJ4H0sTQqS7xYvEo1Rm9LkPbZd",)"
                        R"("parent":"p1","sequence":0,"time":"2026-05-04T09:15:27.482913304Z",)"
                        R"("sender":{"name":"caller","instance":"i1"},"must_understand":true,"prompt":"p"})");
}

TEST_CASE("a2a.codec: zero values are omitted exactly where Go omits them", "[a2a][codec]") {
    const std::string head =
        R"("id":"x","request":"x","conversation":"x","sequence":0,"time":"0001-01-01T00:00:00Z","sender":{"name":""})";
    auto bare = [&](auto m) {
        m.id = m.request = m.conversation = "x";
        return encoded(m);
    };
    CHECK(bare(tool_reply{}) == R"({"protocol":"io.choria.fisk-ai.v1.tool.reply",)" + head + "}");
    CHECK(bare(discovery_reply{}) ==
          R"({"protocol":"io.choria.fisk-ai.v1.discovery.reply",)" + head + R"(,"name":"","version":""})");
    CHECK(bare(tool_request{}) == R"({"protocol":"io.choria.fisk-ai.v1.tool.request",)" + head + R"(,"name":""})");
    CHECK(bare(task_request{}) == R"({"protocol":"io.choria.fisk-ai.v1.request",)" + head + R"(,"prompt":""})");
    CHECK(bare(task_result{}) == R"({"protocol":"io.choria.fisk-ai.v1.result",)" + head + R"(,"stop_reason":""})");
    CHECK(bare(task_error{}) == R"({"protocol":"io.choria.fisk-ai.v1.error",)" + head + R"(,"error":""})");
    CHECK(bare(task_cancel{}) == R"({"protocol":"io.choria.fisk-ai.v1.cancel",)" + head + "}");
    CHECK(bare(task_ack{}) == R"({"protocol":"io.choria.fisk-ai.v1.ack",)" + head + R"(,"accepted":false})");

    tool_reply r;
    r.exec = exec_result{};
    CHECK(bare(r).ends_with(R"("exec":{}})"));
    r.exec = exec_result{"ping", 0, false};
    CHECK(bare(r).ends_with(R"("exec":{"command":"ping"}})"));

    task_result res;
    res.usage = usage{};
    CHECK(bare(res).ends_with(R"("stop_reason":"","usage":{}})"));

    task_request t;
    t.stream = true;
    CHECK(bare(t).ends_with(R"("prompt":"","stream":true})"));
    t.budget = budget{};
    t.stream.reset();
    CHECK(bare(t).ends_with(R"("prompt":"","budget":{}})"));
}

TEST_CASE("a2a.codec: a task request without stream wants the stream, explicit false survives", "[a2a][codec]") {
    task_request t = with_header(task_request{});
    t.prompt = "p";
    CHECK(t.wants_stream());
    auto back = decode(encoded(t));
    CHECK(std::get<task_request>(*back).wants_stream());
    t.stream = false;
    back = decode(encoded(t));
    REQUIRE(std::get<task_request>(*back).stream == false);
    CHECK_FALSE(std::get<task_request>(*back).wants_stream());
}

TEST_CASE("a2a.codec: strings are escaped as Go escapes them", "[a2a][codec]") {
    auto reply_output = [](std::string s) {
        tool_reply r;
        r.output = std::move(s);
        const auto text = encoded(r);
        const auto start = text.find(R"("output":)") + 9;
        return text.substr(start, text.size() - start - 1);
    };
    CHECK(reply_output("<a href=\"x\">&</a>") == R"("\u003ca href=\"x\"\u003e\u0026\u003c/a\u003e")");
    CHECK(reply_output("\b\f\n\r\t\\") == R"("\b\f\n\r\t\\")");
    CHECK(reply_output(std::string("\x00\x01\x1b\x1f", 4)) == R"("\u0000\u0001\u001b\u001f")");
    CHECK(reply_output("/ and \x7f") == "\"/ and \x7f\"");
    CHECK(reply_output("line\u2028para\u2029") == R"("line\u2028para\u2029")");
    CHECK(reply_output("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80") == "\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"");
    // Invalid UTF-8: one \ufffd per bad byte, as utf8.DecodeRune reports them.
    CHECK(reply_output("a\xff"
                       "b") == R"("a\ufffdb")");
    CHECK(reply_output("\xe2\x82") == R"("\ufffd\ufffd")");
    CHECK(reply_output("\xed\xa0\x80") == R"("\ufffd\ufffd\ufffd")");            // an encoded surrogate
    CHECK(reply_output("\xc0\xaf") == R"("\ufffd\ufffd")");                      // an overlong '/'
    CHECK(reply_output("\xf4\x90\x80\x80") == R"("\ufffd\ufffd\ufffd\ufffd")");  // above U+10FFFF
}

TEST_CASE("a2a.codec: decoding replaces invalid UTF-8 and unpaired surrogates with U+FFFD, as Go does",
          "[a2a][codec]") {
    const auto b = a2a_test::body(protocols::tool_reply,
                                  ",\"output\":\"a\xff"
                                  R"(b \ud800 \udc00x \ud83d\ude00")");
    const auto m = decode(b);
    REQUIRE(m);
    CHECK(std::get<tool_reply>(*m).output ==
          "a\xEF\xBF\xBD"
          "b \xEF\xBF\xBD \xEF\xBF\xBDx \xF0\x9F\x98\x80");
    // Re-encoded, the replacement characters are valid UTF-8 and are written raw.
    CHECK(encoded(*m).find("\"output\":\"a\xEF\xBF\xBD"
                           "b") != std::string::npos);
}

TEST_CASE("a2a.codec: decoding accepts any valid JSON: whitespace, key order, escapes", "[a2a][codec]") {
    const std::string body = R"(  {
        "name" : "ping", "input" : { "b" : [ 1 , 2.50 , -1e3 ] , "a" : "\u0041\/" },
        "sender" : { "name" : "caller" },  "time":"2026-05-04T09:15:27.482913304Z",
        "sequence" : 0, "conversation":"c", "request":"r", "id":"i",
        "\u0070rotocol":"io.choria.fisk-ai.v1.tool.request", "unknown": {"x": [1,2,3]}
    }  )";
    const auto m = decode(body);
    REQUIRE(m);
    const auto& call = std::get<tool_request>(*m);
    CHECK(call.name == "ping");
    CHECK(call.input->text() == R"({"b":[1,2.50,-1e3],"a":"\u0041\/"})");
    CHECK(encoded(*m) == R"({"protocol":"io.choria.fisk-ai.v1.tool.request","id":"i","request":"r","conversation":"c",)"
                         R"("sequence":0,"time":"2026-05-04T09:15:27.482913304Z","sender":{"name":"caller"},)"
                         R"("name":"ping","input":{"b":[1,2.50,-1e3],"a":"\u0041\/"}})");
}

TEST_CASE("a2a.codec: a duplicate key: the last one wins, for typed and raw fields alike", "[a2a][codec]") {
    const auto m =
        decode(a2a_test::body(protocols::tool_request, R"(,"name":"a","input":{"x":1},"name":"b","input":{"y":2})"));
    REQUIRE(m);
    CHECK(std::get<tool_request>(*m).name == "b");
    CHECK(std::get<tool_request>(*m).input->text() == R"({"y":2})");
}

TEST_CASE("a2a.codec: raw JSON is compacted, its numbers and escapes kept verbatim, HTML-escaped on output",
          "[a2a][codec]") {
    tool_request call;
    call.input =
        raw(" {\"big\" : 123456789012345678901234567890, \"f\": 1.0E+2, \"s\":\"<&>\u2028\", \"e\":\"\\u003c\"} ");
    CHECK(call.input->text() ==
          "{\"big\":123456789012345678901234567890,\"f\":1.0E+2,\"s\":\"<&>\u2028\",\"e\":\"\\u003c\"}");
    const auto text = encoded(call);
    CHECK(text.ends_with(
        R"("input":{"big":123456789012345678901234567890,"f":1.0E+2,"s":"\u003c\u0026\u003e\u2028","e":"\u003c"}})"));
    CHECK_FALSE(raw_json::parse("{\"a\":").has_value());
    CHECK(raw_json::parse("{\"a\":").error().code == errc::invalid_json);
}

TEST_CASE("a2a.codec: a null input is carried as Go carries a null RawMessage", "[a2a][codec]") {
    const auto m = decode(a2a_test::body(protocols::tool_request, R"(,"name":"a","input":null)"));
    REQUIRE(m);
    REQUIRE(std::get<tool_request>(*m).input);
    CHECK(std::get<tool_request>(*m).input->text() == "null");
}

TEST_CASE("a2a.codec: raw_json::from_value writes a generic value as Go marshals a map", "[a2a][codec]") {
    const auto v = boost::json::parse(
        R"({"type":"object","properties":{"z":{"type":"integer","maximum":1e21},"a":{"minimum":0.000001,"x":1e-7,"f":1.5,"n":-0.0}},"required":["z","a"],"<":"&"})");
    CHECK(
        raw_json::from_value(v).text() ==
        R"({"\u003c":"\u0026","properties":{"a":{"f":1.5,"minimum":0.000001,"n":-0,"x":1e-7},"z":{"maximum":1e+21,"type":"integer"}},"required":["z","a"],"type":"object"})");
}

TEST_CASE("a2a.codec: encoding a block adds the type discriminator and sorts the keys", "[a2a][codec]") {
    CHECK(encode(block{text_block{"hi"}}).value() == R"({"text":"hi","type":"text"})");
    CHECK(encode(block{thinking_block{"t", "s", "p"}}).value() ==
          R"({"provider":"p","signature":"s","text":"t","type":"thinking"})");
    CHECK(encode(block{thinking_block{"t", "", ""}}).value() == R"({"text":"t","type":"thinking"})");
    CHECK(encode(block{tool_call_block{"1", "n", std::nullopt}}).value() ==
          R"({"id":"1","name":"n","type":"tool_call"})");
    CHECK(encode(block{tool_result_block{"1", false, "", std::nullopt}}).value() ==
          R"({"call_id":"1","type":"tool_result"})");
    CHECK(
        encode(block{tool_result_block{"1", true, "o", exec_result{"c", 1, true}}}).value() ==
        R"({"call_id":"1","exec":{"command":"c","exit_code":1,"truncated":true},"is_error":true,"output":"o","type":"tool_result"})");
    CHECK(encode(block{agent_call_block{"1", "n", "t"}}).value() ==
          R"({"id":"1","name":"n","task":"t","type":"agent_call"})");
    CHECK(encode(block{status_block{}}).value() == R"({"type":"status"})");
    CHECK(encode(block{status_block{0, "", usage{}}}).value() == R"({"type":"status","usage":{}})");
}

TEST_CASE("a2a.codec: an empty block refuses to encode", "[a2a][codec]") {
    CHECK(encode(block{}).error().code == errc::invalid_message);
    CHECK(encode(block{}).error().message == "invalid message: block has no content");
    task_event ev;
    CHECK(encode(message{ev}).error().code == errc::invalid_message);
}

TEST_CASE("a2a.codec: a decoded tool_result block exposes its fields through the variant", "[a2a][codec]") {
    const auto b = decode_block(R"({"type":"tool_result","call_id":"c1","is_error":true})");
    REQUIRE(b);
    const auto* r = std::get_if<tool_result_block>(&*b);
    REQUIRE(r != nullptr);
    CHECK(r->call_id == "c1");
    CHECK(r->is_error);
}

TEST_CASE("a2a.codec: a block of an unknown kind decodes into a fallback keeping the peer's bytes", "[a2a][codec]") {
    const auto b = decode_block(R"( {"type" : "bogus", "n": 1.0E3, "s": "<x>"} )");
    REQUIRE(b);
    const auto* u = std::get_if<unknown_block>(&*b);
    REQUIRE(u != nullptr);
    CHECK(u->type() == "bogus");
    CHECK(block_type(*b) == "bogus");
    CHECK(u->raw().text() == R"({"type":"bogus","n":1.0E3,"s":"<x>"})");
    CHECK(encode(*b).value() == R"({"type":"bogus","n":1.0E3,"s":"\u003cx\u003e"})");

    CHECK(decode_block(R"({"text":"no type"})").error().message == R"(unknown block type: "")");
    CHECK(decode_block(R"({"type":7})").error().code == errc::unknown_block_type);
    CHECK(unknown_block::from_raw(raw(R"({"type":"text","text":"x"})")).error().code == errc::unknown_block_type);
    CHECK(unknown_block::from_raw(raw(R"([1])")).error().code == errc::unknown_block_type);
}

TEST_CASE("a2a.codec: decoding dispatches on protocol and refuses an unknown one", "[a2a][codec]") {
    const auto m = decode(a2a_test::body(protocols::task_request, R"(,"prompt":"do it")"));
    REQUIRE(m);
    CHECK(std::get<task_request>(*m).prompt == "do it");

    CHECK(decode(a2a_test::body("nope")).error().message == R"(unknown protocol: "nope")");
    CHECK(decode(R"({"id":"x"})").error().message == R"(unknown protocol: "")");
    CHECK(decode(R"({"protocol":null})").error().code == errc::unknown_protocol);
    CHECK(decode(R"({"protocol":5})").error().code == errc::unknown_protocol);
    CHECK(decode("[]").error().code == errc::invalid_json);
    CHECK(decode("{").error().code == errc::invalid_json);
    CHECK(decode("").error().code == errc::invalid_json);
}

TEST_CASE("a2a.codec: the typed decode is as strict as Go's", "[a2a][codec]") {
    auto field_error = [](std::string_view payload_and_header) {
        const auto m = decode(std::string(R"({"protocol":"io.choria.fisk-ai.v1.tool.reply",)") +
                              std::string(payload_and_header) + "}");
        REQUIRE_FALSE(m);
        return m.error();
    };
    CHECK(field_error(R"("sequence":1.0)").code == errc::invalid_field);
    CHECK(field_error(R"("sequence":1e2)").code == errc::invalid_field);
    CHECK(field_error(R"("sequence":-1)").code == errc::invalid_field);
    CHECK(field_error(R"("time":"2026-05-04 09:15:27Z")").code == errc::invalid_field);
    CHECK(field_error(R"("time":"2026-02-30T09:15:27Z")").code == errc::invalid_field);
    CHECK(field_error(R"("exec":{"exit_code":9223372036854775808})").message ==
          R"(invalid field value: "exec.exit_code": number out of range for a 64-bit signed integer)");
    CHECK(field_error(R"("output":5)").message == R"(invalid field value: "output": want a string, got a number)");
    CHECK(field_error(R"("sender":"caller")").message ==
          R"(invalid field value: "sender": want an object, got a string)");
    CHECK(field_error(R"("sender":{"name":false})").message ==
          R"(invalid field value: "sender.name": want a string, got a boolean)");

    // Nulls are zero values, as in Go; the largest uint64 is a fine sequence.
    const auto ok = decode(
        R"({"protocol":"io.choria.fisk-ai.v1.tool.reply","output":null,"recipient":null,"sequence":18446744073709551615})");
    REQUIRE(ok);
    CHECK(std::get<tool_reply>(*ok).sequence == 18446744073709551615ULL);
    CHECK_FALSE(std::get<tool_reply>(*ok).recipient);
}

TEST_CASE("a2a.codec: times: RFC 3339 in, RFC 3339 out with the fraction trimmed", "[a2a][codec]") {
    auto round = [](std::string_view s) { return timestamp::parse(s).value().to_string(); };
    CHECK(round("2026-05-04T09:15:27.482913304Z") == "2026-05-04T09:15:27.482913304Z");
    CHECK(round("2026-05-04T09:15:27.482900000Z") == "2026-05-04T09:15:27.4829Z");
    CHECK(round("2026-05-04T09:15:27.000Z") == "2026-05-04T09:15:27Z");
    CHECK(round("2026-05-04T09:15:27.1234567891234Z") == "2026-05-04T09:15:27.123456789Z");
    CHECK(round("2026-05-04T09:15:27+02:00") == "2026-05-04T09:15:27+02:00");
    CHECK(round("2026-05-04T09:15:27-00:30") == "2026-05-04T09:15:27-00:30");
    CHECK(round("2026-05-04T09:15:27+00:00") == "2026-05-04T09:15:27Z");
    CHECK(round("0000-01-01T00:00:00Z") == "0000-01-01T00:00:00Z");
    CHECK(round("9999-12-31T23:59:59.999999999Z") == "9999-12-31T23:59:59.999999999Z");
    CHECK(round("2024-02-29T00:00:00Z") == "2024-02-29T00:00:00Z");

    const auto t = timestamp::parse("2026-05-04T11:15:27+02:00").value();
    CHECK(t.seconds() == timestamp::parse("2026-05-04T09:15:27Z")->seconds());
    CHECK(t.offset() == std::chrono::minutes(120));

    for (const char* bad :
         {"2026-05-04T09:15:27", "2026-05-04t09:15:27Z", "2026-05-04T09:15:27z", "2026-05-04T09:15:27.Z",
          "2026-05-04T09:15:27,5Z", "2026-05-04T24:00:00Z", "2026-05-04T09:15:60Z", "2023-02-29T00:00:00Z",
          "2026-05-04T09:15:27+0200", "2026-05-04T09:15:27+24:00", "+2026-05-04T09:15:27Z", "", "x"}) {
        CAPTURE(bad);
        CHECK_FALSE(timestamp::parse(bad));
    }

    CHECK(timestamp().to_string() == "0001-01-01T00:00:00Z");
    const auto now = timestamp::now();
    CHECK(now.offset().count() == 0);
    CHECK(now.to_string().ends_with("Z"));
    CHECK(timestamp::parse(now.to_string()) == now);
}

TEST_CASE("a2a.codec: the task a body names is read from JSON that is no valid message", "[a2a][codec]") {
    CHECK(request_named_by(R"({"request":"T1","sequence":"one"})") == "T1");
    // Read as decode() reads JSON: an unpaired surrogate escape elsewhere does not hide it.
    CHECK(request_named_by(R"({"time":"\ud800","request":"T2"})") == "T2");
    CHECK(request_named_by(R"({"request":7})").empty());
    CHECK(request_named_by(R"(["request","T3"])").empty());
    CHECK(request_named_by(R"({"request":"T4")").empty());
    CHECK(request_named_by("").empty());
    // Nothing is read past the size cap.
    std::string big = R"({"request":"T5","prompt":")" + std::string(max_message_size, 'x') + R"("})";
    CHECK(request_named_by(big).empty());
}
