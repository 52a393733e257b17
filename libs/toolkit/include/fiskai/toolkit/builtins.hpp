#pragma once
// The built-in tool registry. Each built-in declares where it may be served; the
// declaration is the ceiling and an operator allowlist can only narrow it.

#include <fiskai/toolkit/function_tool.hpp>

#include <string>
#include <vector>

namespace fiskai::toolkit {

class builtin_registry {
public:
    // Throws std::invalid_argument when the spec has not declared its exposure and confirm
    // posture, or when the name is already registered.
    void add(function_tool_spec spec);

    [[nodiscard]] const tool_list& all() const noexcept { return tools_; }
    [[nodiscard]] tool_ptr find(const std::string& name) const;
    // The built-ins that declare exposure on `s` and are named in `allowlist`, in
    // registration order.
    [[nodiscard]] tool_list served_on(surface s, const std::vector<std::string>& allowlist) const;

private:
    tool_list tools_;
};

}  // namespace fiskai::toolkit
