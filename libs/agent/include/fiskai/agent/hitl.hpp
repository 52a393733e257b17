#pragma once
// The human-in-the-loop built-ins (ask_human_confirm, ask_human_select, ask_human_input)
// and their system note: Go's names, schemas, descriptions and input errors verbatim
// (they are inside the fingerprint's hashes). Made per run; each call asks the prompter
// the run lends it. A `silent` reply (nobody answered in the window) is a deferral.

#include <fiskai/toolkit/tool.hpp>

#include <string>
#include <vector>

namespace fiskai::agent {

// The three tools, agent surface only, never gated.
[[nodiscard]] toolkit::tool_list hitl_tools();

// The note naming `names` (empty: "").
[[nodiscard]] std::string hitl_system_note(const std::vector<std::string>& names);

// The deferral reason the model reads (serve.md §3.6).
[[nodiscard]] const std::string& deferral_reason();

}  // namespace fiskai::agent
