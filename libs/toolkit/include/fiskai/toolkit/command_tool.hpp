#pragma once
// A tool backed by one leaf command of the wrapped fisk application.

#include <fiskai/toolkit/derive.hpp>
#include <fiskai/toolkit/tool.hpp>

#include <memory>
#include <string>
#include <vector>

namespace fiskai::toolkit {

struct command_runtime {
    std::string application_path;
    // Operator-named credential variables scrubbed from the child environment, on top of
    // the provider's fixed list.
    std::vector<std::string> secret_env_names;
};

// Validates arguments against the input schema before anything is spawned (an invalid
// call is an error outcome naming the field, and the binary never runs), renders argv,
// runs the command in its own process group, and returns the CommandResult envelope.
// It does not gate: the surface owns the confirm gate, because only it knows who to ask.
class command_tool final : public tool {
public:
    command_tool(command_spec spec, std::shared_ptr<const command_runtime> runtime);
    ~command_tool() override;

    [[nodiscard]] const std::string& name() const override { return spec_.name; }
    [[nodiscard]] const std::string& title() const override { return spec_.title; }
    [[nodiscard]] const std::string& description() const override { return spec_.description; }
    [[nodiscard]] const std::string& model_description() const override { return spec_.model_description; }
    [[nodiscard]] const boost::json::object& input_schema() const override { return spec_.input_schema; }
    [[nodiscard]] const std::vector<std::string>& tags() const override { return spec_.tags; }
    // Command tools may be served on every surface; each surface applies its own policy.
    [[nodiscard]] exposure exposed() const override { return exposure::everywhere(); }
    [[nodiscard]] confirm_requirement confirm() const override { return spec_.confirm; }
    [[nodiscard]] tool_kind kind() const override { return tool_kind::command; }

    boost::asio::awaitable<outcome> call(boost::json::value arguments, call_options options) override;

    [[nodiscard]] const command_spec& spec() const noexcept { return spec_; }
    // nullopt when the arguments satisfy the input schema and render to a command line
    // (no NUL in any string, every property known), else why not.
    [[nodiscard]] std::optional<std::string> check_arguments(const boost::json::value& arguments) const override;
    // The command line a call would run, for approval prompts; throws argv_error for
    // arguments check_arguments refuses.
    [[nodiscard]] std::string describe_call(const boost::json::value& arguments) const override;

private:
    command_spec spec_;
    std::shared_ptr<const command_runtime> runtime_;
    struct validator_holder;
    std::unique_ptr<validator_holder> validator_;
};

}  // namespace fiskai::toolkit
