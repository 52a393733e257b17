#pragma once
// Internal state of the MCP server, shared by the dispatcher (server.cpp) and the HTTP
// layer (http_handler.cpp). One io_context thread owns all of it; no locks.

#include <fiskai/mcpserver/server.hpp>
#include <fiskai/toolkit/slots.hpp>

#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/experimental/channel.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/json/array.hpp>
#include <boost/json/object.hpp>

#include <algorithm>
#include <deque>
#include <map>
#include <set>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>

namespace fiskai::mcpserver {

// What every outgoing stream of one server holds, in bytes: retention for resumption is
// bounded across the server, so many sessions each keeping streams nobody reads cannot
// add up to more than `limit`.
struct retention_budget {
    std::size_t used = 0;
    std::size_t limit = std::size_t{256} << 20;
};

// One outgoing stream of JSON-RPC messages: the SSE response to one POST, or a session's
// listening GET stream. Producers push; an HTTP writer drains. A push never blocks, so a
// dispatcher is never held up by a slow or vanished client.
//
// Every event has an id `<stream>-<seq>`; seqs are consecutive. Events are kept until the
// stream has finished and its last event was written, so when the connection drops (or
// the server drops it on purpose, interrupt()) the client can resume with GET and
// Last-Event-ID and get every event after the one it saw. Memory is bounded: with no
// writer attached, a stream past max_retained events or max_retained_bytes, or pushing
// while the server's budget is spent, is abandoned.
struct outbound_stream {
    static constexpr std::size_t max_retained = 10000;
    static constexpr std::size_t max_retained_bytes = std::size_t{8} << 20;

    struct event {
        std::uint64_t seq;
        std::string data;
    };

    outbound_stream(boost::asio::any_io_executor ex, std::string id, std::shared_ptr<retention_budget> b)
        : stream_id(std::move(id)), wake(ex), budget(std::move(b)) {
        wake.expires_at(boost::asio::steady_timer::time_point::max());
    }
    ~outbound_stream() { budget->used -= bytes; }
    outbound_stream(const outbound_stream&) = delete;
    outbound_stream& operator=(const outbound_stream&) = delete;

    void push(const boost::json::object& message);
    void finish(std::optional<boost::json::object> final_message = std::nullopt);
    // The writer's connection is gone: keep events for a resumption, within bounds.
    void writer_lost() {
        writer_attached = false;
        if (over_bounds()) abandon();
    }
    // Nobody will ever read this stream: drop everything.
    void abandon() {
        dead = true;
        drop_all();
        wake.cancel();
    }
    // Asks the writer to end the HTTP response now without ending the stream.
    void interrupt() {
        interrupt_requested = true;
        wake.cancel();
    }
    [[nodiscard]] bool has_pending() const { return !events.empty() && events.back().seq > delivered; }
    [[nodiscard]] bool complete() const { return finished && !has_pending(); }
    [[nodiscard]] std::string event_id(std::uint64_t seq) const { return stream_id + "-" + std::to_string(seq); }
    // The first event not yet written, or null. Looked up afresh each time: while a write is
    // suspended the queue can grow, be trimmed, or be cleared (its session ended).
    [[nodiscard]] const event* next_undelivered() const {
        if (events.empty()) return nullptr;
        const auto first = events.front().seq;
        const auto index = std::max(delivered + 1, first) - first;
        return index < events.size() ? &events[index] : nullptr;
    }
    // Drops written events from the front while more than `keep_events` or `keep_bytes` are held.
    void trim_delivered(std::size_t keep_events, std::size_t keep_bytes) {
        while (!events.empty() && events.front().seq <= delivered &&
               (events.size() > keep_events || bytes > keep_bytes)) {
            drop_front();
        }
    }
    // Takes the only event's text (a response answered as plain JSON) and empties the queue.
    [[nodiscard]] std::string take_only() {
        std::string text = std::move(events.front().data);
        drop_all();
        return text;
    }
    [[nodiscard]] bool empty() const { return events.empty(); }
    [[nodiscard]] std::size_t held_bytes() const { return bytes; }

    std::string stream_id;
    std::uint64_t next_seq = 1;
    std::uint64_t delivered = 0;  // the last seq written to a connection
    bool finished = false;        // the last message has been queued
    bool dead = false;            // abandoned: pushes are dropped
    bool sent_anything = false;   // something other than the final message was pushed
    bool writer_attached = false;
    bool interrupt_requested = false;
    boost::asio::steady_timer wake;

private:
    [[nodiscard]] bool over_bounds() const {
        return events.size() > max_retained || bytes > max_retained_bytes || budget->used > budget->limit;
    }
    void append(std::string data) {
        bytes += data.size();
        budget->used += data.size();
        events.push_back({next_seq++, std::move(data)});
    }
    void drop_front() {
        bytes -= events.front().data.size();
        budget->used -= events.front().data.size();
        events.pop_front();
    }
    void drop_all() {
        budget->used -= bytes;
        bytes = 0;
        events.clear();
    }

    std::deque<event> events;
    std::size_t bytes = 0;  // of the events held
    std::shared_ptr<retention_budget> budget;
};

// A call in flight; cancelling it kills its process group and suppresses its response,
// as the protocol asks of a cancelled request.
struct in_flight_call {
    boost::asio::cancellation_signal signal;
    bool cancelled = false;
    void cancel() {
        cancelled = true;
        signal.emit(boost::asio::cancellation_type::terminal);
    }
};

using response_channel = boost::asio::experimental::channel<void(boost::system::error_code, boost::json::object)>;

struct session {
    std::string id;
    std::string protocol_version;
    boost::json::object client_capabilities;
    std::string client_name = "unknown";
    bool initialized = false;
    std::optional<log_level> level;  // no log notifications until the client sets a level
    std::chrono::steady_clock::time_point last_seen;
    bool ended = false;
    // Calls in flight, keyed by the request id's JSON text, so a cancellation can reach them.
    std::map<std::string, std::shared_ptr<in_flight_call>> in_flight;
    // Server-to-client requests waiting for the client's answer, keyed by id text.
    std::map<std::string, std::shared_ptr<response_channel>> pending;
    std::shared_ptr<outbound_stream> listening;  // the GET stream, when open
    // Streams a client may resume, by stream id; bounded, oldest dropped first.
    std::map<std::string, std::shared_ptr<outbound_stream>> resumable;
    std::uint64_t next_stream = 1;
    std::set<std::string> subscriptions;  // resource URIs
    std::shared_ptr<outbound_stream> new_stream(boost::asio::any_io_executor ex,
                                                std::shared_ptr<retention_budget> budget);
};

struct server::impl : std::enable_shared_from_this<server::impl> {
    impl(boost::asio::any_io_executor ex, server_options o);

    void log(log_level level, std::string_view text) const {
        if (!options.log) return;
        auto operator_level = gocompat::log_level::error;
        if (level == log_level::debug) {
            operator_level = gocompat::log_level::debug;
        } else if (level <= log_level::notice) {
            operator_level = gocompat::log_level::info;
        } else if (level == log_level::warning) {
            operator_level = gocompat::log_level::warn;
        }
        options.log(operator_level, text);
    }

    // Registration.
    void register_tools(const toolkit::tool_list& commands, const toolkit::tool_list& builtins);
    [[nodiscard]] toolkit::tool_ptr find_tool(std::string_view name) const;

    // Sessions.
    std::shared_ptr<session> create_session(std::string& error);
    [[nodiscard]] std::shared_ptr<session> find_session(std::string_view id);
    void end_session(const std::shared_ptr<session>& s);
    void expire_idle_sessions();

    // Dispatch. `out` is where messages for this request go (an SSE stream when it turns
    // out anything is sent before the result); the returned object is the response.
    boost::asio::awaitable<std::optional<boost::json::object>> dispatch_request(std::shared_ptr<session> s,
                                                                                rpc_request request,
                                                                                std::shared_ptr<outbound_stream> out);
    void handle_notification(const std::shared_ptr<session>& s, const rpc_notification& n);
    void handle_response(const std::shared_ptr<session>& s, rpc_response r);
    boost::json::object initialize(session& s, const boost::json::object& params);

    class call_channel;
    boost::asio::awaitable<boost::json::object> call_tool(std::shared_ptr<session> s, boost::json::value request_id,
                                                          boost::json::object params,
                                                          std::shared_ptr<outbound_stream> out);
    boost::json::object list_tools(const boost::json::object& params, bool& invalid_cursor) const;
    boost::asio::awaitable<boost::json::object> dispatch_extension(std::shared_ptr<session> s,
                                                                   const rpc_request& request, bool& handled);
    boost::json::object capabilities() const;

    // Sends a request to the client on `out` and waits for its answer (or the timeout).
    // Throws std::runtime_error with the reason when no usable answer comes.
    boost::asio::awaitable<boost::json::object> ask_client(std::shared_ptr<session> s,
                                                           std::shared_ptr<outbound_stream> out, std::string method,
                                                           boost::json::object params,
                                                           std::chrono::steady_clock::duration timeout);
    void send_log(session& s, const std::shared_ptr<outbound_stream>& out, log_level level, std::string_view text);

    boost::asio::any_io_executor executor;
    server_options options;
    registration report;
    toolkit::tool_list tools;  // registration order
    std::unordered_map<std::string, toolkit::tool_ptr> by_name;
    toolkit::slot_pool slots;
    std::unordered_map<std::string, std::shared_ptr<session>> sessions;
    std::size_t calls_in_flight = 0;
    std::uint64_t next_server_request_id = 1;
    bool stopping = false;
    // Streams held open (GETs and POST SSE responses), closed on shutdown.
    std::vector<std::weak_ptr<outbound_stream>> open_streams;
    // Bytes held by every outgoing stream of this server (shared: a stream can outlive it).
    std::shared_ptr<retention_budget> retention = std::make_shared<retention_budget>();

    std::vector<resource> resources;
    std::vector<resource_template> templates;
    std::vector<prompt> prompts;
    completion_handler completion;
};

// A duration as an operator reads it: 2m, 30s, 250ms.
std::string describe_duration(std::chrono::steady_clock::duration d);

// JSON text of an id, the key for the in-flight and pending maps.
std::string id_key(const boost::json::value& id);

// One page of a list method's result (`key` holds the items, `nextCursor` follows when
// more remain). Sets `invalid` for a cursor that is not one of ours.
template <typename T>
boost::json::object paged(const std::vector<T>& items, const boost::json::object& params, std::size_t page_size,
                          std::string_view key, bool& invalid, auto&& describe) {
    std::size_t offset = 0;
    if (const auto* c = params.if_contains("cursor"); c && !c->is_null()) {
        const auto decoded = c->is_string() ? decode_cursor(c->get_string()) : std::nullopt;
        if (!decoded || *decoded > items.size()) {
            invalid = true;
            return {};
        }
        offset = *decoded;
    }
    const std::size_t page = page_size == 0 ? items.size() : page_size;
    const std::size_t end = std::min(items.size(), offset + page);
    boost::json::array list;
    for (std::size_t i = offset; i < end; ++i) list.push_back(describe(items[i]));
    boost::json::object result{{key, std::move(list)}};
    if (end < items.size()) result["nextCursor"] = encode_cursor(end);
    return result;
}

}  // namespace fiskai::mcpserver
