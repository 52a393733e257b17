// Decoding: the strict YAML layer (unknown and duplicate keys, types, null handling, raw
// JSON blocks) and the defaults of an empty document.

#include "helpers.hpp"

#include <fiskai/config/config.hpp>

#include <catch2/catch.hpp>

#include <chrono>
#include <ctime>
#include <string>

using namespace fiskai::config;
using namespace std::chrono_literals;
using config_test::parse_error;

TEST_CASE("config: an empty document decodes to every default", "[config][decode]") {
    for (const char* text : {"", "# only a comment\n", "---\n", "\n\n"}) {
        INFO("document: " << text);
        const config c = parse(text, mode::lenient);

        CHECK(c.identity == "fisk-ai");
        CHECK(c.application_path.empty());
        CHECK(c.nats_context.empty());
        CHECK(c.system_prompt.empty());
        CHECK(c.include.empty());
        CHECK(c.exclude.empty());
        CHECK(c.global_flags.empty());
        CHECK(c.remote_agents.empty());
        CHECK(c.remote_tools.empty());
        CHECK_FALSE(c.mcp.has_value());
        CHECK_FALSE(c.mcp_enabled());
        CHECK_FALSE(c.a2a.has_value());
        CHECK_FALSE(c.a2a_serving_enabled());
        CHECK(c.expose_tools_include.empty());
        CHECK(c.expose_tools_exclude.empty());

        CHECK_FALSE(c.harness.human_in_the_loop_enabled);
        CHECK(c.harness.confirm_tags.empty());
        CHECK_FALSE(c.harness.no_tui);
        CHECK_FALSE(c.harness.no_bell);
        CHECK_FALSE(c.harness.memory.enabled);
        CHECK(c.harness.memory.backend.empty());
        CHECK_FALSE(c.harness.memory.no_index);
        CHECK_FALSE(c.harness.memory.index_enabled());
        CHECK(c.harness.memory.options_json.empty());
        CHECK(c.harness.sessions.backend == "file");
        CHECK(c.harness.sessions.options_json.empty());
        CHECK_FALSE(c.harness.knowledge.enabled);
        CHECK(c.harness.knowledge.paths.empty());
        CHECK(c.harness.knowledge.directory.empty());
        CHECK(c.harness.knowledge.top_k == 5);
        CHECK(c.harness.knowledge.max_injected_tokens == 6000);
        CHECK_FALSE(c.harness.knowledge.embeddings.has_value());
        CHECK_FALSE(c.harness.knowledge.vector_tier());
        CHECK(c.knowledge_directory() == "knowledge/fisk-ai");

        CHECK(c.llm.model.empty());
        CHECK(c.llm.provider == "anthropic");
        CHECK(c.llm.budget.max_tokens == 200000);
        CHECK(c.llm.budget.max_output_tokens == 0);
        CHECK(c.llm.budget.max_iterations == 50);
        CHECK(c.llm.budget.call_timeout == 120s);
        CHECK_FALSE(c.llm.thinking_enabled);
        CHECK(c.llm.prompt_cache_enabled());
        CHECK(c.llm.tool_search_allowed());

        CHECK(c.warnings.empty());
        // The LLM keys are secrets whichever provider is configured.
        CHECK(c.credential_env_names() == std::vector<std::string>{"ANTHROPIC_API_KEY", "OPENAI_API_KEY"});
    }
}

TEST_CASE("config: malformed YAML is a parsing config error with its line", "[config][decode]") {
    CHECK(parse_error("identity: [unterminated") == "parsing config: line 1: end of sequence flow not found");
    CHECK(parse_error("identity: a\nllm:\n  model: x\n   provider: y\n") ==
          "parsing config: line 4: illegal map value");
    CHECK(parse_error("identity: a: b\n") == "parsing config: line 1: illegal map value");
    CHECK(parse_error("llm: {model: x\n") == "parsing config: line 2: end of map flow not found");
}

TEST_CASE("config: the document must be a mapping", "[config][decode]") {
    CHECK(parse_error("- a\n- b\n") ==
          "parsing config: line 1: the document must be a mapping of keys to values, got a list");
    CHECK(parse_error("hello\n") ==
          "parsing config: line 1: the document must be a mapping of keys to values, got \"hello\"");
}

TEST_CASE("config: unknown keys are rejected at every depth with their full path", "[config][decode]") {
    SECTION("top level, no close match") {
        CHECK(parse_error("identity: a\nno_such_key: 1\n") ==
              "parsing config: line 2: unknown key \"no_such_key\" at top level; valid top-level keys are: identity, "
              "application_path, nats_context, system_prompt, include, exclude, global_flags, remote_agents, "
              "remote_tools, expose, harness, llm, mcp_servers");
    }
    SECTION("human_in_the_loop written at the top level belongs under harness") {
        CHECK(parse_error("human_in_the_loop:\n  enabled: true\n") ==
              "parsing config: line 1: unknown key \"human_in_the_loop\" at top level; it is not valid here, did you "
              "mean \"harness.human_in_the_loop\"?");
    }
    SECTION("a typo inside expose.agent.mcp") {
        CHECK(parse_error("expose:\n  agent:\n    mcp:\n      prot: 8080\n") ==
              "parsing config: line 4: unknown key \"expose.agent.mcp.prot\"; did you mean \"expose.agent.mcp.port\"?");
    }
    SECTION("an unrelated key inside expose.agent.mcp lists the valid ones") {
        CHECK(parse_error("expose: {agent: {mcp: {zzz: 1}}}") ==
              "parsing config: line 1: unknown key \"expose.agent.mcp.zzz\"; valid keys in expose.agent.mcp are: "
              "port, address, instructions, confirm_over_mcp, builtins, max_concurrent_tools, tool_timeout, "
              "serve_remote_tools, allowed_origins, max_connections");
    }
    SECTION("the old agent_to_agent switch does not exist") {
        CHECK(parse_error("expose:\n  agent:\n    agent_to_agent: true\n") ==
              "parsing config: line 3: unknown key \"expose.agent.agent_to_agent\"; did you mean "
              "\"expose.agent.a2a.serve_tools\"?");
    }
    SECTION("serve_tools outside expose.agent.a2a") {
        CHECK(parse_error("serve_tools: true\n") ==
              "parsing config: line 1: unknown key \"serve_tools\" at top level; it is not valid here, did you mean "
              "\"expose.agent.a2a.serve_tools\"?");
    }
    SECTION("no transport key in expose.agent.a2a") {
        CHECK(parse_error("expose: {agent: {a2a: {serve_tools: true, transport: nats}}}") ==
              "parsing config: line 1: unknown key \"expose.agent.a2a.transport\"; valid keys in expose.agent.a2a "
              "are: serve_tools, max_concurrent_tools, tool_timeout, prompts");
    }
    SECTION("inside a remote host filter") {
        CHECK(parse_error("remote_tools:\n  - name: a\n  - name: b\n    include:\n      bogus: [x]\n") ==
              "parsing config: line 5: unknown key \"remote_tools[1].include.bogus\"; valid keys in "
              "remote_tools[1].include are: tools, tags");
    }
    SECTION("a typo inside a remote host filter") {
        CHECK(parse_error("remote_tools:\n  - name: a\n    exclude: {tool: [x]}\n") ==
              "parsing config: line 3: unknown key \"remote_tools[0].exclude.tool\"; did you mean "
              "\"remote_tools[0].exclude.tools\"?");
    }
    SECTION("inside harness.memory and harness.sessions") {
        CHECK(parse_error("harness:\n  memory:\n    enabled: true\n    bogus: 1\n") ==
              "parsing config: line 4: unknown key \"harness.memory.bogus\"; valid keys in harness.memory are: "
              "enabled, backend, no_index, options");
        CHECK(parse_error("harness:\n  sessions:\n    bogus: 1\n") ==
              "parsing config: line 3: unknown key \"harness.sessions.bogus\"; valid keys in harness.sessions are: "
              "backend, options");
    }
    SECTION("inside llm.budget") {
        CHECK(parse_error("llm:\n  budget:\n    max_token: 5\n") ==
              "parsing config: line 3: unknown key \"llm.budget.max_token\"; did you mean \"llm.budget.max_tokens\"?");
    }
    SECTION("a key from another block names its home") {
        CHECK(parse_error("llm:\n  confirm_tags: [a]\n") ==
              "parsing config: line 2: unknown key \"llm.confirm_tags\"; it is not valid here, did you mean "
              "\"harness.confirm_tags\"?");
    }
}

TEST_CASE("config: options blocks are not checked for unknown keys", "[config][decode]") {
    const config c =
        parse("harness:\n  memory:\n    enabled: true\n    options: {anything: 1, goes: [x]}\n", mode::lenient);
    CHECK(c.harness.memory.options_json == R"({"anything":1,"goes":["x"]})");
}

TEST_CASE("config: duplicate keys are rejected at every depth", "[config][decode]") {
    CHECK(parse_error("identity: a\nnats_context: x\nidentity: b\n") ==
          "parsing config: line 3: duplicate key \"identity\" (first set on line 1); remove one of them");
    CHECK(parse_error("expose:\n  agent:\n    mcp:\n      port: 1\n      address: x\n      port: 2\n") ==
          "parsing config: line 6: duplicate key \"expose.agent.mcp.port\" (first set on line 4); remove one of them");
    CHECK(parse_error("remote_tools:\n  - name: a\n    exclude:\n      tools: [x]\n      tools: [y]\n") ==
          "parsing config: line 5: duplicate key \"remote_tools[0].exclude.tools\" (first set on line 4); remove one "
          "of them");
    CHECK(parse_error("harness:\n  memory:\n    options:\n      directory: a\n      directory: b\n") ==
          "parsing config: line 5: duplicate key \"harness.memory.options.directory\" (first set on line 4); remove "
          "one of them");
    CHECK(parse_error("harness:\n  sessions:\n    options: {nested: {k: 1, k: 2}}\n") ==
          "parsing config: line 3: duplicate key \"harness.sessions.options.nested.k\" (first set on line 3); remove "
          "one of them");
    // A whole block written twice is a duplicate too, not a merge.
    CHECK(parse_error("llm: {model: a}\nllm: {provider: b}\n") ==
          "parsing config: line 2: duplicate key \"llm\" (first set on line 1); remove one of them");
}

TEST_CASE("config: values of the wrong type name the key and the expected type", "[config][decode]") {
    CHECK(parse_error("harness:\n  no_tui: yes\n") ==
          "parsing config: line 2: harness.no_tui must be a boolean (true or false), got \"yes\"");
    CHECK(parse_error("harness: {no_bell: \"true\"}") ==
          "parsing config: line 1: harness.no_bell must be a boolean (true or false), got the quoted string \"true\"");
    CHECK(parse_error("llm: {no_tool_search: [true]}") ==
          "parsing config: line 1: llm.no_tool_search must be a boolean (true or false), got a list");
    CHECK(parse_error("expose: {agent: {mcp: {port: abc}}}") ==
          "parsing config: line 1: expose.agent.mcp.port must be an integer, got \"abc\"");
    CHECK(parse_error("expose: {agent: {mcp: {port: '8080'}}}") ==
          "parsing config: line 1: expose.agent.mcp.port must be an integer, got the quoted string \"8080\"");
    CHECK(parse_error("llm:\n  budget:\n    max_tokens: 1.5\n") ==
          "parsing config: line 3: llm.budget.max_tokens must be an integer, got \"1.5\"");
    CHECK(parse_error("global_flags: {a: 1}\n") ==
          "parsing config: line 1: global_flags must be a list of strings, got a mapping");
    CHECK(parse_error("global_flags: --context\n") ==
          "parsing config: line 1: global_flags must be a list of strings, got \"--context\"");
    CHECK(parse_error("harness:\n  confirm_tags:\n    - ok\n    - {a: b}\n") ==
          "parsing config: line 4: harness.confirm_tags[1] must be a string, got a mapping");
    CHECK(parse_error("identity: {a: b}\n") == "parsing config: line 1: identity must be a string, got a mapping");
    CHECK(parse_error("expose: [agent]\n") == "parsing config: line 1: expose must be a mapping, got a list");
    CHECK(parse_error("harness: yes\n") == "parsing config: line 1: harness must be a mapping, got \"yes\"");
    CHECK(parse_error("remote_tools: {name: a}\n") ==
          "parsing config: line 1: remote_tools must be a list, got a mapping");
    CHECK(parse_error("remote_tools:\n  - orders\n") ==
          "parsing config: line 2: remote_tools[0] must be a mapping, got \"orders\"");
    CHECK(parse_error("include: [a]\n") == "parsing config: line 1: include must be a mapping, got a list");
}

TEST_CASE("config: integers out of range are rejected", "[config][decode]") {
    CHECK(parse_error("expose: {agent: {mcp: {port: 99999999999}}}") ==
          "parsing config: line 1: expose.agent.mcp.port is out of range: 99999999999");
    CHECK(parse_error("llm: {budget: {max_tokens: 99999999999999999999}}") ==
          "parsing config: line 1: llm.budget.max_tokens is out of range: 99999999999999999999");
    CHECK(parse_error("harness: {knowledge: {top_k: -3000000000}}") ==
          "parsing config: line 1: harness.knowledge.top_k is out of range: -3000000000");
}

TEST_CASE("config: booleans and integers follow YAML 1.2 spellings", "[config][decode]") {
    const config c = parse(
        "harness: {no_tui: True, no_bell: FALSE}\n"
        "llm: {budget: {max_tokens: +300, max_output_tokens: 0x10, max_iterations: 0o17}}\n",
        mode::lenient);
    CHECK(c.harness.no_tui);
    CHECK_FALSE(c.harness.no_bell);
    CHECK(c.llm.budget.max_tokens == 300);
    CHECK(c.llm.budget.max_output_tokens == 16);
    CHECK(c.llm.budget.max_iterations == 15);
    CHECK(parse_error("harness: {no_tui: on}") ==
          "parsing config: line 1: harness.no_tui must be a boolean (true or false), got \"on\"");
}

TEST_CASE("config: explicit null values keep the defaults", "[config][decode]") {
    const config c = parse(
        "identity: ~\nharness:\nllm:\n  provider:\n  budget: {max_tokens: null, call_timeout: ~}\n"
        "global_flags: ~\n",
        mode::lenient);
    CHECK(c.identity == "fisk-ai");
    CHECK(c.llm.provider == "anthropic");
    CHECK(c.llm.budget.max_tokens == 200000);
    CHECK(c.llm.budget.call_timeout == 120s);
    CHECK(c.global_flags.empty());
}

TEST_CASE("config: an mcp key with a null value counts as present", "[config][decode]") {
    SECTION("mcp: with nothing after it") {
        const config c = parse("expose:\n  agent:\n    mcp:\n", mode::mcp);
        REQUIRE(c.mcp.has_value());
        CHECK(c.mcp->port == 0);
        CHECK(c.mcp->confirm_over_mcp == confirm_mode::auto_);
    }
    SECTION("mcp: ~") { CHECK(parse("expose: {agent: {mcp: ~}}", mode::mcp).mcp.has_value()); }
    SECTION("mcp: {}") {
        const config c = parse("expose: {agent: {mcp: {}}}", mode::mcp);
        REQUIRE(c.mcp.has_value());
        CHECK(c.mcp->port == 0);
    }
    SECTION("an expose.agent without mcp") {
        CHECK_FALSE(parse("expose: {agent: {tools: {}}}", mode::lenient).mcp.has_value());
    }
    SECTION("a2a: null is present but not serving") {
        const config c = parse("expose: {agent: {a2a: }}", mode::lenient);
        REQUIRE(c.a2a.has_value());
        CHECK_FALSE(c.a2a->serve_tools);
        CHECK_FALSE(c.a2a_serving_enabled());
    }
}

TEST_CASE("config: raw option blocks become canonical compact JSON", "[config][decode]") {
    SECTION("the documented example") {
        const config c =
            parse("harness:\n  memory:\n    enabled: true\n    options: {directory: /tmp/mem}\n", mode::lenient);
        CHECK(c.harness.memory.options_json == R"({"directory":"/tmp/mem"})");
    }
    SECTION("scalars resolve by the YAML 1.2 core schema, keys sorted") {
        const config c = parse(R"(harness:
  sessions:
    backend: jetstream
    options:
      stream: FISK_SESSIONS
      b: [true, null, ~, "x", 1.5, '2', 0x10, -7, 1e3, 2.5e-7, .inf, yes]
      a: {nested: "line\nbreak \"q\""}
      empty:
)",
                               mode::lenient);
        CHECK(c.harness.sessions.options_json ==
              R"({"a":{"nested":"line\nbreak \"q\""},"b":[true,null,null,"x",1.5,"2",16,-7,1000,2.5e-7,".inf","yes"],)"
              R"("empty":null,"stream":"FISK_SESSIONS"})");
    }
    SECTION("a list block becomes a JSON array") {
        const config c = parse("harness:\n  sessions:\n    options: [a, 1]\n", mode::lenient);
        CHECK(c.harness.sessions.options_json == R"(["a",1])");
    }
    SECTION("a null options block is no options") {
        const config c = parse("harness:\n  sessions:\n    options:\n", mode::lenient);
        CHECK(c.harness.sessions.options_json.empty());
    }
}

TEST_CASE("config: anchors and aliases resolve", "[config][decode]") {
    const config c = parse(R"(include: &sel
  tools: ["^stream_"]
  tags: [""]
expose:
  agent:
    tools:
      include: *sel
)",
                           mode::lenient);
    CHECK(c.include.tools == std::vector<std::string>{"^stream_"});
    CHECK(c.expose_tools_include.tools == std::vector<std::string>{"^stream_"});
    CHECK(c.expose_tools_include.tags == std::vector<std::string>{""});
}

TEST_CASE("config: mapping keys must be plain strings", "[config][decode]") {
    CHECK(parse_error("? [a]\n: 1\n") == "parsing config: line 1: top level: keys must be plain strings, got a list");
}

TEST_CASE("config: strings take any scalar as written", "[config][decode]") {
    const config c =
        parse("identity: 123\nsystem_prompt: |\n  line one\n  line two\nnats_context: true\n", mode::lenient);
    CHECK(c.identity == "123");
    CHECK(c.system_prompt == "line one\nline two\n");
    CHECK(c.nats_context == "true");
}

// Found by the config fuzz test: nine levels of ten aliases inside an options block expand
// to a billion nodes, and converting the block to JSON ran until the fuzzer's timeout.
TEST_CASE("config: an options block whose aliases expand without bound is refused at once", "[config][decode]") {
    std::string yaml = "harness:\n  sessions:\n    options:\n      l0: &a0 [x,x,x,x,x,x,x,x,x,x]\n";
    for (int level = 1; level < 9; ++level) {
        yaml += "      l" + std::to_string(level) + ": &a" + std::to_string(level) + " [";
        for (int i = 0; i < 10; ++i) yaml += (i > 0 ? ",*a" : "*a") + std::to_string(level - 1);
        yaml += "]\n";
    }
    // The work is counted in this thread's CPU time, not the wall clock, so a loaded machine
    // (the suite at -j6 on two cores took 5.2 s) cannot fail it.
    const auto thread_cpu = [] {
        timespec ts{};
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
        return std::chrono::seconds(ts.tv_sec) + std::chrono::nanoseconds(ts.tv_nsec);
    };
    const auto started = thread_cpu();
    CHECK(parse_error(yaml) ==
          "parsing config: line 3: harness.sessions.options: the block expands to more than 1048576 bytes of JSON; "
          "option blocks are small settings: check for aliases (*name) repeated inside it");
    // Refused by the cap, not after expanding the billion nodes: about a second of CPU under
    // the sanitizers, where expanding them all would take about an hour and 4 GB of text.
    CHECK(thread_cpu() - started < 5s);

    SECTION("aliases that stay small still resolve") {
        const config c =
            parse("harness:\n  memory:\n    enabled: true\n    options: {a: &x [1, 2], b: *x}\n", mode::lenient);
        CHECK(c.harness.memory.options_json == R"({"a":[1,2],"b":[1,2]})");
    }
}

// Found by the config libFuzzer run under ASan: an alias inside the anchor it names is a
// cycle, and converting the block to JSON recursed until the stack overflowed.
TEST_CASE("config: an options block that contains itself through an alias is refused", "[config][decode]") {
    CHECK(parse_error("harness:\n  sessions:\n    options:\n      loop: &self [x, *self]\n") ==
          "parsing config: line 3: harness.sessions.options: the block nests more than 32 levels deep; option blocks "
          "are small settings: check for an alias (*name) inside the anchor it names");
    CHECK(parse_error("harness:\n  memory:\n    options: &m {a: *m}\n") ==
          "parsing config: line 3: harness.memory.options: the block nests more than 32 levels deep; option blocks "
          "are small settings: check for an alias (*name) inside the anchor it names");

    SECTION("32 levels are still accepted") {
        std::string nested = "x";
        for (int i = 0; i < 32; ++i) nested = "[" + nested + "]";
        const config c = parse("harness:\n  sessions:\n    options: " + nested + "\n", mode::lenient);
        CHECK(c.harness.sessions.options_json == nested.replace(nested.find('x'), 1, "\"x\""));
    }
}

// yaml-cpp stops at its depth bound with the text "bad file"; the error says what it is.
TEST_CASE("config: a document nested past the reader's depth bound says so", "[config][decode]") {
    const std::string deep = "llm:\n  provider: " + std::string(100000, '[') + std::string(100000, ']') + "\n";
    const auto text = parse_error(deep);
    CHECK_THAT(text, Catch::StartsWith("parsing config: line 2: the document nests deeper than "));
    CHECK_THAT(text, Catch::EndsWith(" levels, the YAML reader's bound; a configuration needs a handful"));
}
