// The record codec: Go's exact bytes both ways, the schemas enforced on read, run ids and
// the append contract (agent-llm-state.md §6, 54-56).
#include <fiskai/runstate/message_json.hpp>
#include <fiskai/runstate/records.hpp>

#include "async_test.hpp"

#include <boost/json.hpp>
#include <catch2/catch.hpp>

#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

namespace rs = fiskai::runstate;
namespace llm = fiskai::llm;

namespace {

std::vector<std::string> fixture_lines(const std::string& name) {
    std::ifstream in(fiskai::test::source_path("tests/runstate/fixtures/" + name));
    REQUIRE(in);
    std::vector<std::string> lines;
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    return lines;
}

std::string corrupt_message(std::string_view text) {
    auto r = rs::decode_record(text);
    REQUIRE(!r.has_value());
    CHECK(r.error().code == rs::errc::corrupt);
    return r.error().message;
}

}  // namespace

TEST_CASE("every record of a Go-written journal decodes and re-encodes to the same bytes", "[codec]") {
    const auto lines = fixture_lines("go_journal.json");
    REQUIRE(lines.size() == 8);
    for (const auto& line : lines) {
        INFO(line);
        auto r = rs::decode_record(line);
        REQUIRE(r.has_value());
        CHECK(rs::encode_record(*r) == line);
    }
    auto meta = rs::decode_record(lines[0]);
    const auto& m = std::get<rs::meta_record>(meta->payload);
    CHECK(m.created.nanos == 123456700);
    CHECK(m.created.offset == std::chrono::minutes(120));
    CHECK(m.prompt == "report on the <ORDERS> stream & its consumers");
    auto assistant = rs::decode_record(lines[1]);
    const auto& a = std::get<rs::assistant_record>(assistant->payload);
    REQUIRE(a.message.content.size() == 5);
    CHECK(std::get<llm::thinking_block>(a.message.content[0]).signature ==
          std::string("\x00\x01\x02\xfa\xfb\xfc\xfd\xfe\xffsig", 12));
    CHECK(std::get<llm::tool_use_block>(a.message.content[3]).input ==
          R"({"stream":"ORDERS","filter":"\u003cnone\u003e"})");
    CHECK(std::get<llm::provider_block>(a.message.content[2]).kind == "server_tool_use");
    CHECK(a.cache_create_tokens == 3000);
    CHECK(a.cache_read_tokens == 0);
}

TEST_CASE("records encode as Go's json.Marshal writes them", "[codec]") {
    SECTION("the spec's example journal") {
        rs::assistant_record a;
        a.iteration = 0;
        a.message.who = llm::role::assistant;
        a.message.content.push_back(llm::tool_use_block{"toolu_01", "stream_info", R"({"stream":"ORDERS"})", {}});
        a.stop_reason = "tool_use";
        a.in_tokens = 1200;
        a.out_tokens = 80;
        a.cache_create_tokens = 3000;
        CHECK(
            rs::encode_record({2, a}) ==
            R"({"seq":2,"protocol":"io.choria.fisk-ai.v1.session.assistant","assistant":{"iteration":0,"message":{"role":"assistant","content":[{"tool_use":{"id":"toolu_01","name":"stream_info","input":{"stream":"ORDERS"}}}]},"stop_reason":"tool_use","in_tokens":1200,"out_tokens":80,"cache_create_tokens":3000}})");
        CHECK(
            rs::encode_record({3, rs::tool_result_record{"toolu_01", {"toolu_01", "{...}", false}, false}}) ==
            R"({"seq":3,"protocol":"io.choria.fisk-ai.v1.session.tool_result","tool_result":{"tool_use_id":"toolu_01","result":{"tool_use_id":"toolu_01","content":"{...}"}}})");
        CHECK(rs::encode_record({5, rs::terminal_record{rs::terminal_reason::completed, ""}}) ==
              R"({"seq":5,"protocol":"io.choria.fisk-ai.v1.session.terminal","terminal":{"reason":"completed"}})");
    }

    SECTION("meta: time as RFC3339Nano, prompt always written, interactive only when true") {
        rs::meta_record m;
        m.run_id = "r1";
        m.created = *fiskai::gocompat::parse_rfc3339("2026-05-04T10:11:12.120000000Z");
        m.fingerprint = {"anthropic", "m", "s", "t", "off", 10, 5};
        CHECK(
            rs::encode_record({1, m}) ==
            R"({"seq":1,"protocol":"io.choria.fisk-ai.v1.session.meta","meta":{"version":3,"run_id":"r1","created":"2026-05-04T10:11:12.12Z","fingerprint":{"provider":"anthropic","model":"m","system_hash":"s","tools_hash":"t","thinking_mode":"off","max_tokens":10,"max_iterations":5},"prompt":""}})");
        m.interactive = true;
        CHECK(rs::encode_record({1, m}).ends_with(R"("prompt":"","interactive":true}})"));
    }

    SECTION("raw JSON is compacted with HTML escaping; empty raw is null; empty thinking fields are omitted") {
        llm::message msg;
        msg.who = llm::role::assistant;
        msg.content.push_back(llm::tool_use_block{"t", "n", "{ \"a\" : [1, 2],\n \"b\":\"<x> & \xe2\x80\xa8\" }", {}});
        msg.content.push_back(llm::tool_use_block{"t2", "n", "", {}});
        msg.content.push_back(llm::thinking_block{"", ""});
        msg.content.push_back(llm::provider_block{"redacted_thinking", R"({"type":"redacted_thinking","data":"x"})"});
        std::string out;
        rs::append_message_json(out, msg);
        CHECK(
            out ==
            R"({"role":"assistant","content":[{"tool_use":{"id":"t","name":"n","input":{"a":[1,2],"b":"\u003cx\u003e \u0026 \u2028"}}},{"tool_use":{"id":"t2","name":"n","input":null}},{"thinking":{}},{"provider":{"kind":"redacted_thinking","raw":{"type":"redacted_thinking","data":"x"}}}]})");
        auto back = rs::message_from_json(boost::json::parse(out));
        REQUIRE(back.has_value());
        CHECK(std::get<llm::tool_use_block>(back->content[1]).input.empty());
    }

    SECTION("strings: Go's escaping of controls, HTML characters and invalid UTF-8") {
        rs::terminal_record t{rs::terminal_reason::error, std::string("a\x01\b\f\n\t<\xff", 8)};
        CHECK(
            rs::encode_record({9, t}) ==
            R"({"seq":9,"protocol":"io.choria.fisk-ai.v1.session.terminal","terminal":{"reason":"error","message":"a\u0001\b\f\n\t\u003c\ufffd"}})");
    }
}

TEST_CASE("records failing their schema are corrupt", "[codec][schema]") {
    const std::string meta =
        R"({"seq":1,"protocol":"io.choria.fisk-ai.v1.session.meta","meta":{"version":3,"run_id":"r","created":"2026-05-04T10:11:12Z","fingerprint":{}}})";

    SECTION("all kinds are accepted, a terminal without message too") {
        CHECK(rs::decode_record(meta).has_value());
        CHECK(rs::decode_record(
                  R"({"seq":2,"protocol":"io.choria.fisk-ai.v1.session.terminal","terminal":{"reason":"budget"}})")
                  .has_value());
        CHECK(
            rs::decode_record(
                R"({"seq":2,"protocol":"io.choria.fisk-ai.v1.session.user","user":{"message":{"role":"user","content":[{"text":{"text":"hi"}}]}}})")
                .has_value());
        CHECK(
            rs::decode_record(
                R"({"seq":2,"protocol":"io.choria.fisk-ai.v1.session.tool_result","tool_result":{"tool_use_id":"t","result":{"tool_use_id":"t","content":""},"remote":true}})")
                .has_value());
    }
    SECTION("unknown protocol") {
        CHECK(corrupt_message(R"({"seq":2,"protocol":"io.choria.fisk-ai.v1.session.nope","nope":{}})") ==
              R"(corrupt record sequence: unknown record protocol "io.choria.fisk-ai.v1.session.nope")");
    }
    SECTION("payload and protocol disagree") {
        CHECK(corrupt_message(
                  R"({"seq":2,"protocol":"io.choria.fisk-ai.v1.session.terminal","user":{"message":{"role":"user"}}})")
                  .find("session.terminal.json") != std::string::npos);
    }
    SECTION("a missing meta field") {
        const auto m = corrupt_message(
            R"({"seq":1,"protocol":"io.choria.fisk-ai.v1.session.meta","meta":{"version":3,"run_id":"r","fingerprint":{}}})");
        CHECK(m.find("session.meta.json: /meta") != std::string::npos);
    }
    SECTION("a stray second payload key") {
        const auto m = corrupt_message(
            R"({"seq":2,"protocol":"io.choria.fisk-ai.v1.session.terminal","terminal":{"reason":"completed"},"user":{"message":{}}})");
        CHECK(m.find("session.terminal.json") != std::string::npos);
    }
    SECTION("an unknown terminal reason") {
        CHECK(corrupt_message(
                  R"({"seq":2,"protocol":"io.choria.fisk-ai.v1.session.terminal","terminal":{"reason":"done"}})")
                  .find("/terminal/reason") != std::string::npos);
    }
    SECTION("a stray fingerprint field, seq 0, meta at seq 2, a non-integer token count") {
        corrupt_message(
            R"({"seq":1,"protocol":"io.choria.fisk-ai.v1.session.meta","meta":{"version":3,"run_id":"r","created":"2026-05-04T10:11:12Z","fingerprint":{"colour":"red"}}})");
        corrupt_message(
            R"({"seq":0,"protocol":"io.choria.fisk-ai.v1.session.terminal","terminal":{"reason":"completed"}})");
        corrupt_message(
            R"({"seq":2,"protocol":"io.choria.fisk-ai.v1.session.meta","meta":{"version":3,"run_id":"r","created":"2026-05-04T10:11:12Z","fingerprint":{}}})");
        corrupt_message(
            R"({"seq":2,"protocol":"io.choria.fisk-ai.v1.session.assistant","assistant":{"iteration":0,"message":{"role":"assistant","content":[]},"in_tokens":1.5,"out_tokens":0}})");
    }
    SECTION("a bad time, a bad signature, an unknown block, a bad role") {
        CHECK(
            corrupt_message(
                R"({"seq":1,"protocol":"io.choria.fisk-ai.v1.session.meta","meta":{"version":3,"run_id":"r","created":"yesterday","fingerprint":{}}})") ==
            "corrupt record sequence: session.meta.json: /meta/created: String should be a valid date-time");
        CHECK(
            corrupt_message(
                R"({"seq":2,"protocol":"io.choria.fisk-ai.v1.session.user","user":{"message":{"role":"user","content":[{"thinking":{"signature":"!!"}}]}}})")
                .find("signature is not standard base64") != std::string::npos);
        CHECK(
            corrupt_message(
                R"({"seq":2,"protocol":"io.choria.fisk-ai.v1.session.user","user":{"message":{"role":"user","content":[{"image":{}}]}}})")
                .find(R"(unknown content block "image")") != std::string::npos);
        CHECK(
            corrupt_message(
                R"({"seq":2,"protocol":"io.choria.fisk-ai.v1.session.user","user":{"message":{"role":"system","content":[]}}})")
                .find(R"(role "system")") != std::string::npos);
    }
    SECTION("not JSON, and JSON nested deeper than Boost's default limit is fine") {
        CHECK(corrupt_message(R"({"seq":2,"protocol")").find("not JSON") != std::string::npos);
        std::string deep(100, '[');
        deep += std::string(100, ']');
        auto r = rs::decode_record(
            R"({"seq":2,"protocol":"io.choria.fisk-ai.v1.session.user","user":{"message":{"role":"user","content":[{"tool_use":{"id":"t","name":"n","input":)" +
            deep + "}}]}}}");
        CHECK(r.has_value());
    }
    SECTION("a meta of another version decodes (fold refuses it)") {
        auto r = rs::decode_record(
            R"({"seq":1,"protocol":"io.choria.fisk-ai.v1.session.meta","meta":{"version":2,"run_id":"r","created":"2026-05-04T10:11:12Z","fingerprint":{}}})");
        REQUIRE(r.has_value());
        CHECK(std::get<rs::meta_record>(r->payload).version == 2);
    }
}

TEST_CASE("an assistant record with a negative iteration or token count fails its schema", "[codec][schema]") {
    const auto with = [](std::string_view fields) {
        return corrupt_message(
            R"({"seq":2,"protocol":"io.choria.fisk-ai.v1.session.assistant","assistant":{"message":{"role":"assistant","content":[]},)" +
            std::string(fields) + "}}");
    };
    CHECK(with(R"("iteration":-1,"in_tokens":0,"out_tokens":0)").find("/assistant/iteration") != std::string::npos);
    CHECK(with(R"("iteration":0,"in_tokens":-1,"out_tokens":0)").find("/assistant/in_tokens") != std::string::npos);
    CHECK(with(R"("iteration":0,"in_tokens":0,"out_tokens":-9223372036854775808)").find("/assistant/out_tokens") !=
          std::string::npos);
    CHECK(with(R"("iteration":0,"in_tokens":0,"out_tokens":0,"cache_read_tokens":-2)")
              .find("/assistant/cache_read_tokens") != std::string::npos);
    CHECK(with(R"("iteration":0,"in_tokens":0,"out_tokens":0,"cache_create_tokens":-3)")
              .find("/assistant/cache_create_tokens") != std::string::npos);
    CHECK(
        rs::decode_record(
            R"({"seq":2,"protocol":"io.choria.fisk-ai.v1.session.assistant","assistant":{"iteration":0,"message":{"role":"assistant","content":[]},"in_tokens":0,"out_tokens":9223372036854775807}})")
            .has_value());
}

TEST_CASE("run ids: KSUIDs and names pass, traversal, separators, leading punctuation and length fail", "[ids]") {
    for (const char* ok : {"2xK9c0ZqJ6m2W3o1S8TQb5ZQwVb", "my-run_1", "a", "A-"})
        CHECK(rs::validate_id(ok).has_value());
    CHECK(rs::validate_id(std::string(128, 'a')).has_value());
    const std::vector<std::string> bads = {
        "", "../x", "a/b", "a\\b", ".x", "-x", "_x", "a.b", "a b", "a\n", std::string(129, 'a')};
    for (const auto& bad : bads) {
        INFO(bad);
        auto r = rs::validate_id(bad);
        REQUIRE(!r.has_value());
        CHECK(r.error().code == rs::errc::invalid_id);
    }
    CHECK(rs::validate_id("../etc").error().message == R"(invalid run id: "../etc" (use letters, digits, '-' or '_'))");
}

TEST_CASE("check_append: the next seq is written, a duplicate or older one skipped, a gap refused", "[append]") {
    CHECK(rs::check_append(0, 1).value() == rs::append_action::write);
    CHECK(rs::check_append(4, 5).value() == rs::append_action::write);
    CHECK(rs::check_append(4, 4).value() == rs::append_action::skip);
    CHECK(rs::check_append(4, 1).value() == rs::append_action::skip);
    auto gap = rs::check_append(4, 6);
    REQUIRE(!gap.has_value());
    CHECK(gap.error().code == rs::errc::seq_gap);
    CHECK(gap.error().message == "record seq gap: seq 6 skips ahead of 4");
}

TEST_CASE("check_append: nothing follows the largest seq, which would wrap to 0 and be skipped", "[append]") {
    constexpr auto top = std::numeric_limits<std::uint64_t>::max();
    CHECK(rs::check_append(top - 1, top).value() == rs::append_action::write);
    for (const std::uint64_t next : {top, std::uint64_t{0}, std::uint64_t{1}}) {
        auto refused = rs::check_append(top, next);
        REQUIRE(!refused.has_value());
        CHECK(refused.error().code == rs::errc::corrupt);
        CHECK(refused.error().message ==
              "corrupt record sequence: seq 18446744073709551615 is the last a journal can hold; no record can "
              "follow it");
    }
}
