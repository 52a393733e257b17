// fisk-ai-serve run --config FILE [PROMPT...] [--continue TASK] [--chat] [--no-stream] [--json] [-v]
//
// Hosts the agent for one terminal (serve.md §9.1): the hosted config behind a loopback
// nats-server child, then a caller over a2a as `fisk-ai-terminal`.
//
// SEAM(a2aw, a2ac): the a2a channel and the task caller with its terminal front end are
// built on their own branches; until they are merged, run refuses with exit 2 (could not
// start) after checking its arguments.

#include "commands.hpp"

#include <fmt/format.h>

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace fiskai::serve_app {

namespace {

struct run_options {
    std::string config_path;
    std::vector<std::string> prompt;
    std::string continue_task;
    bool chat = false;
    bool no_stream = false;
    bool json = false;
    bool verbose = false;
};

// run's exit code for "could not start or transport failure".
constexpr int run_could_not_start = 2;

boost::asio::awaitable<int> run_run(run_options o) {
    if (o.config_path.empty()) throw std::runtime_error("--config is required: name the fisk-ai YAML configuration");
    fmt::print(stderr,
               "fisk-ai-serve: error: this build of fisk-ai-serve cannot host a run yet (the a2a channel and "
               "caller are not in it); use fisk-ai-serve serve with fisk-ai-a2a ask\n");
    co_return run_could_not_start;
}

}  // namespace

subcommand add_run_command(CLI::App& parent) {
    auto o = std::make_shared<run_options>();
    auto* cmd = parent.add_subcommand("run", "Host the agent on a private local broker and run one task from here");
    cmd->add_option("-c,--config", o->config_path, "The fisk-ai YAML configuration (mode agent; expose is replaced)");
    cmd->add_option("prompt", o->prompt, "The prompt (else stdin when it is not a terminal)");
    cmd->add_option("--continue", o->continue_task, "Continue task TASK (its session) with this prompt");
    cmd->add_flag("--chat", o->chat, "After each answer read the next prompt and continue (empty line or EOF ends)");
    cmd->add_flag("--no-stream", o->no_stream, "Print only the final answer, no progress events");
    cmd->add_flag("--json", o->json, "Print every reply message on stdout, one JSON object per line");
    cmd->add_flag("-v,--verbose", o->verbose, "Log at DEBUG");
    cmd->footer(
        "Exit codes: 0 result; 1 terminal error; 2 could not start or transport failure; 3 refused; 4 suspended "
        "(resume with --continue); 5 idle limit passed; 130 a second Ctrl-C.");
    return {cmd, [o](fiskai::app::runtime&) { return run_run(*o); }};
}

}  // namespace fiskai::serve_app
