#include "async_test.hpp"

#include <fiskai/remotetools/remotetools.hpp>

#include <boost/json/parse.hpp>

#include <catch2/catch.hpp>

#include <algorithm>

using namespace fiskai::remotetools;
using fiskai::test::run_awaitable;
namespace json = boost::json;

namespace {

discovery card(std::initializer_list<std::string> names) {
    discovery d;
    d.version = "v1";
    for (const auto& n : names) d.tools.push_back({n, "does " + n, json::parse(R"({"type":"object"})")});
    return d;
}

std::vector<std::string> names(const import_result& r) {
    std::vector<std::string> out;
    for (const auto& t : r.tools) out.push_back(t->name());
    return out;
}

std::vector<std::string> sorted(std::vector<std::string> v) {
    std::sort(v.begin(), v.end());
    return v;
}

import_result run(std::vector<host_config> hosts, std::vector<discovery> found, std::set<std::string> taken = {}) {
    return import_tools(hosts, found, taken, nullptr);
}

}  // namespace

TEST_CASE("remote naming: the note's worked examples", "[remotetools]") {
    CHECK(names(run({{"nats"}}, {card({"stream_info", "consumer_ls"})})) ==
          std::vector<std::string>{"stream_info", "consumer_ls"});
    CHECK(names(run({{"nats"}}, {card({"stream_info", "consumer_ls"})}, {"stream_info"})) ==
          std::vector<std::string>{"nats_stream_info", "consumer_ls"});

    auto shared = run({{"a"}, {"b"}}, {card({"dup", "only_a"}), card({"dup", "only_b"})});
    CHECK(sorted(names(shared)) == std::vector<std::string>{"a_dup", "b_dup", "only_a", "only_b"});
    CHECK_FALSE(shared.collision_error);

    auto same_alias = run({{"a", "shared"}, {"b", "shared"}}, {card({"t"}), card({"t"})});
    CHECK(names(same_alias).empty());
    REQUIRE(same_alias.collision_error);
    CHECK(*same_alias.collision_error ==
          "imported tool name collision: \"shared_t\" (agent \"a\"), \"shared_t\" (agent \"b\"); set a distinct alias "
          "on the remote_tools host");

    auto residual = run({{"nats"}}, {card({"stream_info"})}, {"nats_stream_info", "stream_info"});
    CHECK(names(residual).empty());
    CHECK(residual.collision_error);

    auto prefixed_meets_bare = run({{"a"}, {"b"}}, {card({"x", "dup"}), card({"dup", "a_dup"})});
    CHECK(sorted(names(prefixed_meets_bare)) == std::vector<std::string>{"b_dup", "x"});
    REQUIRE(prefixed_meets_bare.collision_error);
    CHECK_THAT(*prefixed_meets_bare.collision_error,
               Catch::Contains("\"a_dup\" (agent \"a\")") && Catch::Contains("\"a_dup\" (agent \"b\")"));

    auto dotted = run({{"h"}}, {card({"foo.bar", "ok"})});
    CHECK(names(dotted) == std::vector<std::string>{"ok"});
    CHECK(dotted.hosts[0].skipped == std::vector<std::string>{"foo.bar (invalid name \"foo.bar\")"});
    CHECK_FALSE(dotted.collision_error);
}

TEST_CASE("remote naming does not depend on host order", "[remotetools]") {
    const std::set<std::string> taken = {"stream_info"};
    auto ab = run({{"a"}, {"b"}}, {card({"stream_info", "x"}), card({"stream_info", "y"})}, taken);
    auto ba = run({{"b"}, {"a"}}, {card({"stream_info", "y"}), card({"stream_info", "x"})}, taken);
    CHECK(sorted(names(ab)) == std::vector<std::string>{"a_stream_info", "b_stream_info", "x", "y"});
    CHECK(sorted(names(ab)) == sorted(names(ba)));

    // three hosts, every permutation, one shared name and one private each
    std::vector<int> order = {0, 1, 2};
    std::vector<std::string> first;
    do {
        std::vector<host_config> hosts;
        std::vector<discovery> found;
        for (int i : order) {
            const std::string h = std::string(1, static_cast<char>('a' + i));
            hosts.push_back({h});
            found.push_back(card({"common", "own_" + h}));
        }
        auto r = run(hosts, found);
        if (first.empty()) first = sorted(names(r));
        CHECK(sorted(names(r)) == first);
    } while (std::next_permutation(order.begin(), order.end()));
    CHECK(first == std::vector<std::string>{"a_common", "b_common", "c_common", "own_a", "own_b", "own_c"});
}

TEST_CASE("per-host filters: names only, include tags ignored with a warning", "[remotetools]") {
    bool ignored = false;
    host_config h{"nats", "", {"^stream_"}, {}, {"_report$"}};
    auto kept = filter_descriptors(h, card({"stream_info", "stream_report", "consumer_ls"}).tools, ignored);
    REQUIRE(kept.size() == 1);
    CHECK(kept[0].name == "stream_info");
    CHECK_FALSE(ignored);

    auto r = run({{"nats", "", {}, {"scope:read"}, {}}}, {card({"a", "b"})});
    CHECK(names(r).size() == 2);
    CHECK(r.hosts[0].include_tags_ignored);
    CHECK_THAT(r.warnings().at(0), Catch::Contains("include filter uses tags"));

    auto bad = run({{"nats", "", {"(oops"}, {}, {}}}, {card({"a"})});
    REQUIRE(bad.hosts[0].error);
    CHECK_THAT(*bad.hosts[0].error, Catch::StartsWith("invalid remote tool filter pattern \"(oops\""));
}

TEST_CASE("untrusted descriptors: no description, non-object schema", "[remotetools]") {
    discovery d;
    d.tools.push_back({"quiet", "", json::parse(R"({"type":"object"})")});
    d.tools.push_back({"weird", "has a list schema", json::parse("[1]")});
    d.tools.push_back({"untyped", "schema without a type", json::parse(R"({"properties":{"x":{"type":"string"}}})")});
    auto r = run({{"h"}}, {d});
    REQUIRE(names(r) == std::vector<std::string>{"untyped"});
    CHECK(r.tools[0]->input_schema().at("type") == "object");
    CHECK(r.tools[0]->input_schema().contains("properties"));
    CHECK(r.tools[0]->confirm().posture == fiskai::toolkit::confirm_posture::not_required);
    CHECK(r.tools[0]->kind() == fiskai::toolkit::tool_kind::remote);
    CHECK_FALSE(r.tools[0]->exposed().on(fiskai::toolkit::surface::a2a));
    CHECK(r.tools[0]->exposed().on(fiskai::toolkit::surface::agent));
    CHECK(r.hosts[0].skipped.size() == 2);
}

TEST_CASE("strict import fails on a host error or a collision, lenient keeps going", "[remotetools]") {
    discovery down;
    down.error = "remote agent unavailable: no responders";
    auto r = run({{"up"}, {"down"}}, {card({"a"}), down});
    CHECK(names(r) == std::vector<std::string>{"a"});
    CHECK_THROWS_WITH(
        require_complete(r, "prod"),
        "importing tools from remote agent \"down\" on context \"prod\": remote agent unavailable: no responders");
    auto c = run({{"a", "s"}, {"b", "s"}}, {card({"t"}), card({"t"})});
    CHECK_THROWS_WITH(require_complete(c, "prod"), Catch::StartsWith("imported tool name collision"));
}

TEST_CASE("a remote reply becomes the local command result, byte for byte", "[remotetools]") {
    CHECK(outcome_of({false, "boom\n", "stream info -- ORDERS", 3, false}).render() ==
          R"({"command":"stream info -- ORDERS","exit_code":3,"output":"boom\n"})");
    CHECK_FALSE(outcome_of({false, "ok", "x", 3, false}).is_error());
    CHECK(outcome_of({false, "<&>", std::nullopt, 0, true}).render() ==
          R"({"command":"","output":"\u003c\u0026\u003e","truncated":true})");
    auto err = outcome_of({true, "tool \"missing\" is not available", std::nullopt, 0, false});
    CHECK(err.is_error());
    CHECK(err.error_message() == "tool \"missing\" is not available");
}

TEST_CASE("calling a remote tool uses the peer's own name and maps failures", "[remotetools]") {
    std::string seen_host, seen_tool;
    json::value seen_input;
    invoker call = [&](std::string host, std::string tool, json::value input) -> boost::asio::awaitable<tool_reply> {
        seen_host = host;
        seen_tool = tool;
        seen_input = input;
        if (tool == "broken") throw std::runtime_error("remote agent unavailable");
        co_return tool_reply{false, "pong\n", "ping", 0, false};
    };
    auto r = import_tools({{"nats"}}, {card({"ping", "broken"})}, {"ping"}, call);
    REQUIRE(names(r) == std::vector<std::string>{"nats_ping", "broken"});
    auto ok = run_awaitable(r.tools[0]->call(json::object{}, {}));
    CHECK(seen_host == "nats");
    CHECK(seen_tool == "ping");
    CHECK(seen_input.is_null());  // an empty input is dropped, as models send null
    CHECK(ok.render() == R"({"command":"ping","output":"pong\n"})");
    auto bad = run_awaitable(r.tools[1]->call(json::parse(R"({"x":1})"), {}));
    CHECK(bad.is_error());
    CHECK(bad.error_message() == "calling tool \"broken\" on agent \"nats\": remote agent unavailable");
    CHECK(seen_input.at("x") == 1);
}
