#pragma once
// A session's tools as toolkit tools: `<alias>_<tool>`, kind mcp, exposed nowhere,
// confirm-gated with trigger tag `mcp:<name>` unless the server's `confirm` is false.

#include <fiskai/mcpclient/session.hpp>
#include <fiskai/toolkit/tool.hpp>

#include <memory>

namespace fiskai::mcpclient {

// One tool per entry of session->tools(); each holds the session (shared).
[[nodiscard]] toolkit::tool_list make_tools(const std::shared_ptr<session>& s);

}  // namespace fiskai::mcpclient
