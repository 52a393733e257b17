#pragma once
// The Tool abstraction every serving surface shares: MCP, a2a and (later) the agent loop
// all see a tool through this interface and nothing else.

#include <fiskai/toolkit/outcome.hpp>

#include <boost/asio/awaitable.hpp>
#include <boost/json/fwd.hpp>
#include <boost/json/object.hpp>

#include <chrono>
#include <cstdint>
#include <initializer_list>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace fiskai::toolkit {

class prompter;

// A surface a tool may be served on: an MCP client, a peer agent over a2a, or the
// agent loop's own model. Exposure defaults to none: a tool is served nowhere until it
// says otherwise.
enum class surface : std::uint8_t { mcp, a2a, agent };

class exposure {
public:
    constexpr exposure() noexcept = default;
    constexpr exposure(std::initializer_list<surface> surfaces) noexcept {
        for (const auto s : surfaces) bits_ |= bit(s);
    }

    [[nodiscard]] constexpr bool on(surface s) const noexcept { return (bits_ & bit(s)) != 0; }
    [[nodiscard]] constexpr exposure with(surface s) const noexcept { return exposure(bits_ | bit(s)); }
    [[nodiscard]] constexpr exposure without(surface s) const noexcept {
        return exposure(static_cast<std::uint8_t>(bits_ & ~bit(s)));
    }
    [[nodiscard]] constexpr bool empty() const noexcept { return bits_ == 0; }

    static constexpr exposure none() noexcept { return {}; }
    static constexpr exposure everywhere() noexcept { return {surface::mcp, surface::a2a, surface::agent}; }

    friend constexpr bool operator==(exposure, exposure) noexcept = default;

private:
    constexpr explicit exposure(std::uint8_t bits) noexcept : bits_(bits) {}
    static constexpr std::uint8_t bit(surface s) noexcept {
        return static_cast<std::uint8_t>(1U << static_cast<unsigned>(s));
    }
    std::uint8_t bits_ = 0;
};

// Whether a call needs a human's approval first. `unknown` is a real answer: a tool that
// cannot say is refused by every server, because an absent gate must never be
// indistinguishable from not needing one.
enum class confirm_posture { not_required, required, unknown };

struct confirm_requirement {
    confirm_posture posture = confirm_posture::unknown;
    // The tag that caused the gate (`ai:confirm`, or the first matching confirm tag).
    std::string trigger_tag;
};

// Progress reported from inside a running tool (MCP maps it onto notifications/progress).
struct progress_update {
    double progress = 0;
    std::optional<double> total;
    std::string message;
};

// The base of what one surface lends its calls beyond the common hooks below.
class surface_facilities {
public:
    virtual ~surface_facilities() = default;
};

// What the caller lends a running tool. Everything is optional.
struct call_options {
    // Upper bound on the run; zero means no bound beyond the caller's own cancellation.
    std::chrono::steady_clock::duration timeout = std::chrono::seconds(30);
    // Working directory for a command; empty inherits the server's.
    std::string work_dir;
    // Who can be asked a question. Servers pass the default-deny prompter.
    prompter* asker = nullptr;
    std::function<void(const progress_update&)> on_progress;
    // A log line from inside the tool: level name (`info`, `warning`, ...) and text.
    std::function<void(std::string_view level, std::string_view text)> on_log;
    // What only the calling surface can offer (over MCP: requests to the client, a stream
    // to interrupt), or null. A tool that needs it asks the surface's own library for it by
    // type (mcpserver::client_channel_of), so toolkit knows nothing of any one protocol.
    const surface_facilities* facilities = nullptr;
};

// `mcp`: a tool of an outbound MCP server; unlike `remote` it may be confirm-gated.
enum class tool_kind { command, builtin, function, remote, mcp };

class tool {
public:
    virtual ~tool() = default;

    // The flat name a model addresses the tool by.
    [[nodiscard]] virtual const std::string& name() const = 0;
    // A readable title: the space-joined command path for a command tool.
    [[nodiscard]] virtual const std::string& title() const = 0;
    // For people (the `info` table).
    [[nodiscard]] virtual const std::string& description() const = 0;
    // What models and clients see: a command tool's help plus a trailing `Tags:` line;
    // a function tool's description as written (Go).
    [[nodiscard]] virtual const std::string& model_description() const = 0;
    [[nodiscard]] virtual const boost::json::object& input_schema() const = 0;
    [[nodiscard]] virtual const std::vector<std::string>& tags() const = 0;
    [[nodiscard]] virtual exposure exposed() const = 0;
    [[nodiscard]] virtual confirm_requirement confirm() const = 0;
    [[nodiscard]] virtual tool_kind kind() const = 0;

    // Whether these arguments may be run: nullopt, or why not (an in-band error text).
    // Checked before any approval is asked for. The default accepts anything.
    [[nodiscard]] virtual std::optional<std::string> check_arguments(const boost::json::value& arguments) const;
    // The peer agent a remote tool runs on, for call traces (Go's CallInfo.Agent); empty
    // for every local tool.
    [[nodiscard]] virtual std::string remote_agent() const { return {}; }
    // What a call with these (checked) arguments would do, for approval prompts and logs:
    // the command line for a command (display_command_line: values quoted where needed), the
    // tool's name by default.
    [[nodiscard]] virtual std::string describe_call(const boost::json::value& arguments) const;

    // Runs the tool. The arguments are taken by value: the coroutine may outlive the
    // caller's expression, so it must own what it reads.
    // Failures a caller can reason about (bad arguments, a command that
    // could not start, a timeout) come back as an error outcome, never as an exception.
    // The call stops, and any child process group is killed, when the awaiting
    // coroutine's cancellation slot fires.
    virtual boost::asio::awaitable<outcome> call(boost::json::value arguments, call_options options) = 0;
};

using tool_ptr = std::shared_ptr<tool>;
using tool_list = std::vector<tool_ptr>;

}  // namespace fiskai::toolkit
