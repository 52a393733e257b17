#include <fiskai/toolkit/argv.hpp>
#include <fiskai/toolkit/command_tool.hpp>
#include <fiskai/gocompat/quote.hpp>
#include <fiskai/toolkit/output_capture.hpp>
#include <fiskai/toolkit/process.hpp>
#include <fiskai/toolkit/schema_validator.hpp>
#include <fiskai/toolkit/tool_call.hpp>

#include <boost/json/value.hpp>

#include <fmt/format.h>

namespace fiskai::toolkit {

struct command_tool::validator_holder {
    schema_validator validator;
};

command_tool::command_tool(command_spec spec, std::shared_ptr<const command_runtime> runtime)
    : spec_(std::move(spec)),
      runtime_(std::move(runtime)),
      validator_(std::make_unique<validator_holder>(validator_holder{schema_validator(spec_.input_schema)})) {}

command_tool::~command_tool() = default;

std::optional<std::string> command_tool::check_arguments(const boost::json::value& arguments) const {
    const boost::json::value& input = arguments.is_null() ? boost::json::value(boost::json::object()) : arguments;
    if (auto problems = validator_->validator.validate(input)) {
        return fmt::format("invalid arguments for tool {}: {}", gocompat::quote(spec_.name), *problems);
    }
    try {
        (void)render_argv(spec_, input);
    } catch (const argv_error& e) {
        return e.what();
    }
    return std::nullopt;
}

std::string command_tool::describe_call(const boost::json::value& arguments) const {
    return display_command_line(render_argv(spec_, arguments));
}

boost::asio::awaitable<outcome> command_tool::call(boost::json::value arguments, call_options options) {
    // Validate before anything is spawned: a model that sent a wrong call gets a message
    // naming the field, and the binary never runs.
    if (auto problem = check_arguments(arguments)) co_return outcome::failure(std::move(*problem));

    std::vector<std::string> argv;
    try {
        argv = render_argv(spec_, arguments);
    } catch (const argv_error& e) {
        co_return outcome::failure(e.what());
    }
    if (runtime_->application_path.empty()) {
        co_return outcome::failure(
            fmt::format("command {} has no application path to execute", gocompat::quote(spec_.title)));
    }

    process_spec ps;
    ps.executable = runtime_->application_path;
    ps.arguments = argv;
    ps.environment = scrubbed_environment(runtime_->secret_env_names, options.work_dir);
    ps.work_dir = options.work_dir;
    ps.timeout = options.timeout;
    ps.output_cap = max_tool_output_bytes;
    ps.capture = capture_mode::head_and_tail;
    auto r = co_await run_process(std::move(ps));

    const auto running = fmt::format("running command {}", gocompat::quote(spec_.title));
    switch (r.state) {
        case process_result::status::exited:
            co_return outcome::from_command(
                command_result{command_line(argv), r.exit_code, std::move(r.output), r.truncated});
        case process_result::status::timed_out: co_return outcome::failure(deadline_text(*this, options.timeout));
        case process_result::status::cancelled:
            co_return outcome::failure(fmt::format("{}: context canceled", running));
        case process_result::status::start_failed: co_return outcome::failure(fmt::format("{}: {}", running, r.error));
    }
    co_return outcome::failure(running);
}

}  // namespace fiskai::toolkit
