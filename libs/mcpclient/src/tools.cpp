#include <fiskai/mcpclient/tools.hpp>

#include <fmt/format.h>

namespace fiskai::mcpclient {
namespace {

namespace asio = boost::asio;
namespace json = boost::json;

class mcp_tool final : public toolkit::tool {
public:
    mcp_tool(std::shared_ptr<session> s, const listed_tool& listed, std::string local_name)
        : session_(std::move(s)),
          remote_name_(listed.name),
          name_(std::move(local_name)),
          description_(listed.description),
          schema_(listed.input_schema) {}

    const std::string& name() const override { return name_; }
    const std::string& title() const override { return remote_name_; }
    const std::string& description() const override { return description_; }
    const std::string& model_description() const override { return description_; }
    const json::object& input_schema() const override { return schema_; }
    const std::vector<std::string>& tags() const override { return tags_; }
    // Offered to this worker's own agent loop, never re-served over MCP or a2a: the
    // operator trusted this server for this worker's runs only. (With no surface at all
    // the loop, which offers only agent-exposed tools, would never show them to the model.)
    toolkit::exposure exposed() const override { return toolkit::exposure{toolkit::surface::agent}; }
    toolkit::confirm_requirement confirm() const override {
        const auto& server = session_->server();
        if (!server.confirm) return {toolkit::confirm_posture::not_required, {}};
        return {toolkit::confirm_posture::required, fmt::format("mcp:{}", server.name)};
    }
    toolkit::tool_kind kind() const override { return toolkit::tool_kind::mcp; }

    std::string describe_call(const json::value& arguments) const override {
        return mcpclient::describe_call(session_->server().name, remote_name_, arguments);
    }

    // The server's own tool_timeout bounds the call (Amendment 8), not the caller's.
    asio::awaitable<toolkit::outcome> call(json::value arguments, toolkit::call_options) override {
        auto keep = session_;
        co_return co_await keep->call(remote_name_, std::move(arguments), keep->server().tool_timeout);
    }

private:
    std::shared_ptr<session> session_;
    std::string remote_name_;
    std::string name_;
    std::string description_;
    json::object schema_;
    std::vector<std::string> tags_;
};

}  // namespace

toolkit::tool_list make_tools(const std::shared_ptr<session>& s) {
    toolkit::tool_list tools;
    for (const auto& listed : s->tools()) {
        // session::tools() holds only tools whose local names are valid.
        auto local = local_tool_name(s->server().effective_alias(), listed.name);
        if (!local) continue;
        tools.push_back(std::make_shared<mcp_tool>(s, listed, std::move(*local)));
    }
    return tools;
}

}  // namespace fiskai::mcpclient
