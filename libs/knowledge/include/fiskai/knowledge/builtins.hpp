#pragma once
// The knowledge built-ins: knowledge_search (Go's name, schema, description, result shape
// and citations) and knowledge_enumerate (newer than the Go snapshot: the indexed
// documents, paged with an opaque cursor). Both are read-only and declare exposure to the
// agent loop and MCP; the operator's allowlist narrows that.

#include <fiskai/knowledge/store.hpp>
#include <fiskai/toolkit/function_tool.hpp>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace fiskai::knowledge {

inline constexpr std::string_view search_tool_name = "knowledge_search";
inline constexpr std::string_view enumerate_tool_name = "knowledge_enumerate";
// Characters per token used to turn max_injected_tokens into a character budget.
inline constexpr int approx_chars_per_token = 4;
inline constexpr int default_enumerate_limit = 50;
inline constexpr int enumerate_limit_ceiling = 200;

// The two tool specs bound to `s`. A null store gives tools whose every call fails with
// `knowledge store is not configured` (for listing them without a store).
[[nodiscard]] std::vector<toolkit::function_tool_spec> knowledge_tool_specs(std::shared_ptr<store> s);

// The system-prompt note that tells the model the knowledge base exists (Go's RAGSystemNote).
[[nodiscard]] std::string_view knowledge_system_note() noexcept;

// The trace shown for a call: `knowledge_search("<query>")` or with `, top_k=<n>`, the
// query sanitised and capped at 200 runes.
[[nodiscard]] std::string knowledge_search_trace(const boost::json::value& arguments);

// Cursors for knowledge_enumerate: opaque, bound to this process by a random key, so a
// cursor this process never issued is refused instead of being read as a position.
[[nodiscard]] std::string issue_cursor(std::string_view last_path);
// The path a cursor stands for, or nothing when it was never issued.
[[nodiscard]] std::optional<std::string> redeem_cursor(std::string_view cursor);

}  // namespace fiskai::knowledge
