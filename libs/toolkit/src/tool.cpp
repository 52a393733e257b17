#include <fiskai/toolkit/tool.hpp>

namespace fiskai::toolkit {

std::optional<std::string> tool::check_arguments(const boost::json::value&) const { return std::nullopt; }

std::string tool::describe_call(const boost::json::value&) const { return name(); }

}  // namespace fiskai::toolkit
