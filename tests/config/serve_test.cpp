// The fisk-ai-serve keys (serve.md §10, §11.1 and the amendments): defaults, accepted
// values, every refusal text, the serve mode's checks in order, its warnings, and the
// credential variable names.

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

// A serve file with a model and a prompt, so the mode's later checks are reached.
std::string serve_doc(std::string_view rest) { return "system_prompt: hi\nllm: {model: m}\n" + std::string(rest); }

std::string serve_error(std::string_view rest, const mode_options& options = {}) {
    try {
        (void)parse(serve_doc(rest), mode::serve, options);
    } catch (const config_error& e) {
        return e.what();
    }
    return "<no error>";
}

const std::string nothing_to_serve =
    "fisk-ai-serve has nothing to serve: add expose.agent.a2a.prompts, expose.agent.queue or expose.agent.slack to "
    "the config";
const std::string app_required =
    "application_path is required for the a2a server: a2a serves the wrapped application's tools and cannot serve "
    "the built-in tools";
const std::string queue_file_warning =
    "expose.agent.queue with the file session backend: a job redelivered to another host cannot resume its session; "
    "use harness.sessions.backend: jetstream";
const std::string slack_file_warning =
    "expose.agent.slack with the file session backend: only one worker may serve this Slack app";
const std::string mcp_servers_warning = "mcp_servers has no effect on fisk-ai-mcp and fisk-ai-a2a serve";

}  // namespace

TEST_CASE("config: serve keys default when absent", "[config][serve]") {
    const config c = lenient("");
    CHECK(c.serve.workers == 2);
    CHECK(c.serve.work_dir.empty());
    CHECK(c.serve.drain_timeout == 10min);
    CHECK(c.serve.report_timeout == 30s);
    CHECK_FALSE(c.serve.queue.has_value());
    CHECK_FALSE(c.serve.slack.has_value());
    CHECK_FALSE(c.a2a_channel_enabled());
    CHECK_FALSE(c.queue_channel_enabled());
    CHECK_FALSE(c.slack_channel_enabled());
    CHECK(c.mcp_servers.empty());
    CHECK(c.harness.tool_timeout == 0ns);
    CHECK(c.llm.provider == "anthropic");
    CHECK(c.llm.base_url.empty());
    CHECK(c.llm.api_key_env.empty());
    CHECK(c.llm.effective_api_key_env() == "ANTHROPIC_API_KEY");
    CHECK(c.llm.max_retries == 2);
    CHECK_FALSE(c.llm.insecure_http);
}

TEST_CASE("config: expose.agent serve keys: accepted values", "[config][serve]") {
    const config c =
        lenient("expose: {agent: {workers: 256, work_dir: /var/lib/fisk, drain_timeout: 0s, report_timeout: 1m30s}}\n");
    CHECK(c.serve.workers == 256);
    CHECK(c.serve.work_dir == "/var/lib/fisk");
    CHECK(c.serve.drain_timeout == 0ns);  // wait forever
    CHECK(c.serve.report_timeout == 90s);
    CHECK(lenient("expose: {agent: {workers: 1}}").serve.workers == 1);
    // A null value is the default, as for every key.
    CHECK(lenient("expose: {agent: {workers: ~, drain_timeout: ~}}").serve.workers == 2);
}

TEST_CASE("config: expose.agent serve keys: refusals", "[config][serve]") {
    CHECK(parse_error("expose: {agent: {workers: 0}}") == "invalid expose.agent.workers 0: must be between 1 and 256");
    CHECK(parse_error("expose: {agent: {workers: 257}}") ==
          "invalid expose.agent.workers 257: must be between 1 and 256");
    CHECK(parse_error("expose: {agent: {workers: -1}}") ==
          "invalid expose.agent.workers -1: must be between 1 and 256");
    CHECK(parse_error("expose: {agent: {workers: two}}") ==
          "parsing config: line 1: expose.agent.workers must be an integer, got \"two\"");
    CHECK(parse_error("expose: {agent: {workers: \"2\"}}") ==
          "parsing config: line 1: expose.agent.workers must be an integer, got the quoted string \"2\"");
    CHECK(parse_error("expose: {agent: {work_dir: [a]}}") ==
          "parsing config: line 1: expose.agent.work_dir must be a string, got a list");
    CHECK(parse_error("expose: {agent: {drain_timeout: -1s}}") ==
          "invalid expose.agent.drain_timeout \"-1s\": must not be negative");
    CHECK(parse_error("expose: {agent: {drain_timeout: 10 minutes}}") ==
          "invalid expose.agent.drain_timeout \"10 minutes\": time: unknown unit \" minutes\" in duration \"10 "
          "minutes\"");
    CHECK(parse_error("expose: {agent: {report_timeout: 0s}}") ==
          "invalid expose.agent.report_timeout \"0s\": must be positive");
    CHECK(parse_error("expose: {agent: {report_timeout: soon}}") ==
          "invalid expose.agent.report_timeout \"soon\": time: invalid duration \"soon\"");
    CHECK(parse_error("expose: {agent: {wokers: 2}}") ==
          "parsing config: line 1: unknown key \"expose.agent.wokers\"; did you mean \"expose.agent.workers\"?");
    CHECK(parse_error("expose:\n  agent:\n    workers: 2\n    workers: 3\n") ==
          "parsing config: line 4: duplicate key \"expose.agent.workers\" (first set on line 3); remove one of them");
}

TEST_CASE("config: expose.agent.a2a.prompts", "[config][serve]") {
    SECTION("an empty block enables the channel with the defaults") {
        const config c = lenient("expose: {agent: {a2a: {prompts: {}}}}");
        REQUIRE(c.a2a_channel_enabled());
        CHECK_FALSE(c.a2a_serving_enabled());
        CHECK_FALSE(c.a2a->prompts->elicitation);
        CHECK(c.a2a->prompts->question_timeout == 5min);
        CHECK(c.a2a->prompts->accept_window == 60s);
        CHECK(c.warnings.empty());
        // A null block counts as written, like expose.agent.mcp.
        CHECK(lenient("expose: {agent: {a2a: {prompts: ~}}}").a2a_channel_enabled());
    }
    SECTION("accepted values") {
        const config c =
            lenient("expose: {agent: {a2a: {prompts: {elicitation: true, question_timeout: 2m, accept_window: 5s}}}}");
        CHECK(c.a2a->prompts->elicitation);
        CHECK(c.a2a->prompts->question_timeout == 2min);
        CHECK(c.a2a->prompts->accept_window == 5s);
        CHECK(lenient("expose: {agent: {a2a: {prompts: {question_timeout: 30s}}}}").warnings.empty());
    }
    SECTION("a question timeout below 30s is floored with a warning") {
        const config c = lenient("expose: {agent: {a2a: {prompts: {question_timeout: 10s}}}}");
        CHECK(c.a2a->prompts->question_timeout == 30s);
        CHECK(c.warnings == strings{"expose.agent.a2a.prompts.question_timeout 10s is below three keepalive intervals "
                                    "(30s); using 30s"});
    }
    SECTION("refusals") {
        CHECK(parse_error("expose: {agent: {a2a: {prompts: {elicitation: yes}}}}") ==
              "parsing config: line 1: expose.agent.a2a.prompts.elicitation must be a boolean (true or false), got "
              "\"yes\"");
        CHECK(parse_error("expose: {agent: {a2a: {prompts: {question_timeout: 5}}}}") ==
              "invalid expose.agent.a2a.prompts.question_timeout \"5\": time: missing unit in duration \"5\"");
        CHECK(parse_error("expose: {agent: {a2a: {prompts: {accept_window: 0s}}}}") ==
              "invalid expose.agent.a2a.prompts.accept_window \"0s\": must be positive");
        CHECK(parse_error("expose: {agent: {a2a: {prompts: {elicitaton: true}}}}") ==
              "parsing config: line 1: unknown key \"expose.agent.a2a.prompts.elicitaton\"; did you mean "
              "\"expose.agent.a2a.prompts.elicitation\"?");
        CHECK(parse_error("expose: {agent: {a2a: {prompts: true}}}") ==
              "parsing config: line 1: expose.agent.a2a.prompts must be a mapping, got \"true\"");
    }
}

TEST_CASE("config: expose.agent.queue", "[config][serve]") {
    SECTION("an empty block enables the channel with the defaults; the consumer is the identity") {
        const config c = lenient("identity: worker-1\nexpose: {agent: {queue: {}}}");
        REQUIRE(c.queue_channel_enabled());
        CHECK(c.serve.queue->stream == "FISK_WORK");
        CHECK(c.serve.queue->task_store == "FISK_TASKS");
        CHECK(c.serve.queue->consumer == "worker-1");
        CHECK(c.serve.queue->ack_wait == 30s);
        CHECK(c.serve.queue->max_deliver == 5);
        CHECK(lenient("expose: {agent: {queue: ~}}").serve.queue->consumer == "fisk-ai");
    }
    SECTION("accepted values") {
        const config c = lenient(
            "expose: {agent: {queue: {stream: WORK, task_store: TASKS, consumer: pool, ack_wait: 3s, "
            "max_deliver: 100}}}");
        CHECK(c.serve.queue->stream == "WORK");
        CHECK(c.serve.queue->task_store == "TASKS");
        CHECK(c.serve.queue->consumer == "pool");
        CHECK(c.serve.queue->ack_wait == 3s);
        CHECK(c.serve.queue->max_deliver == 100);
        CHECK(lenient("expose: {agent: {queue: {max_deliver: 1}}}").serve.queue->max_deliver == 1);
        CHECK(c.serve.queue->dead_letter.empty());
        CHECK(lenient("expose: {agent: {queue: {dead_letter: FISK_DEAD}}}").serve.queue->dead_letter == "FISK_DEAD");
    }
    SECTION("refusals") {
        CHECK(parse_error("expose: {agent: {queue: {ack_wait: 2s}}}") ==
              "invalid expose.agent.queue.ack_wait \"2s\": must be at least 3s");
        CHECK(parse_error("expose: {agent: {queue: {ack_wait: -3s}}}") ==
              "invalid expose.agent.queue.ack_wait \"-3s\": must be at least 3s");
        CHECK(parse_error("expose: {agent: {queue: {ack_wait: 30}}}") ==
              "invalid expose.agent.queue.ack_wait \"30\": time: missing unit in duration \"30\"");
        CHECK(parse_error("expose: {agent: {queue: {max_deliver: 0}}}") ==
              "invalid expose.agent.queue.max_deliver 0: must be between 1 and 100");
        CHECK(parse_error("expose: {agent: {queue: {max_deliver: 101}}}") ==
              "invalid expose.agent.queue.max_deliver 101: must be between 1 and 100");
        CHECK(parse_error("expose: {agent: {queue: {max_deliver: 5.5}}}") ==
              "parsing config: line 1: expose.agent.queue.max_deliver must be an integer, got \"5.5\"");
        CHECK(parse_error("expose: {agent: {queue: {stream: [a]}}}") ==
              "parsing config: line 1: expose.agent.queue.stream must be a string, got a list");
        const std::string name_rule = ": a JetStream name must not contain '.', '*', '>', '/', '\\' or whitespace";
        CHECK(parse_error("expose: {agent: {queue: {stream: fisk.work}}}") ==
              "invalid expose.agent.queue.stream \"fisk.work\"" + name_rule);
        CHECK(parse_error("expose: {agent: {queue: {task_store: \"TASKS >\"}}}") ==
              "invalid expose.agent.queue.task_store \"TASKS >\"" + name_rule);
        CHECK(parse_error("expose: {agent: {queue: {dead_letter: dead.jobs}}}") ==
              "invalid expose.agent.queue.dead_letter \"dead.jobs\"" + name_rule);
        CHECK(parse_error("expose: {agent: {queue: {consumer: \"a*\"}}}") ==
              "invalid expose.agent.queue.consumer \"a*\"" + name_rule);
        CHECK(parse_error("expose: {agent: {queue: {streem: W}}}") ==
              "parsing config: line 1: unknown key \"expose.agent.queue.streem\"; did you mean "
              "\"expose.agent.queue.stream\"?");
    }
}

TEST_CASE("config: expose.agent.slack", "[config][serve]") {
    SECTION("an empty block enables the channel with the defaults") {
        const config c = lenient("expose: {agent: {slack: {}}}");
        REQUIRE(c.slack_channel_enabled());
        const slack_settings& s = *c.serve.slack;
        CHECK(s.app_token_env == "SLACK_APP_TOKEN");
        CHECK(s.bot_token_env == "SLACK_BOT_TOKEN");
        CHECK(s.api_base_url == "https://slack.com/api");
        CHECK(s.channels.empty());
        CHECK(s.approvers.empty());
        CHECK(s.question_timeout == 10min);
        CHECK(s.max_admitted == 64);
    }
    SECTION("accepted values, lists trimmed and de-duplicated") {
        const config c = lenient(R"(expose:
  agent:
    slack:
      app_token_env: " APP "
      bot_token_env: BOT
      api_base_url: http://127.0.0.1:9999/api
      channels: [C1, " C2", C1, ""]
      approvers: [U1]
      question_timeout: 45s
      max_admitted: 1024
)");
        const slack_settings& s = *c.serve.slack;
        CHECK(s.app_token_env == "APP");
        CHECK(s.bot_token_env == "BOT");
        CHECK(s.api_base_url == "http://127.0.0.1:9999/api");
        CHECK(s.channels == strings{"C1", "C2"});
        CHECK(s.approvers == strings{"U1"});
        CHECK(s.question_timeout == 45s);
        CHECK(s.max_admitted == 1024);
        CHECK(c.warnings.empty());
    }
    SECTION("a question timeout below 30s is floored with a warning") {
        const config c = lenient("expose: {agent: {slack: {question_timeout: 5s}}}");
        CHECK(c.serve.slack->question_timeout == 30s);
        CHECK(c.warnings == strings{"expose.agent.slack.question_timeout 5s is below the minimum (30s); using 30s"});
    }
    SECTION("refusals") {
        CHECK(parse_error("expose: {agent: {slack: {max_admitted: 0}}}") ==
              "invalid expose.agent.slack.max_admitted 0: must be between 1 and 1024");
        CHECK(parse_error("expose: {agent: {slack: {max_admitted: 1025}}}") ==
              "invalid expose.agent.slack.max_admitted 1025: must be between 1 and 1024");
        CHECK(parse_error("expose: {agent: {slack: {channels: C1}}}") ==
              "parsing config: line 1: expose.agent.slack.channels must be a list of strings, got \"C1\"");
        CHECK(parse_error("expose: {agent: {slack: {approvers: [[U1]]}}}") ==
              "parsing config: line 1: expose.agent.slack.approvers[0] must be a string, got a list");
        CHECK(parse_error("expose: {agent: {slack: {question_timeout: 1 hour}}}") ==
              "invalid expose.agent.slack.question_timeout \"1 hour\": time: unknown unit \" hour\" in duration \"1 "
              "hour\"");
        CHECK(parse_error("expose: {agent: {slack: {bot_tokn_env: X}}}") ==
              "parsing config: line 1: unknown key \"expose.agent.slack.bot_tokn_env\"; did you mean "
              "\"expose.agent.slack.bot_token_env\"?");
    }
}

TEST_CASE("config: llm additions", "[config][serve]") {
    SECTION("openai provider: its key variable by default") {
        const config c = lenient(
            "llm: {provider: openai, base_url: http://127.0.0.1:8080/v1, max_retries: 0, "
            "insecure_http: true}");
        CHECK(c.llm.provider == "openai");
        CHECK(c.llm.base_url == "http://127.0.0.1:8080/v1");
        CHECK(c.llm.effective_api_key_env() == "OPENAI_API_KEY");
        CHECK(c.llm.max_retries == 0);
        CHECK(c.llm.insecure_http);
        CHECK(lenient("llm: {max_retries: 10}").llm.max_retries == 10);
    }
    SECTION("an explicit key variable wins") {
        const config c = lenient("llm: {provider: openai, api_key_env: \" LOCAL_KEY \"}");
        CHECK(c.llm.effective_api_key_env() == "LOCAL_KEY");
    }
    SECTION("refusals") {
        CHECK(parse_error("llm: {max_retries: 11}") == "invalid llm.max_retries 11: must be between 0 and 10");
        CHECK(parse_error("llm: {max_retries: -1}") == "invalid llm.max_retries -1: must be between 0 and 10");
        CHECK(parse_error("llm: {max_retries: many}") ==
              "parsing config: line 1: llm.max_retries must be an integer, got \"many\"");
        CHECK(parse_error("llm: {insecure_http: on}") ==
              "parsing config: line 1: llm.insecure_http must be a boolean (true or false), got \"on\"");
        CHECK(parse_error("llm: {base_url: {a: b}}") ==
              "parsing config: line 1: llm.base_url must be a string, got a mapping");
        CHECK(parse_error("llm: {base_uri: x}") ==
              "parsing config: line 1: unknown key \"llm.base_uri\"; did you mean \"llm.base_url\"?");
    }
}

TEST_CASE("config: harness.tool_timeout", "[config][serve]") {
    CHECK(lenient("harness: {tool_timeout: 2m}").harness.tool_timeout == 2min);
    CHECK(lenient("harness: {tool_timeout: 0s}").harness.tool_timeout == 0ns);
    CHECK(parse_error("harness: {tool_timeout: -1s}") == "invalid harness.tool_timeout \"-1s\": must not be negative");
    CHECK(parse_error("harness: {tool_timeout: 1x}") ==
          "invalid harness.tool_timeout \"1x\": time: unknown unit \"x\" in duration \"1x\"");
}

TEST_CASE("config: mcp_servers", "[config][serve]") {
    SECTION("defaults and accepted values") {
        const config c = lenient(R"(mcp_servers:
  - name: files
    command: /usr/bin/mcp-files
    args: [--root, /srv]
    work_dir: /srv
    env: {LOG: debug, EMPTY: ~}
    env_passthrough: [HOME]
  - name: web
    url: https://mcp.example.com/mcp
    headers_env: {Authorization: MCP_TOKEN}
    alias: w
    include: {tools: ["^get_"]}
    exclude: {tools: ["^get_secret$"]}
    confirm: false
    tool_timeout: 2m
    startup_timeout: 5s
)");
        REQUIRE(c.mcp_servers.size() == 2);
        const mcp_server& files = c.mcp_servers[0];
        CHECK(files.name == "files");
        CHECK(files.command == "/usr/bin/mcp-files");
        CHECK(files.args == strings{"--root", "/srv"});
        CHECK(files.work_dir == "/srv");
        CHECK(files.env == std::vector<std::pair<std::string, std::string>>{{"LOG", "debug"}, {"EMPTY", ""}});
        CHECK(files.env_passthrough == strings{"HOME"});
        CHECK(files.url.empty());
        CHECK(files.effective_alias() == "files");
        CHECK(files.confirm);
        CHECK(files.tool_timeout == 60s);
        CHECK(files.startup_timeout == 30s);
        const mcp_server& web = c.mcp_servers[1];
        CHECK(web.url == "https://mcp.example.com/mcp");
        CHECK(web.headers_env == std::vector<std::pair<std::string, std::string>>{{"Authorization", "MCP_TOKEN"}});
        CHECK(web.effective_alias() == "w");
        CHECK(web.include.tools == strings{"^get_"});
        CHECK(web.exclude.tools == strings{"^get_secret$"});
        CHECK_FALSE(web.confirm);
        CHECK(web.tool_timeout == 2min);
        CHECK(web.startup_timeout == 5s);
    }
    SECTION("refusals") {
        CHECK(parse_error("mcp_servers: [{command: x}]") == "mcp_servers[0].name \"\" is invalid");
        CHECK(parse_error("mcp_servers: [{name: a, command: x}, {name: b.c, command: y}]") ==
              "mcp_servers[1].name \"b.c\" is invalid");
        const std::string name64(64, 'n');
        CHECK(lenient("mcp_servers: [{name: " + name64 + ", command: x}]").mcp_servers.at(0).name == name64);
        CHECK(parse_error("mcp_servers: [{name: " + name64 + "n, command: x}]") ==
              "mcp_servers[0].name \"" + name64 + "n\" is invalid");
        CHECK(parse_error("mcp_servers: [{name: a, command: x}, {name: a, url: https://h/}]") ==
              "mcp_servers: duplicate name \"a\"");
        CHECK(parse_error("mcp_servers: [{name: a}]") == "mcp_servers[0] needs exactly one of command or url");
        CHECK(parse_error("mcp_servers: [{name: a, command: x, url: https://h/}]") ==
              "mcp_servers[0] needs exactly one of command or url");
        CHECK(parse_error("mcp_servers: [{name: a, command: x, alias: \"a b\"}]") ==
              "mcp_servers[0].alias \"a b\" is invalid: it must contain only letters, digits, '-' or '_' (it "
              "prefixes the server's tool names)");
        CHECK(parse_error("mcp_servers: [{name: a, command: x, include: {tags: [t]}}]") ==
              "mcp_servers[0].include.tags cannot be honoured: MCP tools carry no tags; filter by tool name with "
              "include.tools instead");
        CHECK(parse_error("mcp_servers: [{name: a, command: x, exclude: {tags: [t]}}]") ==
              "mcp_servers[0].exclude.tags cannot be honoured: MCP tools carry no tags; filter by tool name with "
              "exclude.tools instead");
        CHECK(parse_error("mcp_servers: [{name: a, url: https://h/, headers_env: {Authorization: \"\"}}]") ==
              "mcp_servers[0].headers_env.Authorization names no environment variable");
        CHECK(parse_error("mcp_servers: [{name: a, command: x, tool_timeout: 0s}]") ==
              "invalid mcp_servers[0].tool_timeout \"0s\": must be positive");
        CHECK(parse_error("mcp_servers: [{name: a, command: x, startup_timeout: -1s}]") ==
              "invalid mcp_servers[0].startup_timeout \"-1s\": must be positive");
        CHECK(parse_error("mcp_servers: [{name: a, command: x, confirm: no}]") ==
              "parsing config: line 1: mcp_servers[0].confirm must be a boolean (true or false), got \"no\"");
        CHECK(parse_error("mcp_servers: [{name: a, command: x, env: [A]}]") ==
              "parsing config: line 1: mcp_servers[0].env must be a mapping of names to strings, got a list");
        CHECK(parse_error("mcp_servers: [{name: a, command: x, env: {A: [1]}}]") ==
              "parsing config: line 1: mcp_servers[0].env.A must be a string, got a list");
        CHECK(parse_error("mcp_servers:\n  - name: a\n    command: x\n    env:\n      A: 1\n      A: 2\n") ==
              "parsing config: line 6: duplicate key \"mcp_servers[0].env.A\" (first set on line 5); remove one of "
              "them");
        CHECK(parse_error("mcp_servers: [{name: a, comand: x}]") ==
              "parsing config: line 1: unknown key \"mcp_servers[0].comand\"; did you mean "
              "\"mcp_servers[0].command\"?");
        CHECK(parse_error("mcp_servers: {name: a}") ==
              "parsing config: line 1: mcp_servers must be a list, got a mapping");
    }
}

TEST_CASE("config: serve mode checks in order", "[config][serve][validate]") {
    CHECK(parse_error("system_prompt: hi\nexpose: {agent: {queue: {}}}\n", mode::serve) == "llm.model is required");
    CHECK(parse_error("llm: {model: m}\nexpose: {agent: {queue: {}}}\n", mode::serve) ==
          "system_prompt is required for fisk-ai-serve");
    CHECK(serve_error("") == nothing_to_serve);
    // serve_tools alone serves tools, not tasks.
    CHECK(serve_error("expose: {agent: {a2a: {serve_tools: true}}}\n") == nothing_to_serve);

    const std::string need = "nats_context is required for fisk-ai-serve when ";
    CHECK(serve_error("expose: {agent: {a2a: {prompts: {}}}}\n") == need + "expose.agent.a2a.prompts is set");
    CHECK(serve_error("expose: {agent: {queue: {}}}\n") == need + "expose.agent.queue is set");
    CHECK(serve_error("expose: {agent: {slack: {}, a2a: {serve_tools: true}}}\n") ==
          need + "expose.agent.a2a.serve_tools is set");
    CHECK(serve_error("expose: {agent: {slack: {}}}\nharness: {sessions: {backend: jetstream}}\n") ==
          need + "harness.sessions.backend jetstream is set");
    CHECK(serve_error("expose: {agent: {slack: {}}}\nharness: {memory: {enabled: true, backend: jetstream}}\n") ==
          need + "harness.memory.backend jetstream is set");
    CHECK(serve_error("expose: {agent: {slack: {}}}\nremote_tools: [{name: peer}]\n") == need + "remote_tools is set");
    // The first that applies is named.
    CHECK(serve_error("expose: {agent: {queue: {}, a2a: {prompts: {}}}}\nremote_tools: [{name: peer}]\n") ==
          need + "expose.agent.a2a.prompts is set");
    // A disabled memory's backend is not a reason.
    CHECK(serve_error("expose: {agent: {slack: {}}}\nharness: {memory: {enabled: false, backend: jetstream}}\n") ==
          "<no error>");
    CHECK(serve_error("expose: {agent: {slack: {}}}\n") == "<no error>");

    SECTION("--embedded-broker waives nats_context for the a2a keys only") {
        const mode_options embedded{true};
        CHECK(serve_error("expose: {agent: {a2a: {prompts: {}}}}\n", embedded) == "<no error>");
        CHECK(serve_error("expose: {agent: {a2a: {prompts: {}, serve_tools: true}}}\n", embedded) == app_required);
        CHECK(serve_error("expose: {agent: {a2a: {prompts: {}}, queue: {}}}\n", embedded) ==
              need + "expose.agent.queue is set");
        CHECK(serve_error("expose: {agent: {a2a: {prompts: {}}}}\nremote_tools: [{name: peer}]\n", embedded) ==
              need + "remote_tools is set");
    }
    SECTION("serve_tools keeps its application_path requirement") {
        CHECK(serve_error("nats_context: ngs\nexpose: {agent: {a2a: {prompts: {}, serve_tools: true}}}\n") ==
              app_required);
        CHECK(serve_error("nats_context: ngs\napplication_path: /bin/app\nexpose: {agent: {a2a: {prompts: {}, "
                          "serve_tools: true}}}\n") == "<no error>");
    }
}

TEST_CASE("config: serve mode warnings", "[config][serve][validate]") {
    const config q = parse(serve_doc("nats_context: ngs\nexpose: {agent: {queue: {}}}\n"), mode::serve);
    CHECK(q.warnings == strings{queue_file_warning});
    const config s = parse(serve_doc("expose: {agent: {slack: {}}}\n"), mode::serve);
    CHECK(s.warnings == strings{slack_file_warning});
    const config js =
        parse(serve_doc("nats_context: ngs\nexpose: {agent: {slack: {}, queue: {}}}\nharness: {sessions: {backend: "
                        "jetstream}}\n"),
              mode::serve);
    CHECK(js.warnings.empty());
    // Only serve warns about its channels.
    CHECK(lenient("expose: {agent: {slack: {}, queue: {}}}").warnings.empty());

    const std::string with_servers = "mcp_servers: [{name: a, command: x}]\n";
    CHECK(mode_warnings(lenient(with_servers), mode::mcp) == strings{mcp_servers_warning});
    CHECK(mode_warnings(lenient(with_servers), mode::server) == strings{mcp_servers_warning});
    CHECK(mode_warnings(lenient(with_servers), mode::serve).empty());
    CHECK(mode_warnings(lenient(with_servers), mode::agent).empty());
    CHECK(parse(with_servers + "expose: {agent: {mcp: {}}}\n", mode::mcp).warnings == strings{mcp_servers_warning});
}

TEST_CASE("config: credential names of the serve keys", "[config][serve]") {
    CHECK(lenient("llm: {provider: openai}").credential_env_names() == strings{"OPENAI_API_KEY"});
    CHECK(lenient("llm: {api_key_env: MY_KEY}").credential_env_names() == strings{"MY_KEY", "OPENAI_API_KEY"});
    CHECK(lenient("expose: {agent: {slack: {}}}").credential_env_names() ==
          strings{"ANTHROPIC_API_KEY", "OPENAI_API_KEY", "SLACK_APP_TOKEN", "SLACK_BOT_TOKEN"});
    CHECK(lenient("expose: {agent: {slack: {app_token_env: A, bot_token_env: B}}}").credential_env_names() ==
          strings{"ANTHROPIC_API_KEY", "OPENAI_API_KEY", "A", "B"});
    CHECK(lenient("mcp_servers: [{name: a, url: https://h/, headers_env: {Authorization: TOK, X-Key: \" K2 \"}}, "
                  "{name: b, url: https://g/, headers_env: {Authorization: TOK}}]")
              .credential_env_names() == strings{"ANTHROPIC_API_KEY", "OPENAI_API_KEY", "TOK", "K2"});
}

TEST_CASE("config: the fuzz seed with every serve key is a valid serve file", "[config][serve]") {
    const config c =
        load_file(std::string(FISKAI_SOURCE_DIR) + "/tests/config/fuzz_corpus/serve_full.yaml", mode::serve);
    CHECK(c.serve.workers == 4);
    CHECK(c.serve.queue->consumer == "worker-1");
    CHECK(c.mcp_servers.size() == 2);
    CHECK(c.warnings == strings{"expose.agent.a2a.prompts.question_timeout 10s is below three keepalive intervals "
                                "(30s); using 30s"});
}
