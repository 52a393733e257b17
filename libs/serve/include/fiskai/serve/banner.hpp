#pragma once
// The startup banner on stderr (serve.md §5.8). Pure text from facts: the app gathers the
// channel and service lines (each channel describes itself) and the resources' summary.

#include <fiskai/serve/resources.hpp>

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace fiskai::serve {

struct banner_facts {
    std::string version;
    std::string identity;
    std::string provider;
    std::string model;
    std::size_t workers = 0;
    resource_summary resources;
    std::vector<std::string> channel_lines;  // without indentation
    std::vector<std::string> service_lines;  // without indentation
};

// The whole banner, each line ending in a newline.
[[nodiscard]] std::string banner_text(const banner_facts& facts);

// `a2a tools: discovery choria.fisk-ai.discovery.<id>, tools choria.fisk-ai.tool.<id> (micro service <id>, <k> tools)`
[[nodiscard]] std::string a2a_tools_service_line(std::string_view identity, std::size_t tools);
// `mcp client: <name> (<stdio|http>, <k> tools)`
[[nodiscard]] std::string mcp_client_service_line(const resource_summary::mcp_server& server);

}  // namespace fiskai::serve
