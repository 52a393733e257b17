// Mode validation (A.14 with the seed changes), identities, remote hosts, the annotated
// example and load_file.

#include "helpers.hpp"

#include <fiskai/config/config.hpp>

#include <catch2/catch.hpp>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>
#include <vector>

using namespace fiskai::config;
using namespace std::chrono_literals;
using config_test::minimal_agent;
using config_test::parse_error;
using config_test::validate_error;
using strings = std::vector<std::string>;

namespace {

constexpr mode all_modes[] = {mode::agent, mode::mcp, mode::server, mode::serve, mode::lenient};

const std::string identity_tail =
    " is invalid: it must contain only letters, digits, '-' or '_' (it doubles as a NATS queue group); set an "
    "explicit identity if the application binary name contains other characters";

const std::string global_flags_error =
    "global_flags is set but application_path is not: global flags are the wrapped application's own globals and "
    "have nothing to attach to without an application; remove global_flags or set application_path";

const std::string a2a_not_enabled =
    "a2a serving is not enabled: add 'expose: {agent: {a2a: {serve_tools: true}}}' to the config";
const std::string app_required =
    "application_path is required for the a2a server: a2a serves the wrapped application's tools and cannot serve "
    "the built-in tools";
const std::string mcp_not_enabled =
    "MCP serving is not enabled: add an 'expose.agent.mcp' block to the config (an empty block 'mcp: {}' uses the "
    "defaults)";

// A file that satisfies every mode.
constexpr std::string_view complete = R"(application_path: /usr/bin/nats
nats_context: ngs
system_prompt: hi
llm: {model: m}
expose: {agent: {mcp: {}, a2a: {serve_tools: true, prompts: {}}}}
)";

struct temp_file {
    std::filesystem::path path;
    explicit temp_file(std::string_view content) {
        path = std::filesystem::temp_directory_path() /
               ("fiskai-config-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter()++) + ".yaml");
        std::ofstream(path) << content;
    }
    ~temp_file() {
        std::error_code ec;
        std::filesystem::remove(path, ec);
    }
    temp_file(const temp_file&) = delete;
    temp_file& operator=(const temp_file&) = delete;
    static int& counter() {
        static int n = 0;
        return n;
    }
};

}  // namespace

TEST_CASE("config: a complete file passes every mode", "[config][validate]") {
    for (const mode m : all_modes) CHECK(parse_error(complete, m) == "<no error>");
}

TEST_CASE("config: global_flags need application_path in every mode", "[config][validate]") {
    for (const mode m : all_modes) {
        CHECK(parse_error("global_flags: [--context]\n", m) == global_flags_error);
    }
    // Flags that normalise away leave nothing to attach.
    CHECK(parse_error("global_flags: [\"--\", \" \"]\n", mode::lenient) == "<no error>");
    // Checked before the identity.
    CHECK(parse_error("identity: bad.id\nglobal_flags: [x]\n", mode::lenient) == global_flags_error);
}

TEST_CASE("config: identities outside the pattern are rejected in every mode", "[config][validate]") {
    for (const std::string bad : {"agent 1", "agent.1", "agent*", "agent>", "ag/ent"}) {
        for (const mode m : all_modes) {
            INFO(bad);
            CHECK(parse_error("identity: \"" + bad + "\"\n" + std::string(minimal_agent), m) ==
                  "identity \"" + bad + "\"" + identity_tail);
        }
    }
    CHECK(parse_error("identity: agent_1-prod\n" + std::string(minimal_agent), mode::agent) == "<no error>");
    // Quoted like Go's %q: printable Unicode verbatim, controls escaped.
    CHECK(parse_error("identity: \"caf\u00E9\"\n", mode::lenient) == "identity \"caf\u00E9\"" + identity_tail);
    CHECK(parse_error("identity: \"a\\x01b\\tc\"\n", mode::lenient) == "identity \"a\\x01b\\tc\"" + identity_tail);
    CHECK(parse_error("identity: \"nb\u00A0sp\"\n", mode::lenient) == "identity \"nb\\u00a0sp\"" + identity_tail);
}

TEST_CASE("config: an identity derived from /usr/bin/my.agent fails", "[config][validate]") {
    for (const mode m : all_modes) {
        CHECK(parse_error("application_path: /usr/bin/my.agent\n" + std::string(minimal_agent), m) ==
              "identity \"my.agent\"" + identity_tail);
    }
    // An explicit identity is the documented fix.
    CHECK(parse_error("identity: my-agent\napplication_path: /usr/bin/my.agent\n" + std::string(minimal_agent),
                      mode::agent) == "<no error>");
}

TEST_CASE("config: remote hosts are validated in order in every mode", "[config][validate]") {
    const auto with_hosts = [](std::string_view hosts) {
        return "nats_context: ngs\n" + std::string(minimal_agent) + "remote_tools:\n" + std::string(hosts);
    };
    const std::string missing = "remote_tools host is missing a name";
    const std::string bad_name =
        "remote_tools host name \"bad.name\" is invalid: it must contain only letters, digits, '-' or '_' (it keys "
        "the NATS subjects)";
    const std::string bad_alias =
        "remote_tools host \"ok\" has an invalid alias \"has space\": it must contain only letters, digits, '-' or "
        "'_' (it prefixes imported tool names)";
    const std::string exclude_tags =
        "remote_tools host \"ok\" has an exclude.tags filter, which cannot be honored: discovery does not carry tags, "
        "so a tool excluded by tag would be imported anyway; exclude by tool name instead";

    for (const mode m : all_modes) {
        CHECK(parse_error(with_hosts("  - alias: x\n"), m) == missing);
        CHECK(parse_error(with_hosts("  - ~\n"), m) == missing);
        CHECK(parse_error(with_hosts("  - name: bad.name\n    alias: \"has space\"\n"), m) == bad_name);
        CHECK(parse_error(with_hosts("  - name: ok\n    alias: \"has space\"\n    exclude: {tags: [x]}\n"), m) ==
              bad_alias);
        CHECK(parse_error(with_hosts("  - name: ok\n    exclude: {tags: [x]}\n"), m) == exclude_tags);
        // The first failing host wins.
        CHECK(parse_error(with_hosts("  - name: fine\n  - name: bad.name\n  - {}\n"), m) == bad_name);
    }
    CHECK(parse_error(with_hosts("  - name: ok\n    exclude: {tools: [\"^danger_\"]}\n"), mode::agent) == "<no error>");
    // include.tags is only a warning.
    const config c = parse(with_hosts("  - name: ok\n    include: {tags: [x]}\n"), mode::agent);
    CHECK(c.warnings.size() == 1);
    // Remote hosts are checked before any mode requirement.
    CHECK(parse_error("remote_tools: [{name: bad.name}]\n", mode::server) == bad_name);
}

TEST_CASE("config: agent mode requirements and their order", "[config][validate]") {
    SECTION("remote_tools need a nats_context") {
        CHECK(parse_error("remote_tools: [{name: peer}]\n", mode::agent) ==
              "nats_context is required when remote_tools is set");
        CHECK(parse_error("remote_tools: [{name: peer}]\nexpose: {agent: {mcp: {}}}\n", mode::agent) ==
              "nats_context is required when remote_tools is set");
        CHECK(parse_error("remote_tools: [{name: peer}]\nnats_context: ngs\n" + std::string(minimal_agent),
                          mode::agent) == "<no error>");
    }
    SECTION("the prompt is required unless MCP is exposed, then the model") {
        CHECK(parse_error("llm: {model: m}\n", mode::agent) == "prompt is required unless exposed over MCP");
        CHECK(parse_error("", mode::agent) == "prompt is required unless exposed over MCP");
        CHECK(parse_error("system_prompt: hi\n", mode::agent) == "llm.model is required");
        CHECK(parse_error("expose: {agent: {mcp: {}}}\n", mode::agent) == "llm.model is required");
        CHECK(parse_error("expose: {agent: {mcp: }}\nllm: {model: m}\n", mode::agent) == "<no error>");
        // Enabling a2a serving does not lift the prompt requirement.
        CHECK(parse_error("expose: {agent: {a2a: {serve_tools: true}}}\nllm: {model: m}\n", mode::agent) ==
              "prompt is required unless exposed over MCP");
    }
    SECTION("identity is required unless MCP is exposed (reachable programmatically only)") {
        config c = parse(minimal_agent, mode::agent);
        c.identity.clear();
        CHECK(validate_error(c, mode::agent) == "identity is required unless exposed over MCP");
        c.mcp = mcp_settings{};
        CHECK(validate_error(c, mode::agent) == "<no error>");
        c.system_prompt.clear();
        c.llm.model.clear();
        CHECK(validate_error(c, mode::agent) == "llm.model is required");
    }
}

TEST_CASE("config: mcp mode requires the expose.agent.mcp block and nothing else", "[config][validate]") {
    CHECK(parse_error("", mode::mcp) == mcp_not_enabled);
    CHECK(parse_error(minimal_agent, mode::mcp) == mcp_not_enabled);
    CHECK(parse_error("expose: {agent: {a2a: {serve_tools: true}}}\n", mode::mcp) == mcp_not_enabled);
    CHECK(parse_error("expose: {agent: {mcp: {}}}\n", mode::mcp) == "<no error>");
    CHECK(parse_error("expose:\n  agent:\n    mcp:\n", mode::mcp) == "<no error>");
    // No prompt, model or nats_context needed, even with remote tools.
    CHECK(parse_error("remote_tools: [{name: peer}]\nexpose: {agent: {mcp: {}}}\n", mode::mcp) == "<no error>");
    // The shared checks still run first.
    CHECK(parse_error("identity: a.b\n", mode::mcp) == "identity \"a.b\"" + identity_tail);
}

TEST_CASE("config: server mode: a2a serving, then application_path, then nats_context", "[config][validate]") {
    CHECK(parse_error("application_path: /bin/app\nnats_context: ngs\n", mode::server) == a2a_not_enabled);
    CHECK(parse_error(
              "application_path: /bin/app\nnats_context: ngs\nexpose: {agent: {a2a: {max_concurrent_tools: 4}}}\n",
              mode::server) == a2a_not_enabled);
    CHECK(parse_error("expose: {agent: {a2a: {serve_tools: false}}}\n", mode::server) == a2a_not_enabled);
    CHECK(parse_error("expose: {agent: {a2a: {serve_tools: true}}}\n", mode::server) == app_required);
    CHECK(parse_error("application_path: /bin/app\nexpose: {agent: {a2a: {serve_tools: true}}}\n", mode::server) ==
          "nats_context is required for the a2a server");
    // No prompt or model needed.
    const config c = parse(
        "application_path: /bin/app\nnats_context: ngs\nexpose: {agent: {a2a: {serve_tools: true}}}\n", mode::server);
    CHECK(c.a2a_serving_enabled());
    CHECK(c.identity == "app");
}

TEST_CASE("config: lenient mode runs only the shared checks", "[config][validate]") {
    CHECK(parse_error("", mode::lenient) == "<no error>");
    CHECK(parse_error("remote_tools: [{name: peer}]\n", mode::lenient) == "<no error>");
    CHECK(parse_error("remote_tools: [{name: \"\"}]\n", mode::lenient) == "remote_tools host is missing a name");
}

TEST_CASE("config: validate_for_mode can be called again on a parsed config", "[config][validate]") {
    const config c = parse(minimal_agent, mode::agent);
    CHECK(validate_error(c, mode::agent) == "<no error>");
    CHECK(validate_error(c, mode::lenient) == "<no error>");
    CHECK(validate_error(c, mode::mcp) == mcp_not_enabled);
    CHECK(validate_error(c, mode::server) == a2a_not_enabled);
    CHECK(validate_error(c, mode::serve) ==
          "fisk-ai-serve has nothing to serve: add expose.agent.a2a.prompts, expose.agent.queue or "
          "expose.agent.slack to the config");
}

TEST_CASE("config: the annotated example parses to the documented values", "[config][validate]") {
    const std::string path = std::string(FISKAI_SOURCE_DIR) + "/tests/config/data/annotated.yaml";
    for (const mode m : all_modes) CHECK_NOTHROW((void)load_file(path, m));

    const config c = load_file(path, mode::agent);
    CHECK(c.identity == "nats-ops");
    CHECK(c.application_path == "/usr/local/bin/nats");
    CHECK(c.nats_context == "ngs");
    CHECK(c.system_prompt == "You manage NATS JetStream streams using tools.\n");
    CHECK(c.include.tools == strings{"^stream_", "^consumer_info$"});
    CHECK(c.include.tags == strings{"scope:read", ""});
    CHECK(c.exclude.tools == strings{"^stream_rm$"});
    CHECK(c.exclude.tags == strings{"scope:system"});
    CHECK(c.global_flags == strings{"context"});

    REQUIRE(c.remote_tools.size() == 1);
    CHECK(c.remote_tools[0].name == "orders-db");
    CHECK(c.remote_tools[0].alias == "db");
    CHECK(c.remote_tools[0].effective_alias() == "db");
    CHECK(c.remote_tools[0].include.tools == strings{"^order_"});
    CHECK(c.remote_tools[0].exclude.tools == strings{"_delete$"});
    CHECK(c.warnings.empty());

    REQUIRE(c.a2a.has_value());
    CHECK(c.a2a_serving_enabled());
    CHECK(c.a2a->limits.max_concurrent_tools == 2);
    CHECK(c.a2a->limits.tool_timeout == 30s);

    REQUIRE(c.mcp.has_value());
    CHECK(c.mcp->port == 8080);
    CHECK(c.mcp->address == "127.0.0.1");
    CHECK(c.mcp->instructions == "These tools wrap the NATS CLI.\n");
    CHECK(c.mcp->confirm_over_mcp == confirm_mode::auto_);
    CHECK(c.mcp->builtins == strings{"knowledge_search", "knowledge_enumerate"});
    CHECK(c.mcp->limits.max_concurrent_tools == 2);
    CHECK(c.mcp->limits.tool_timeout == 30s);
    CHECK_FALSE(c.mcp->serve_remote_tools);
    CHECK(c.mcp->allowed_origins == strings{"https://ops.example.com"});
    CHECK(c.expose_tools_include.empty());
    CHECK(c.expose_tools_exclude.tools == strings{"^stream_edit$"});

    CHECK(c.harness.human_in_the_loop_enabled);
    CHECK(c.harness.confirm_tags == strings{"impact:rw"});
    CHECK_FALSE(c.harness.no_tui);
    CHECK_FALSE(c.harness.no_bell);
    CHECK(c.harness.memory.enabled);
    CHECK(c.harness.memory.backend == "file");
    CHECK(c.harness.memory.index_enabled());
    CHECK(c.harness.memory.options_json == R"({"directory":"memory/nats-ops"})");
    CHECK(c.harness.sessions.backend == "file");
    CHECK(c.harness.sessions.options_json == R"({"directory":"/var/lib/fisk-ai/runs"})");
    const auto& k = c.harness.knowledge;
    CHECK(k.enabled);
    CHECK(k.paths == strings{"docs"});
    CHECK(k.directory == "knowledge/nats-ops");
    CHECK(k.top_k == 5);
    CHECK(k.max_injected_tokens == 6000);
    REQUIRE(k.embeddings.has_value());
    CHECK(k.embeddings->base_url == "http://127.0.0.1:1234/v1");
    CHECK(k.embeddings->model == "text-embedding-x");
    CHECK(k.embeddings->api_key_env == "EMBED_KEY");
    CHECK(k.embeddings->timeout == 30s);
    CHECK(k.embeddings->query_prefix.empty());
    CHECK(k.embeddings->document_prefix.empty());
    CHECK(c.credential_env_names() == strings{"EMBED_KEY", "ANTHROPIC_API_KEY", "OPENAI_API_KEY"});

    CHECK(c.llm.model == "claude-sonnet-4-6");
    CHECK(c.llm.provider == "anthropic");
    CHECK(c.llm.budget.max_tokens == 200000);
    CHECK(c.llm.budget.max_output_tokens == 0);
    CHECK(c.llm.budget.max_iterations == 50);
    CHECK(c.llm.budget.call_timeout == 120s);
    CHECK_FALSE(c.llm.thinking_enabled);
    CHECK(c.llm.prompt_cache_enabled());
    CHECK(c.llm.tool_search_allowed());
}

TEST_CASE("config: load_file reports read failures with the path", "[config][validate]") {
    CHECK_THROWS_WITH(load_file("/nonexistent/fisk-ai.yaml", mode::agent),
                      "reading config \"/nonexistent/fisk-ai.yaml\": open /nonexistent/fisk-ai.yaml: no such file or "
                      "directory");
    const std::string dir = std::filesystem::temp_directory_path().string();
    CHECK_THROWS_WITH(load_file(dir, mode::lenient),
                      "reading config \"" + dir + "\": read " + dir + ": is a directory");
}

TEST_CASE("config: load_file parses and validates the file's content", "[config][validate]") {
    const temp_file good(minimal_agent);
    CHECK(load_file(good.path.string(), mode::agent).llm.model == "m");
    CHECK_THROWS_WITH(load_file(good.path.string(), mode::mcp), mcp_not_enabled);

    const temp_file bad("identity: [unterminated");
    CHECK_THROWS_WITH(load_file(bad.path.string(), mode::lenient),
                      "parsing config: line 1: end of sequence flow not found");
}
