#include <fiskai/toolkit/builtins.hpp>
#include <fiskai/gocompat/quote.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

namespace fiskai::toolkit {

void builtin_registry::add(function_tool_spec spec) {
    if (find(spec.name))
        throw std::invalid_argument(fmt::format("built-in {} is registered twice", gocompat::quote(spec.name)));
    spec.kind = tool_kind::builtin;
    // make_function_tool refuses a spec without an exposure and a confirm posture, so a
    // built-in cannot arrive at "served nowhere" (or anywhere) by forgetting.
    tools_.push_back(make_function_tool(std::move(spec)));
}

tool_ptr builtin_registry::find(const std::string& name) const {
    auto it = std::find_if(tools_.begin(), tools_.end(), [&](const tool_ptr& t) { return t->name() == name; });
    return it == tools_.end() ? nullptr : *it;
}

tool_list builtin_registry::served_on(surface s, const std::vector<std::string>& allowlist) const {
    tool_list out;
    for (const auto& t : tools_) {
        // The declaration is the ceiling; the allowlist can only narrow it.
        if (t->exposed().on(s) && std::find(allowlist.begin(), allowlist.end(), t->name()) != allowlist.end()) {
            out.push_back(t);
        }
    }
    return out;
}

}  // namespace fiskai::toolkit
