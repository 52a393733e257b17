// The startup banner's exact layout (serve.md §5.8) and the startup tool checks: name
// collisions across kinds and built-ins, and "no tools" (Go texts).

#include <fiskai/serve/banner.hpp>
#include <fiskai/serve/resources.hpp>
#include <fiskai/toolkit/function_tool.hpp>

#include <catch2/catch.hpp>

using namespace fiskai;

namespace {

toolkit::tool_ptr named(const std::string& name) {
    toolkit::function_tool_spec spec;
    spec.name = name;
    spec.description = "A tool";
    spec.exposed = toolkit::exposure{toolkit::surface::agent};
    spec.confirm = toolkit::confirm_posture::not_required;
    spec.handler = [](const boost::json::object&,
                      const toolkit::call_options&) -> boost::asio::awaitable<toolkit::outcome> {
        co_return toolkit::outcome::failure("unused");
    };
    return toolkit::make_function_tool(std::move(spec));
}

}  // namespace

TEST_CASE("the banner lays out identity, model, stores, tools, channels and services", "[serve_banner]") {
    serve::banner_facts f;
    f.version = "0.1.0";
    f.identity = "ops";
    f.provider = "anthropic";
    f.model = "claude-x";
    f.workers = 2;
    f.resources.nats_context = "prod";
    f.resources.nats_url = "nats://n1:4222";
    f.resources.sessions_backend = "jetstream";
    f.resources.sessions_location = "FISK_RUNS";
    f.resources.memory_backend = "jetstream";
    f.resources.memory_location = "FISK_MEMORY";
    f.resources.application_tools = 3;
    f.resources.remote_tools = 1;
    f.resources.mcp_servers = {{"everything", "stdio", 5}, {"docs", "http", 2}};
    f.channel_lines = {"a2a: requests choria.fisk-ai.request.ops"};
    f.service_lines = {serve::a2a_tools_service_line("ops", 3),
                       serve::mcp_client_service_line(f.resources.mcp_servers[0]),
                       serve::mcp_client_service_line(f.resources.mcp_servers[1])};
    CHECK(serve::banner_text(f) ==
          "fisk-ai-serve 0.1.0: serving ops on NATS context prod (nats://n1:4222)\n"
          "  model: anthropic/claude-x  workers: 2  sessions: jetstream FISK_RUNS  memory: jetstream FISK_MEMORY\n"
          "  tools: 11 (3 application, 1 remote, 5 mcp:everything, 2 mcp:docs)\n"
          "channels:\n"
          "  a2a: requests choria.fisk-ai.request.ops\n"
          "services:\n"
          "  a2a tools: discovery choria.fisk-ai.discovery.ops, tools choria.fisk-ai.tool.ops (micro service ops, 3 "
          "tools)\n"
          "  mcp client: everything (stdio, 5 tools)\n"
          "  mcp client: docs (http, 2 tools)\n");

    serve::banner_facts bare;
    bare.version = "0.1.0";
    bare.identity = "solo";
    bare.provider = "openai";
    bare.model = "m";
    bare.workers = 1;
    bare.resources.sessions_backend = "file";
    bare.resources.sessions_location = "/var/runs";
    CHECK(serve::banner_text(bare) ==
          "fisk-ai-serve 0.1.0: serving solo without NATS\n"
          "  model: openai/m  workers: 1  sessions: file /var/runs  memory: off\n"
          "  tools: 0 (0 application, 0 remote)\n"
          "channels:\n  (none)\n"
          "services:\n  (none)\n");
}

TEST_CASE("startup refuses colliding tool names and a worker without tools", "[serve_banner]") {
    config::config cfg;
    CHECK_FALSE(serve::check_tool_names(cfg, {named("a"), named("b")}, "c.yaml"));
    CHECK(serve::check_tool_names(cfg, {named("a"), named("b"), named("a")}, "c.yaml") ==
          "tool name \"a\" is offered twice; rename or filter one of them");

    // The built-ins take their names: a tool called like a HITL or memory tool collides.
    cfg.harness.human_in_the_loop_enabled = true;
    CHECK(serve::check_tool_names(cfg, {named("ask_human_confirm")}, "c.yaml") ==
          "tool name \"ask_human_confirm\" is offered twice; rename or filter one of them");
    cfg.harness.human_in_the_loop_enabled = false;
    cfg.harness.memory.enabled = true;
    CHECK(serve::check_tool_names(cfg, {named("memory_read")}, "c.yaml") ==
          "tool name \"memory_read\" is offered twice; rename or filter one of them");
    // Built-ins alone are tools enough.
    CHECK_FALSE(serve::check_tool_names(cfg, {}, "c.yaml"));

    cfg.harness.memory.enabled = false;
    CHECK(serve::check_tool_names(cfg, {}, "c.yaml") ==
          "no tools available: this agent wraps no application (application_path unset) and enables no built-in or "
          "remote tools; set application_path, or enable harness.knowledge, harness.memory, human_in_the_loop, or "
          "remote_tools in the configuration");
    cfg.application_path = "/bin/app";
    CHECK(serve::check_tool_names(cfg, {}, "/etc/c.yaml") ==
          "no tools available after filtering; check include/exclude in \"/etc/c.yaml\"");
}
