#pragma once
// An MCP server over streamable HTTP: sessions, JSON-RPC dispatch, tools with the
// elicitation gate, progress, logging and cancellation. Transport-facing entry points
// live in http_handler.hpp (mount in your own Beast server) and listener.hpp (a listener
// this library owns); this header stays free of Beast.

#include <fiskai/gocompat/log.hpp>
#include <fiskai/mcpserver/protocol.hpp>
#include <fiskai/toolkit/tool.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/json/array.hpp>
#include <boost/json/object.hpp>

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace fiskai::mcpserver {

// How a tool that needs approval is handled (config key confirm_over_mcp).
enum class confirm_mode {
    automatic,  // ask clients that can elicit; run ungated, with a warning, for the rest
    always,     // ask clients that can elicit; refuse the call for the rest
    never,      // never ask: approval is left to the client's own UI
};

struct server_options {
    std::string name = "fisk-ai";  // serverInfo.name; also names the server in approval prompts
    std::string version = "0.1.0";
    std::string instructions;  // sent in the initialize result when non-empty
    confirm_mode confirm = confirm_mode::automatic;
    std::size_t max_concurrent_calls = 2;
    std::chrono::steady_clock::duration call_timeout = std::chrono::seconds(30);
    // Applied to each approval request, outside the call timeout and before a slot is
    // taken, so a human deciding holds no execution slot.
    std::chrono::steady_clock::duration elicitation_timeout = std::chrono::minutes(2);
    // Origin values accepted besides loopback ones (http(s)://localhost|127.0.0.1|[::1]).
    std::vector<std::string> allowed_origins;
    // Refuse a non-loopback Host header (DNS rebinding). The listener sets this when it is
    // bound to a loopback address.
    bool require_loopback_host = true;
    std::chrono::steady_clock::duration session_idle_timeout = std::chrono::minutes(30);
    std::size_t max_sessions = 256;
    std::size_t max_body_bytes = 1024 * 1024;
    std::size_t page_size = 500;  // tools/list page size
    // A call that carries a progress token gets a progress notification when the command
    // starts and then at this interval while it runs.
    std::chrono::steady_clock::duration progress_interval = std::chrono::seconds(5);
    // An SSE comment on idle streams, so a vanished client is noticed.
    std::chrono::steady_clock::duration keepalive_interval = std::chrono::seconds(15);
    // Operator records (stderr in the app). Never sent to clients; the MCP levels map
    // onto the logger's (notice to info, critical and above to error).
    gocompat::logger log;
};

// A resource a client can list and read. `read` returns the `contents` array of a
// ReadResourceResult (each item {uri, mimeType?, text | blob}).
struct resource {
    std::string uri;
    std::string name;
    std::string title;
    std::string description;
    std::string mime_type;
    std::function<boost::asio::awaitable<boost::json::array>(std::string uri)> read;
};

// A parameterised resource (RFC 6570 level 1: `{name}` segments). `read` gets the
// concrete URI and the values of the template's variables.
struct resource_template {
    std::string uri_template;
    std::string name;
    std::string title;
    std::string description;
    std::string mime_type;
    std::function<boost::asio::awaitable<boost::json::array>(std::string uri, boost::json::object variables)> read;
};

struct prompt_argument {
    std::string name;
    std::string description;
    bool required = false;
};

// A prompt template. `get` returns a GetPromptResult ({description?, messages}).
struct prompt {
    std::string name;
    std::string title;
    std::string description;
    std::vector<prompt_argument> arguments;
    std::function<boost::asio::awaitable<boost::json::object>(boost::json::object arguments)> get;
};

// completion/complete: gets `ref` and `argument` (and `context` when sent) and returns
// the `completion` object ({values, total?, hasMore?}).
using completion_handler = std::function<boost::asio::awaitable<boost::json::object>(
    boost::json::object ref, boost::json::object argument, boost::json::object context)>;

// What a tool called over MCP can do with the client that called it. A tool reaches it
// through client_channel_of(options); over any other surface that returns null.
class client_channel : public toolkit::surface_facilities {
public:
    // Sends a request to the client (`sampling/createMessage`, `elicitation/create`, ...)
    // on this call's stream and waits for its result. Throws std::runtime_error with the
    // reason when the client cannot or does not answer.
    virtual boost::asio::awaitable<boost::json::object> request(std::string method,
                                                                boost::json::object params) const = 0;
    // Drops the connection carrying this call's messages without ending the call; the
    // client resumes the stream with GET and Last-Event-ID.
    virtual void interrupt_stream() const = 0;
};

// The MCP client behind a call, or null when the call did not come over MCP.
[[nodiscard]] const client_channel* client_channel_of(const toolkit::call_options& options) noexcept;

// What registration kept and why it skipped anything.
struct registration {
    std::vector<std::string> served;    // tool names in registration order
    std::vector<std::string> warnings;  // one line per skipped tool
    std::size_t confirm_count = 0;      // served tools that need approval
};

// Refuses a built-in whose name a command tool already holds. Serving calls this first so
// the collision is a hard error; the server itself only skips the loser.
void check_builtin_collisions(const toolkit::tool_list& commands, const toolkit::tool_list& builtins);

class server {
public:
    struct impl;

    // Commands are registered before built-ins; the first tool to claim a name keeps it.
    // Skipped: tools that do not declare MCP exposure, cannot report their confirm posture,
    // or have a name MCP rejects.
    server(boost::asio::any_io_executor ex, server_options options, toolkit::tool_list commands,
           toolkit::tool_list builtins = {});
    ~server();
    server(const server&) = delete;
    server& operator=(const server&) = delete;

    [[nodiscard]] const registration& registered() const noexcept;

    // Resources, prompts and completion, for embedders that serve more than tools. Add them
    // before the first client connects: capabilities are announced at initialize.
    void add_resource(resource r);
    void add_resource_template(resource_template t);
    void add_prompt(prompt p);
    void set_completion_handler(completion_handler h);
    // Tells every session subscribed to `uri` that it changed (notifications/resources/updated
    // on its listening stream).
    void notify_resource_updated(const std::string& uri);
    [[nodiscard]] const server_options& options() const noexcept;

    // Cancels running calls (killing their process groups) and closes every held-open
    // stream; later requests are refused with 503. Idempotent, returns at once.
    void shutdown();
    [[nodiscard]] bool stopping() const noexcept;

    // Number of live sessions and calls in flight (for tests and diagnostics).
    [[nodiscard]] std::size_t session_count() const noexcept;
    [[nodiscard]] bool has_session(std::string_view id) const;
    [[nodiscard]] std::size_t calls_in_flight() const noexcept;

    [[nodiscard]] std::shared_ptr<impl> state() const noexcept { return impl_; }

private:
    std::shared_ptr<impl> impl_;
};

}  // namespace fiskai::mcpserver
