#pragma once
// Running a child process the way every tool run and every introspection needs: argv
// only (no shell), stdin from /dev/null, stdout and stderr merged into one capped buffer,
// its own process group, and the whole group killed at timeout, at cancellation, and when
// the leader exits, so no descendant outlives the call.

#include <boost/asio/awaitable.hpp>

#include <chrono>
#include <cstddef>
#include <string>
#include <vector>

namespace fiskai::toolkit {

// How output beyond the cap is kept.
enum class capture_mode {
    head_and_tail,  // tool runs: first half + marker + last half
    head_only,      // introspection: the head, with an "exceeded" flag; the group is killed once
                    // the cap is passed (nothing after the head is kept)
};

struct process_spec {
    std::string executable;                         // a path, or a bare name looked up in PATH
    std::vector<std::string> arguments;             // after the executable
    std::vector<std::string> environment;           // NAME=value entries; the child's whole environment
    std::string work_dir;                           // empty: inherit
    std::chrono::steady_clock::duration timeout{};  // zero: none
    std::size_t output_cap = 65536;
    capture_mode capture = capture_mode::head_and_tail;
    // After the leader exits (and its group is killed), how long to wait for the pipe to
    // close: a descendant that left the group may still hold it.
    std::chrono::steady_clock::duration drain_grace = std::chrono::seconds(2);
};

struct process_result {
    enum class status { exited, timed_out, cancelled, start_failed };
    status state = status::start_failed;
    int exit_code = 0;  // for `exited`: the exit status, or -1 when killed by a signal
    std::string output;
    bool truncated = false;  // head_and_tail: output was cut; head_only: cap exceeded
    std::size_t total_bytes = 0;
    std::string error;  // for start_failed: the OS error text
};

// Awaitable; cancelling the awaiting coroutine (terminal cancellation) kills the group.
boost::asio::awaitable<process_result> run_process(process_spec spec);

// A long-lived child talking over pipes (an MCP server on stdio): the same launch as
// run_process (argv only, its own process group whose id is `pid`, PDEATHSIG, no other
// inherited descriptors), but stdin, stdout and stderr are pipes handed to the caller, who
// owns them and must kill the group and reap the child. timeout and output_cap are unused.
struct piped_child {
    int pid = -1;        // also the process group id; -1 when the start failed
    int stdin_fd = -1;   // write end, close-on-exec
    int stdout_fd = -1;  // read end, close-on-exec
    int stderr_fd = -1;  // read end, close-on-exec
};
[[nodiscard]] piped_child start_piped_child(process_spec spec, std::string& error);

// The parent environment minus credential variables (the fixed provider list plus
// `extra_secret_names`), with LLMFORMAT=1 appended (last one wins). A non-empty `work_dir`
// replaces the inherited PWD (Go): chdir alone leaves the parent's PWD, so a wrapper
// reading $PWD would disagree with getcwd.
[[nodiscard]] std::vector<std::string> scrubbed_environment(const std::vector<std::string>& extra_secret_names = {},
                                                            const std::string& work_dir = {});

// Credential variables always removed from a child's environment.
[[nodiscard]] const std::vector<std::string>& provider_secret_names();

}  // namespace fiskai::toolkit
