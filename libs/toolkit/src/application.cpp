#include <fiskai/toolkit/application.hpp>
#include <fiskai/toolkit/command_tool.hpp>
#include <fiskai/gocompat/duration.hpp>
#include <fiskai/gocompat/quote.hpp>
#include <fiskai/toolkit/output_capture.hpp>
#include <fiskai/toolkit/process.hpp>

#include <fmt/format.h>

namespace fiskai::toolkit {

boost::asio::awaitable<fisk_application> introspect(std::string application_path,
                                                    std::vector<std::string> secret_env_names,
                                                    std::chrono::steady_clock::duration timeout) {
    process_spec ps;
    ps.executable = application_path;
    ps.arguments = {"--fisk-introspect"};
    ps.environment = scrubbed_environment(secret_env_names);
    ps.timeout = timeout;
    ps.output_cap = max_introspect_bytes;
    ps.capture = capture_mode::head_only;
    auto r = co_await run_process(std::move(ps));

    const auto path = gocompat::quote(application_path);
    using status = process_result::status;
    if (r.state == status::timed_out) {
        throw introspection_error(
            fmt::format("introspecting {} timed out after {}; the binary must respond within this window", path,
                        gocompat::format_duration(timeout)));
    }
    if (r.state == status::cancelled)
        throw introspection_error(fmt::format("introspecting {}: context canceled", path));
    if (r.state == status::start_failed) throw introspection_error(fmt::format("introspecting {}: {}", path, r.error));
    // Before the exit status: a binary that passes the cap is killed there.
    if (r.truncated) {
        throw introspection_error(fmt::format(
            "introspecting {} produced more than {} bytes; the binary must emit a bounded introspection document", path,
            max_introspect_bytes));
    }
    if (r.exit_code != 0) {
        throw introspection_error(r.exit_code > 0 ? fmt::format("introspecting {}: exit status {}", path, r.exit_code)
                                                  : fmt::format("introspecting {}: killed by a signal", path));
    }
    try {
        co_return parse_fisk_model(r.output);
    } catch (const std::exception& e) {
        throw introspection_error(
            fmt::format("introspecting {}: decoding the introspection document: {}", path, e.what()));
    }
}

boost::asio::awaitable<application_tools> load_application_tools(application_options options) {
    application_tools out;
    if (options.application_path.empty()) co_return out;
    out.model = co_await introspect(options.application_path, options.secret_env_names, options.introspect_timeout);
    auto derived = derive_tools(out.model, options.derive);
    auto runtime =
        std::make_shared<command_runtime>(command_runtime{options.application_path, options.secret_env_names});
    for (auto& spec : derived.tools) out.tools.push_back(std::make_shared<command_tool>(std::move(spec), runtime));
    out.dropped = std::move(derived.dropped);
    co_return out;
}

}  // namespace fiskai::toolkit
