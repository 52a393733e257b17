#include <fiskai/serve/banner.hpp>

#include <fmt/format.h>

namespace fiskai::serve {

std::string banner_text(const banner_facts& f) {
    const auto& r = f.resources;
    std::string out;
    if (r.nats_url.empty()) {
        out += fmt::format("fisk-ai-serve {}: serving {} without NATS\n", f.version, f.identity);
    } else {
        out += fmt::format("fisk-ai-serve {}: serving {} on NATS context {} ({})\n", f.version, f.identity,
                           r.nats_context, r.nats_url);
    }
    const std::string memory =
        r.memory_backend.empty() ? std::string("off") : fmt::format("{} {}", r.memory_backend, r.memory_location);
    out += fmt::format("  model: {}/{}  workers: {}  sessions: {} {}  memory: {}\n", f.provider, f.model, f.workers,
                       r.sessions_backend, r.sessions_location, memory);
    std::size_t total = r.application_tools + r.remote_tools;
    std::string kinds = fmt::format("{} application, {} remote", r.application_tools, r.remote_tools);
    for (const auto& m : r.mcp_servers) {
        total += m.tools;
        kinds += fmt::format(", {} mcp:{}", m.tools, m.name);
    }
    out += fmt::format("  tools: {} ({})\n", total, kinds);
    out += "channels:\n";
    if (f.channel_lines.empty()) out += "  (none)\n";
    for (const auto& l : f.channel_lines) out += fmt::format("  {}\n", l);
    out += "services:\n";
    if (f.service_lines.empty()) out += "  (none)\n";
    for (const auto& l : f.service_lines) out += fmt::format("  {}\n", l);
    return out;
}

std::string a2a_tools_service_line(std::string_view identity, std::size_t tools) {
    return fmt::format(
        "a2a tools: discovery choria.fisk-ai.discovery.{0}, tools choria.fisk-ai.tool.{0} (micro service {0}, {1} "
        "tools)",
        identity, tools);
}

std::string mcp_client_service_line(const resource_summary::mcp_server& s) {
    return fmt::format("mcp client: {} ({}, {} tools)", s.name, s.transport, s.tools);
}

}  // namespace fiskai::serve
