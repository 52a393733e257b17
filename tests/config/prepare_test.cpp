// Preparation: defaults, normalisation, duration parsing and their error texts (A.2,
// A.7, A.11, A.12, A.13), plus the small accessors.

#include "helpers.hpp"

#include <fiskai/config/config.hpp>

#include <catch2/catch.hpp>

#include <chrono>
#include <string>
#include <vector>

using namespace fiskai::config;
using namespace std::chrono_literals;
using config_test::parse_error;
using strings = std::vector<std::string>;

namespace {

config lenient(std::string_view yaml) { return parse(yaml, mode::lenient); }

std::string mcp_block(std::string_view body) { return "expose:\n  agent:\n    mcp:\n" + std::string(body); }

}  // namespace

TEST_CASE("config: identity defaults to the application's base name, else fisk-ai", "[config][prepare]") {
    CHECK(lenient("application_path: /usr/bin/nats\n").identity == "nats");
    CHECK(lenient("application_path: nats\n").identity == "nats");
    CHECK(lenient("application_path: /opt/tools/\n").identity == "tools");
    CHECK(lenient("identity: explicit\napplication_path: /usr/bin/nats\n").identity == "explicit");
    CHECK(lenient("nats_context: x\n").identity == "fisk-ai");
    CHECK(lenient("identity: ops\n").knowledge_directory() == "knowledge/ops");
}

TEST_CASE("config: confirm_tags are trimmed, emptied and de-duplicated in order", "[config][prepare]") {
    const config c = lenient(R"(harness: {confirm_tags: ["impact:rw", " impact:rw ", "", "   ", "admin", "admin"]})");
    CHECK(c.harness.confirm_tags == strings{"impact:rw", "admin"});
    // Trimming is Unicode-aware, like Go's strings.TrimSpace.
    const config u = lenient("harness: {confirm_tags: [\"\u00A0admin\u3000\", \"admin\", \"\\t\\n\"]}");
    CHECK(u.harness.confirm_tags == strings{"admin"});
}

TEST_CASE("config: global_flags are trimmed, undashed, emptied and de-duplicated", "[config][prepare]") {
    const config c = lenient(R"(application_path: /bin/app
global_flags: ["--context", "context", " server ", "", "-", "---timeout", "\ttimeout"])");
    CHECK(c.global_flags == strings{"context", "server", "timeout"});
}

TEST_CASE("config: confirm_over_mcp is case and space insensitive", "[config][prepare]") {
    CHECK(lenient(mcp_block("      confirm_over_mcp: \"  Always  \"\n")).mcp->confirm_over_mcp == confirm_mode::always);
    CHECK(lenient(mcp_block("      confirm_over_mcp: \" ALWAYS \"\n")).mcp->confirm_over_mcp == confirm_mode::always);
    CHECK(lenient(mcp_block("      confirm_over_mcp: never\n")).mcp->confirm_over_mcp == confirm_mode::never);
    CHECK(lenient(mcp_block("      confirm_over_mcp: Auto\n")).mcp->confirm_over_mcp == confirm_mode::auto_);
    CHECK(lenient(mcp_block("      confirm_over_mcp: \"\"\n")).mcp->confirm_over_mcp == confirm_mode::auto_);
    CHECK(lenient(mcp_block("      port: 1\n")).mcp->confirm_over_mcp == confirm_mode::auto_);
    CHECK(to_string(confirm_mode::auto_) == "auto");
    CHECK(to_string(confirm_mode::always) == "always");
    CHECK(to_string(confirm_mode::never) == "never");
}

TEST_CASE("config: an unknown confirm_over_mcp quotes the raw value", "[config][prepare]") {
    CHECK(parse_error(mcp_block("      confirm_over_mcp: sometimes\n")) ==
          "invalid confirm_over_mcp \"sometimes\": must be auto, always or never");
    CHECK(parse_error(mcp_block("      confirm_over_mcp: \" Sometimes\\t\"\n")) ==
          "invalid confirm_over_mcp \" Sometimes\\t\": must be auto, always or never");
}

TEST_CASE("config: MCP settings are kept verbatim", "[config][prepare]") {
    const config c = lenient(mcp_block(R"(      port: 9090
      address: 0.0.0.0
      instructions: "Use with care."
      serve_remote_tools: true
      allowed_origins: ["https://app.example.com", "http://localhost:3000"]
      max_connections: 32
)"));
    REQUIRE(c.mcp.has_value());
    CHECK(c.mcp->max_connections == 32);
    CHECK(c.mcp->effective_max_connections() == 32);
    CHECK(c.mcp->port == 9090);
    CHECK(c.mcp->address == "0.0.0.0");
    CHECK(c.mcp->instructions == "Use with care.");
    CHECK(c.mcp->serve_remote_tools);
    CHECK(c.mcp->allowed_origins == strings{"https://app.example.com", "http://localhost:3000"});

    const config d = lenient("expose: {agent: {mcp: {}}}");
    CHECK(d.mcp->port == 0);
    CHECK(d.mcp->address.empty());
    CHECK(d.mcp->instructions.empty());
    CHECK_FALSE(d.mcp->serve_remote_tools);
    CHECK(d.mcp->allowed_origins.empty());
    CHECK(d.mcp->builtins.empty());
    CHECK(d.mcp->effective_max_connections() == 256);
}

TEST_CASE("config: expose.agent.mcp.max_connections is bounded", "[config][prepare]") {
    CHECK(parse_error(mcp_block("      max_connections: -1\n")) ==
          "invalid expose.agent.mcp.max_connections -1: must be 0 (the default, 256) to 65536");
    CHECK(parse_error(mcp_block("      max_connections: 70000\n")) ==
          "invalid expose.agent.mcp.max_connections 70000: must be 0 (the default, 256) to 65536");
}

TEST_CASE("config: server limits parse for MCP and a2a", "[config][prepare]") {
    const config c = lenient(R"(expose:
  agent:
    mcp: {max_concurrent_tools: 8, tool_timeout: 45s}
    a2a: {serve_tools: true, max_concurrent_tools: 4, tool_timeout: 1m30s}
)");
    CHECK(c.mcp->limits.max_concurrent_tools == 8);
    CHECK(c.mcp->limits.tool_timeout == 45s);
    CHECK(c.mcp->limits.effective_concurrency() == 8);
    CHECK(c.mcp->limits.effective_timeout() == 45s);
    CHECK(c.a2a->serve_tools);
    CHECK(c.a2a->limits.max_concurrent_tools == 4);
    CHECK(c.a2a->limits.tool_timeout == 90s);

    SECTION("unset limits are zero and mean the defaults") {
        const config d = lenient("expose: {agent: {mcp: {}, a2a: {}}}");
        CHECK(d.mcp->limits.max_concurrent_tools == 0);
        CHECK(d.mcp->limits.tool_timeout == 0s);
        CHECK(d.mcp->limits.effective_concurrency() == 2);
        CHECK(d.mcp->limits.effective_timeout() == 30s);
        CHECK(d.a2a->limits.max_concurrent_tools == 0);
        CHECK(d.a2a->limits.tool_timeout == 0s);
    }
    SECTION("explicit zero is accepted and means the defaults") {
        const config d = lenient("expose: {agent: {mcp: {max_concurrent_tools: 0, tool_timeout: 0s}}}");
        CHECK(d.mcp->limits.max_concurrent_tools == 0);
        CHECK(d.mcp->limits.tool_timeout == 0s);
        CHECK(d.mcp->limits.effective_timeout() == 30s);
    }
}

TEST_CASE("config: the limits validator edges", "[config][prepare]") {
    for (const std::string path : {"mcp", "a2a"}) {
        INFO(path);
        const auto doc = [&](std::string_view body) {
            return "expose: {agent: {" + path + ": {" + std::string(body) + "}}}";
        };
        const std::string prefix = "invalid expose.agent." + path;
        CHECK(parse_error(doc("max_concurrent_tools: -1")) ==
              prefix + ".max_concurrent_tools -1: must not be negative");
        CHECK(parse_error(doc("max_concurrent_tools: 0")) == "<no error>");
        CHECK(parse_error(doc("max_concurrent_tools: 1")) == "<no error>");
        CHECK(parse_error(doc("max_concurrent_tools: 1024")) == "<no error>");
        CHECK(parse_error(doc("max_concurrent_tools: 1025")) ==
              prefix + ".max_concurrent_tools 1025: must not exceed 1024");
        CHECK(parse_error(doc("max_concurrent_tools: 100000")) ==
              prefix + ".max_concurrent_tools 100000: must not exceed 1024");
        CHECK(parse_error(doc("tool_timeout: 0s")) == "<no error>");
        CHECK(parse_error(doc("tool_timeout: -1s")) == prefix + ".tool_timeout \"-1s\": must not be negative");
        CHECK(parse_error(doc("tool_timeout: abc")) ==
              prefix + ".tool_timeout \"abc\": time: invalid duration \"abc\"");
        CHECK(parse_error(doc("tool_timeout: not-a-duration")) ==
              prefix + ".tool_timeout \"not-a-duration\": time: invalid duration \"not-a-duration\"");
        CHECK(parse_error(doc("tool_timeout: 30")) ==
              prefix + ".tool_timeout \"30\": time: missing unit in duration \"30\"");
        // The count is checked before the timeout.
        CHECK(parse_error(doc("max_concurrent_tools: -1, tool_timeout: abc")) ==
              prefix + ".max_concurrent_tools -1: must not be negative");
    }
    const config c = lenient("expose: {agent: {mcp: {max_concurrent_tools: 1024}}}");
    CHECK(c.mcp->limits.effective_concurrency() == 1024);
}

TEST_CASE("config: builtins are normalised and limited to the knowledge tools", "[config][prepare]") {
    const std::string knowledge = "harness: {knowledge: {enabled: true}}\n";
    SECTION("duplicates and whitespace collapse") {
        const config c =
            lenient(knowledge + mcp_block(R"(      builtins: ["knowledge_search", " knowledge_search ", "", "  "])"
                                          "\n"));
        CHECK(c.mcp->builtins == strings{"knowledge_search"});
    }
    SECTION("knowledge_enumerate is exposable too") {
        const config c = lenient(
            knowledge + mcp_block("      builtins: [knowledge_enumerate, knowledge_search, knowledge_enumerate]\n"));
        CHECK(c.mcp->builtins == strings{"knowledge_enumerate", "knowledge_search"});
    }
    SECTION("only empty entries need no knowledge") {
        CHECK(lenient(mcp_block("      builtins: [\"\", \" \"]\n")).mcp->builtins.empty());
    }
    SECTION("any other name is rejected, naming the entry") {
        const std::string tail =
            " cannot be exposed over MCP; the only exposable built-ins are the read-only knowledge_search and "
            "knowledge_enumerate (the memory and human_in_the_loop built-ins are never exposable because they need "
            "operator state or interaction)";
        CHECK(parse_error(knowledge + mcp_block("      builtins: [ask_human_confirm]\n")) ==
              "expose.agent.mcp.builtins: \"ask_human_confirm\"" + tail);
        CHECK(parse_error(knowledge + mcp_block("      builtins: [knowledge_search, \" frobnicate \"]\n")) ==
              "expose.agent.mcp.builtins: \"frobnicate\"" + tail);
        // Checked before the knowledge requirement.
        CHECK(parse_error(mcp_block("      builtins: [memory_write]\n")) ==
              "expose.agent.mcp.builtins: \"memory_write\"" + tail);
    }
    SECTION("knowledge must be enabled") {
        CHECK(parse_error(mcp_block("      builtins: [knowledge_search]\n")) ==
              "expose.agent.mcp.builtins lists knowledge_search but knowledge is not enabled; add a harness.knowledge "
              "block with 'enabled: true' or remove knowledge_search from builtins");
        CHECK(parse_error("harness: {knowledge: {enabled: false}}\n" +
                          mcp_block("      builtins: [knowledge_enumerate]\n")) ==
              "expose.agent.mcp.builtins lists knowledge_enumerate but knowledge is not enabled; add a "
              "harness.knowledge block with 'enabled: true' or remove knowledge_enumerate from builtins");
        CHECK(parse_error(mcp_block("      builtins: [knowledge_search, knowledge_enumerate]\n")) ==
              "expose.agent.mcp.builtins lists knowledge_search and knowledge_enumerate but knowledge is not enabled; "
              "add a harness.knowledge block with 'enabled: true' or remove knowledge_search and knowledge_enumerate "
              "from builtins");
    }
}

TEST_CASE("config: prepare fails in the documented order", "[config][prepare]") {
    // confirm_over_mcp, then builtins, then MCP limits, then a2a limits, then the LLM
    // budget, then the embeddings timeout.
    std::string doc = R"(expose:
  agent:
    mcp: {confirm_over_mcp: bad, builtins: [nope], max_concurrent_tools: -1}
    a2a: {max_concurrent_tools: -2}
llm: {budget: {max_tokens: -3, call_timeout: soon}}
harness: {knowledge: {enabled: true, embeddings: {timeout: xyz}}}
)";
    CHECK(parse_error(doc) == "invalid confirm_over_mcp \"bad\": must be auto, always or never");
    doc.replace(doc.find("confirm_over_mcp: bad, "), 23, "");
    CHECK(parse_error(doc).rfind("expose.agent.mcp.builtins: \"nope\"", 0) == 0);
    doc.replace(doc.find("builtins: [nope], "), 18, "");
    CHECK(parse_error(doc) == "invalid expose.agent.mcp.max_concurrent_tools -1: must not be negative");
    doc.replace(doc.find("max_concurrent_tools: -1"), 24, "");
    CHECK(parse_error(doc) == "invalid expose.agent.a2a.max_concurrent_tools -2: must not be negative");
    doc.replace(doc.find("max_concurrent_tools: -2"), 24, "");
    CHECK(parse_error(doc) == "invalid llm max_tokens -3: must not be negative");
    doc.replace(doc.find("max_tokens: -3, "), 16, "");
    CHECK(parse_error(doc) == "invalid llm call_timeout \"soon\": time: invalid duration \"soon\"");
    doc.replace(doc.find("call_timeout: soon"), 18, "");
    CHECK(parse_error(doc) == "invalid knowledge.embeddings.timeout \"xyz\": time: invalid duration \"xyz\"");
}

TEST_CASE("config: the LLM budget: defaults, negatives and call_timeout", "[config][prepare]") {
    SECTION("defaults for a minimal config") {
        const config c = lenient("llm: {model: m}");
        CHECK(c.llm.budget.max_tokens == 200000);
        CHECK(c.llm.budget.max_output_tokens == 0);
        CHECK(c.llm.budget.max_iterations == 50);
        CHECK(c.llm.budget.call_timeout == 120s);
    }
    SECTION("zero means the default for max_tokens and max_iterations only") {
        const config c = lenient("llm: {budget: {max_tokens: 0, max_output_tokens: 0, max_iterations: 0}}");
        CHECK(c.llm.budget.max_tokens == 200000);
        CHECK(c.llm.budget.max_output_tokens == 0);
        CHECK(c.llm.budget.max_iterations == 50);
    }
    SECTION("explicit values are kept") {
        const config c =
            lenient("llm: {budget: {max_tokens: 1000, max_output_tokens: 4096, max_iterations: 7, call_timeout: 90s}}");
        CHECK(c.llm.budget.max_tokens == 1000);
        CHECK(c.llm.budget.max_output_tokens == 4096);
        CHECK(c.llm.budget.max_iterations == 7);
        CHECK(c.llm.budget.call_timeout == 90s);
    }
    SECTION("each negative field is named") {
        CHECK(parse_error("llm: {budget: {max_tokens: -1}}") == "invalid llm max_tokens -1: must not be negative");
        CHECK(parse_error("llm: {budget: {max_output_tokens: -2}}") ==
              "invalid llm max_output_tokens -2: must not be negative");
        CHECK(parse_error("llm: {budget: {max_iterations: -3}}") ==
              "invalid llm max_iterations -3: must not be negative");
        CHECK(parse_error("llm: {budget: {max_iterations: -3, max_output_tokens: -2}}") ==
              "invalid llm max_output_tokens -2: must not be negative");
    }
    SECTION("call_timeout must parse and lie in (0, 24h]") {
        CHECK(parse_error("llm: {budget: {call_timeout: not-a-duration}}") ==
              "invalid llm call_timeout \"not-a-duration\": time: invalid duration \"not-a-duration\"");
        CHECK(parse_error("llm: {budget: {call_timeout: 5 s}}") ==
              "invalid llm call_timeout \"5 s\": time: unknown unit \" s\" in duration \"5 s\"");
        CHECK(parse_error("llm: {budget: {call_timeout: 0s}}") ==
              "invalid llm call_timeout \"0s\": must be more than 0s and at most 24h0m0s");
        CHECK(parse_error("llm: {budget: {call_timeout: -5s}}") ==
              "invalid llm call_timeout \"-5s\": must be more than 0s and at most 24h0m0s");
        CHECK(parse_error("llm: {budget: {call_timeout: 2562047h}}") ==
              "invalid llm call_timeout \"2562047h\": must be more than 0s and at most 24h0m0s");
        CHECK(parse_error("llm: {budget: {call_timeout: 24h0m0.000000001s}}") ==
              "invalid llm call_timeout \"24h0m0.000000001s\": must be more than 0s and at most 24h0m0s");
        CHECK(lenient("llm: {budget: {call_timeout: 24h}}").llm.budget.call_timeout == 24h);
        CHECK(lenient("llm: {budget: {call_timeout: 1ns}}").llm.budget.call_timeout == 1ns);
    }
}

TEST_CASE("config: LLM switches and provider", "[config][prepare]") {
    const config c = lenient(
        "llm: {model: claude, provider: openai, thinking: {enabled: true}, no_prompt_cache: true, no_tool_search: "
        "true}");
    CHECK(c.llm.model == "claude");
    CHECK(c.llm.provider == "openai");
    CHECK(c.llm.thinking_enabled);
    CHECK(c.llm.no_prompt_cache);
    CHECK_FALSE(c.llm.prompt_cache_enabled());
    CHECK(c.llm.no_tool_search);
    CHECK_FALSE(c.llm.tool_search_allowed());
    CHECK(lenient("llm: {provider: \"\"}").llm.provider == "anthropic");
}

TEST_CASE("config: the embeddings timeout", "[config][prepare]") {
    const std::string base = "harness:\n  knowledge:\n    enabled: true\n    embeddings:\n";
    CHECK(lenient(base + "      model: m\n").harness.knowledge.embeddings->timeout == 30s);
    CHECK(lenient(base).harness.knowledge.embeddings->timeout == 30s);
    CHECK(lenient(base + "      timeout: 45s\n").harness.knowledge.embeddings->timeout == 45s);
    CHECK(parse_error(base + "      timeout: xyz\n") ==
          "invalid knowledge.embeddings.timeout \"xyz\": time: invalid duration \"xyz\"");
    CHECK(parse_error(base + "      timeout: 0s\n") == "invalid knowledge.embeddings.timeout \"0s\": must be positive");
    CHECK(parse_error(base + "      timeout: \"0\"\n") ==
          "invalid knowledge.embeddings.timeout \"0\": must be positive");
    CHECK(parse_error(base + "      timeout: -1s\n") ==
          "invalid knowledge.embeddings.timeout \"-1s\": must be positive");
    // Checked whenever the block exists, even with knowledge disabled.
    CHECK(parse_error("harness: {knowledge: {embeddings: {timeout: 1}}}") ==
          "invalid knowledge.embeddings.timeout \"1\": time: missing unit in duration \"1\"");
}

TEST_CASE("config: knowledge settings", "[config][prepare]") {
    const config c = lenient(R"(identity: ops
harness:
  knowledge:
    enabled: true
    paths: [docs, runbooks]
    directory: /srv/knowledge
    top_k: 50
    max_injected_tokens: 0
    embeddings:
      base_url: http://127.0.0.1:1234/v1
      model: text-embedding-x
      api_key_env: EMBED_KEY
      query_prefix: "q: "
      document_prefix: "{title}: "
)");
    const auto& k = c.harness.knowledge;
    CHECK(k.enabled);
    CHECK(k.paths == strings{"docs", "runbooks"});
    CHECK(k.directory == "/srv/knowledge");
    CHECK(c.knowledge_directory() == "/srv/knowledge");
    CHECK(k.top_k == 50);
    CHECK(k.effective_top_k() == 20);
    CHECK(k.max_injected_tokens == 0);
    CHECK(k.effective_max_injected_tokens() == 6000);
    REQUIRE(k.embeddings.has_value());
    CHECK(k.vector_tier());
    CHECK(k.embeddings->base_url == "http://127.0.0.1:1234/v1");
    CHECK(k.embeddings->model == "text-embedding-x");
    CHECK(k.embeddings->api_key_env == "EMBED_KEY");
    CHECK(k.embeddings->query_prefix == "q: ");
    CHECK(k.embeddings->document_prefix == "{title}: ");

    CHECK(lenient("harness: {knowledge: {top_k: -1}}").harness.knowledge.effective_top_k() == 5);
    CHECK(lenient("harness: {knowledge: {top_k: 7}}").harness.knowledge.effective_top_k() == 7);
}

TEST_CASE("config: credential environment names", "[config][prepare]") {
    // The LLM keys are always named: a key in the environment is a secret whichever
    // provider the file selects.
    const strings llm_keys{"ANTHROPIC_API_KEY", "OPENAI_API_KEY"};
    CHECK(lenient("harness: {knowledge: {enabled: true}}").credential_env_names() == llm_keys);
    CHECK(
        lenient("harness: {knowledge: {enabled: true, embeddings: {api_key_env: EMBED_KEY}}}").credential_env_names() ==
        strings{"EMBED_KEY", "ANTHROPIC_API_KEY", "OPENAI_API_KEY"});
    CHECK(lenient("harness: {knowledge: {enabled: true, embeddings: {api_key_env: \"  KEY  \"}}}")
              .credential_env_names() == strings{"KEY", "ANTHROPIC_API_KEY", "OPENAI_API_KEY"});
    CHECK(lenient("harness: {knowledge: {enabled: true, embeddings: {api_key_env: \"   \"}}}").credential_env_names() ==
          llm_keys);
    // Without the vector tier the variable is not a credential this agent uses.
    CHECK(lenient("harness: {knowledge: {enabled: false, embeddings: {api_key_env: KEY}}}").credential_env_names() ==
          llm_keys);
}

TEST_CASE("config: memory settings", "[config][prepare]") {
    SECTION("disabled reports no backend and no options") {
        const config c = lenient("harness: {memory: {backend: jetstream, options: {bucket: B}}}");
        CHECK_FALSE(c.harness.memory.enabled);
        CHECK(c.harness.memory.backend.empty());
        CHECK(c.harness.memory.options_json.empty());
        CHECK_FALSE(c.harness.memory.index_enabled());
    }
    SECTION("enabled defaults to the file backend with the index on") {
        const config c = lenient("harness: {memory: {enabled: true}}");
        CHECK(c.harness.memory.backend == "file");
        CHECK(c.harness.memory.index_enabled());
        CHECK(c.harness.memory.options_json.empty());
    }
    SECTION("no_index turns the index off") {
        const config c = lenient("harness: {memory: {enabled: true, no_index: true}}");
        CHECK(c.harness.memory.no_index);
        CHECK_FALSE(c.harness.memory.index_enabled());
    }
    SECTION("jetstream options are captured") {
        const config c =
            lenient("harness: {memory: {enabled: true, backend: jetstream, options: {bucket: MEM, prefix: \"\"}}}");
        CHECK(c.harness.memory.backend == "jetstream");
        CHECK(c.harness.memory.options_json == R"({"bucket":"MEM","prefix":""})");
    }
}

TEST_CASE("config: session settings", "[config][prepare]") {
    CHECK(lenient("").harness.sessions.backend == "file");
    CHECK(lenient("harness: {sessions: {}}").harness.sessions.backend == "file");
    const config c = lenient("harness: {sessions: {backend: jetstream, options: {stream: FISK_SESSIONS}}}");
    CHECK(c.harness.sessions.backend == "jetstream");
    CHECK(c.harness.sessions.options_json == R"({"stream":"FISK_SESSIONS"})");
}

TEST_CASE("config: apply_state_dir folds --state-dir into the file backend", "[config][prepare]") {
    SECTION("empty is a no-op") {
        config c = lenient("harness: {sessions: {backend: jetstream, options: {stream: S}}}");
        apply_state_dir(c, "");
        CHECK(c.harness.sessions.backend == "jetstream");
        CHECK(c.harness.sessions.options_json == R"({"stream":"S"})");
    }
    SECTION("replaces the file options") {
        config c = lenient("harness: {sessions: {options: {directory: /old, other: 1}}}");
        apply_state_dir(c, "/var/lib/runs \"x\"");
        CHECK(c.harness.sessions.backend == "file");
        CHECK(c.harness.sessions.options_json == R"({"directory":"/var/lib/runs \"x\""})");
    }
    SECTION("rejects a non-file backend and leaves the config alone") {
        config c = lenient("harness: {sessions: {backend: jetstream, options: {stream: S}}}");
        REQUIRE_THROWS_WITH(apply_state_dir(c, "/tmp/runs"),
                            "--state-dir applies only to the file session backend, but harness.sessions.backend is "
                            "\"jetstream\": remove --state-dir, or set harness.sessions.backend to \"file\"");
        CHECK(c.harness.sessions.backend == "jetstream");
        CHECK(c.harness.sessions.options_json == R"({"stream":"S"})");
    }
}

TEST_CASE("config: harness switches", "[config][prepare]") {
    const config c = lenient("harness: {human_in_the_loop: {enabled: true}, no_tui: true, no_bell: true}");
    CHECK(c.harness.human_in_the_loop_enabled);
    CHECK(c.harness.no_tui);
    CHECK(c.harness.no_bell);
}

TEST_CASE("config: remote hosts, remote agents and their warnings", "[config][prepare]") {
    const config c = lenient(R"(remote_agents:
  - {name: planner, alias: plan}
remote_tools:
  - name: orders-db
    alias: db
    include: {tools: ["^order_"], tags: ["scope:read"]}
    exclude: {tools: ["_delete$"]}
  - name: metrics
    include: {tools: ["^m_"]}
)");
    REQUIRE(c.remote_agents.size() == 1);
    CHECK(c.remote_agents[0].name == "planner");
    CHECK(c.remote_agents[0].alias == "plan");
    REQUIRE(c.remote_tools.size() == 2);
    CHECK(c.remote_tools[0].name == "orders-db");
    CHECK(c.remote_tools[0].effective_alias() == "db");
    CHECK(c.remote_tools[0].include.tools == strings{"^order_"});
    CHECK(c.remote_tools[0].include.tags == strings{"scope:read"});
    CHECK(c.remote_tools[0].exclude.tools == strings{"_delete$"});
    CHECK(c.remote_tools[1].effective_alias() == "metrics");
    CHECK(c.remote_tools[1].exclude.empty());
    // Only the host with include.tags is warned about, and it is not an error.
    CHECK(c.warnings == strings{"remote agent \"orders-db\" include filter uses tags, which discovery does not carry; "
                                "the tag filter was ignored (filter by tool name instead)"});
}

TEST_CASE("config: filters keep patterns and tags as written", "[config][prepare]") {
    const config c = lenient(R"(include: {tools: ["^stream_", "^consumer_info$"], tags: ["scope:read", ""]}
exclude: {tools: ["^stream_rm$"]}
expose: {agent: {tools: {include: {tags: [a]}, exclude: {tools: ["^x$"]}}}}
)");
    CHECK(c.include.tools == strings{"^stream_", "^consumer_info$"});
    CHECK(c.include.tags == strings{"scope:read", ""});
    CHECK(c.exclude.tools == strings{"^stream_rm$"});
    CHECK(c.exclude.tags.empty());
    CHECK(c.expose_tools_include.tags == strings{"a"});
    CHECK(c.expose_tools_exclude.tools == strings{"^x$"});
    CHECK(lenient("include: {}").include.empty());
    CHECK_FALSE(filter{{}, {""}}.empty());
}
