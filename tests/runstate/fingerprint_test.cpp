// The fingerprint's hashes over Go's bytes, its diff and the resume gates' texts
// (agent-llm-state.md §3.5, §6 53).
#include <fiskai/runstate/fingerprint.hpp>

#include "async_test.hpp"

#include <boost/json.hpp>
#include <catch2/catch.hpp>

#include <fstream>
#include <string>

namespace rs = fiskai::runstate;
namespace llm = fiskai::llm;

namespace {

// The configuration the hand-written Go journal fixture was fingerprinted with; the
// fixture's go_hash_inputs.txt holds the bytes Go's json.Marshal gives for it.
std::vector<std::string> fixture_system() {
    return {"You are a NATS operator. Use <tools> & report.", "When you need a human, ask with the hitl tools."};
}

std::vector<llm::tool_def> fixture_tools() {
    return {
        {"stream_info", "Shows a stream's <state> & config",
         boost::json::parse(
             R"({"type":"object","properties":{"stream":{"type":"string","description":"the stream"},"limit":{"type":"integer","maximum":100}},"required":["stream"]})")
             .as_object(),
         false},
        {"memory_read", "Reads a memory",
         boost::json::parse(R"({"type":"object","properties":{"key":{"type":"string"}}})").as_object(), true},
    };
}

}  // namespace

TEST_CASE("hash inputs are Go's json.Marshal bytes", "[fingerprint]") {
    std::ifstream in(fiskai::test::source_path("tests/runstate/fixtures/go_hash_inputs.txt"));
    REQUIRE(in);
    std::string system_line;
    std::string tools_line;
    std::getline(in, system_line);
    std::getline(in, tools_line);
    CHECK(rs::system_blocks_json(fixture_system()) == system_line);
    CHECK(rs::tools_json(fixture_tools()) == tools_line);
    CHECK(rs::system_hash(fixture_system()) == "dc24242972cee21ac669b03d21cf554912b139843d303ec29bc67e08c8c95fdc");
    CHECK(rs::tools_hash(fixture_tools()) == "ede1d603fbdd00cbd277fa60abb209b41e278a486ae50660cd8cc34383b9c06e");
    CHECK(rs::hash_hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

TEST_CASE("any tool change changes the tools hash", "[fingerprint]") {
    const auto base = rs::tools_hash(fixture_tools());
    auto t = fixture_tools();
    t[1].defer_loading = false;
    CHECK(rs::tools_hash(t) != base);
    t = fixture_tools();
    t[0].description += ".";
    CHECK(rs::tools_hash(t) != base);
    t = fixture_tools();
    t[0].input_schema["required"] = boost::json::array{"stream", "limit"};
    CHECK(rs::tools_hash(t) != base);
}

TEST_CASE("diff lists field-level changes, provider is a separate hard gate", "[fingerprint]") {
    const rs::fingerprint saved{"anthropic", "a", "s1", "t1", "off", 100, 10};
    auto current = saved;
    CHECK(rs::diff(saved, current).empty());
    current.provider = "openai";
    CHECK(rs::diff(saved, current).empty());
    CHECK(rs::equal_ignoring_provider(saved, current));
    CHECK(
        rs::check_resume("r1", saved, current, true) ==
        R"(cannot resume "r1": it was started with provider "anthropic" but the current configuration uses "openai"; a run cannot change provider, and --force does not apply)");

    current = {"anthropic", "b", "s2", "t2", "summarized", 200, 20};
    CHECK(rs::diff(saved, current) == std::vector<std::string>{"model: a -> b", "system prompt: changed",
                                                               "tool set: changed", "thinking: off -> summarized",
                                                               "max_tokens: 100 -> 200", "max_iterations: 10 -> 20"});
    CHECK(rs::check_resume("r1", saved, current, true) == std::nullopt);
    current = saved;
    current.max_tokens = 5;
    CHECK(rs::check_resume("r1", saved, current, false) ==
          "cannot resume \"r1\", the configuration changed since it was saved:\n  max_tokens: 100 -> 5\nre-run against "
          "the "
          "original configuration, or pass --force to continue with the current one");
    CHECK(rs::check_resume("r1", saved, saved, false) == std::nullopt);
}
