#pragma once
// The memory built-in tools (memory_list, memory_read, memory_write, memory_delete), the
// system note that introduces them and the index block injected at run start: Go's names,
// schemas, descriptions and result shapes verbatim. The tools are bound to one run's view,
// are served to the agent loop only (never over MCP or A2A) and never ask anyone.

#include <fiskai/memory/store.hpp>
#include <fiskai/toolkit/function_tool.hpp>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace fiskai::memory {

// The four tool specs bound to `v`. A null view gives tools whose every call fails with
// `memory store is not configured` (for listing them without a store).
[[nodiscard]] std::vector<toolkit::function_tool_spec> memory_tool_specs(std::shared_ptr<view> v);
// The same, built.
[[nodiscard]] toolkit::tool_list memory_tools(std::shared_ptr<view> v);

// The system-prompt note describing the tools (Go's MemorySystemNote text).
[[nodiscard]] std::string_view memory_system_note() noexcept;

// The index of stored memories for the system prompt, framed as stored data; each
// description sanitized and capped at 200 runes.
[[nodiscard]] std::string memory_index_block(const std::vector<item>& entries);

// Go's util.SanitizeForTerminal: ANSI escape sequences removed, controls to spaces,
// whitespace collapsed, trimmed, capped at max_runes with `…` appended when cut.
[[nodiscard]] std::string sanitize_for_terminal(std::string_view s, std::size_t max_runes);

}  // namespace fiskai::memory
