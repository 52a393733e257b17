#pragma once
// The fingerprint's hashes and the resume gates, byte-compatible with Go: the hashes are
// taken over Go's encoding/json output, so a C++ and a Go run of one configuration agree.

#include <fiskai/llm/types.hpp>
#include <fiskai/runstate/error.hpp>
#include <fiskai/runstate/records.hpp>

#include <optional>

#include <string>
#include <string_view>
#include <vector>

namespace fiskai::runstate {

// Lowercase hex SHA-256 of `bytes` (Go's HashHex).
[[nodiscard]] std::string hash_hex(std::string_view bytes);

// The JSON array of system blocks as Go marshals a []string, and its hash.
[[nodiscard]] std::string system_blocks_json(const std::vector<std::string>& blocks);
[[nodiscard]] std::string system_hash(const std::vector<std::string>& blocks);

// The JSON array of tool definitions as Go marshals []llm.ToolDef (no JSON tags: keys
// `Name`, `Description`, `InputSchema` (a map, so keys sorted), `DeferLoading`), and its hash.
[[nodiscard]] std::string tools_json(const std::vector<llm::tool_def>& tools);
[[nodiscard]] std::string tools_hash(const std::vector<llm::tool_def>& tools);

// One line per differing field, saved against current (provider excluded):
// `model: a -> b`, `system prompt: changed`, `tool set: changed`, `thinking: a -> b`,
// `max_tokens: a -> b`, `max_iterations: a -> b`.
[[nodiscard]] std::vector<std::string> diff(const fingerprint& saved, const fingerprint& current);
[[nodiscard]] bool equal_ignoring_provider(const fingerprint& saved, const fingerprint& current);

// The resume gates' texts. Provider: `cannot resume "<id>": it was started with provider
// "<a>" but the current configuration uses "<b>"; a run cannot change provider, and
// --force does not apply`. Drift: `cannot resume "<id>", the configuration changed since it
// was saved:` then one indented line per difference, then the --force hint.
// check_resume returns the provider refusal regardless of force, the drift refusal unless
// force is set.
[[nodiscard]] std::string provider_mismatch_text(std::string_view id, std::string_view saved, std::string_view current);
[[nodiscard]] std::string drift_text(std::string_view id, const std::vector<std::string>& differences);
[[nodiscard]] std::optional<std::string> check_resume(std::string_view id, const fingerprint& saved,
                                                      const fingerprint& current, bool force);

}  // namespace fiskai::runstate
