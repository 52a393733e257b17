#pragma once
// One tool-call pipeline for every surface that runs tools (the MCP server, the a2a tool
// server, the agent loop). In order:
//
//   1. arguments: null becomes {}, anything but an object is refused;
//   2. the tool's own check (schema, and for a command what no argv can carry);
//   3. the surface's approval step, before any slot is taken, so a human deliberating
//      holds none; a gated tool on a surface without one is refused (fail closed);
//   4. a slot, when the surface bounds concurrency here;
//   5. the call, raced against the deadline for every kind of tool, with an exception
//      turned into a failure outcome;
//   6. the slot freed and the in-flight count restored on every path, then the finish
//      reported with its duration.
//
// Every failure is an in-band outcome; the pipeline never throws for a call's sake.

#include <fiskai/toolkit/outcome.hpp>
#include <fiskai/toolkit/tool.hpp>

#include <boost/asio/awaitable.hpp>
#include <boost/json/value.hpp>

#include <chrono>
#include <cstddef>
#include <functional>
#include <optional>
#include <string>

namespace fiskai::toolkit {

class slot_pool;

struct tool_call_policy {
    // The call's bound, for every kind of tool; zero: none. At the deadline the call is
    // cancelled (a command's process group is killed) and answered with a failure.
    std::chrono::steady_clock::duration timeout = std::chrono::seconds(30);
    // Where an approved call waits for a slot; null when the caller already holds one.
    slot_pool* slots = nullptr;
    // The surface's approval step for a tool whose posture is `required`: nullopt runs the
    // call, an outcome is answered instead. Unset: gated tools are refused.
    std::function<boost::asio::awaitable<std::optional<outcome>>(const tool&, std::string command_line)> approve;
    // Counts calls between taking a slot and finishing (for diagnostics); may be null.
    std::size_t* in_flight = nullptr;
    // Runs beside the call and is cancelled when it ends (an MCP progress heartbeat).
    std::function<boost::asio::awaitable<void>(const tool&, const std::string& command_line)> alongside;
    // Told when an approved call finds every slot busy and starts to wait.
    std::function<void(const tool&, const std::string& command_line)> on_queued;
    // Told when the call starts, and when it has finished and freed its slot.
    std::function<void(const tool&, const std::string& command_line)> on_start;
    std::function<void(const tool&, const std::string& command_line, const outcome&,
                       std::chrono::steady_clock::duration took)>
        on_finish;
    // Whether this surface can carry a deferred question's later answer (the agent loop
    // can; MCP and the a2a tool server cannot, and answer a deferral as an error).
    bool carries_deferral = false;
    // Lent to the tool. Its `timeout` is not used: the deadline above is the one authority.
    call_options call;
};

// Runs one call through the pipeline. The tool is shared so the call may outlive the
// caller's list of tools.
boost::asio::awaitable<outcome> run_tool_call(tool_ptr t, boost::json::value arguments, tool_call_policy policy);

// "running command \"<title>\"" for a command, "running tool \"<name>\"" otherwise: the
// prefix of every failure the pipeline reports about a call that was under way.
[[nodiscard]] std::string running_text(const tool& t);

// The failure of a call stopped at its bound: Go's text first, so peers matching on it
// keep working, then the bound (`... context deadline exceeded (timed out after 30s)`).
[[nodiscard]] std::string deadline_text(const tool& t, std::chrono::steady_clock::duration bound);

}  // namespace fiskai::toolkit
