#pragma once
// A server-sent events parser (the WHATWG "event stream interpretation"), free of I/O:
// feed it bytes as they arrive, take whole events out. The HTTP client's response_stream
// drives it; tests drive it directly.

#include <chrono>
#include <cstddef>
#include <deque>
#include <optional>
#include <string>
#include <string_view>

namespace fiskai::net {

struct sse_event {
    std::string event = "message";                   // the `event` field, "message" when none was given
    std::string data;                                // the `data` lines joined with \n
    std::string id;                                  // the last event id seen on the stream (it persists across events)
    std::optional<std::chrono::milliseconds> retry;  // a `retry` field of this event's block
};

class sse_parser {
public:
    // `event_limit` caps one event's buffered size (its data plus the line being read).
    explicit sse_parser(std::size_t event_limit = std::size_t{1} << 20) : event_limit_(event_limit) {}

    // Adds bytes from the stream. Returns false when an event grows over the limit; the
    // stream is then unusable (the rest of an oversized event cannot be told apart).
    bool feed(std::string_view bytes);

    // The next whole event, in stream order.
    [[nodiscard]] std::optional<sse_event> next();

    [[nodiscard]] bool over_limit() const { return over_limit_; }

    // The reconnection time the stream last set (a `retry` field in any block, even one
    // that dispatched no event).
    [[nodiscard]] std::optional<std::chrono::milliseconds> reconnection_time() const { return reconnection_time_; }

private:
    void take_line(std::string_view line);
    void dispatch();

    std::size_t event_limit_;
    std::string line_;
    bool after_cr_ = false;  // a CR ended the last line: a LF right after it belongs to it
    bool at_start_ = true;   // a UTF-8 BOM is dropped only at the very start
    bool over_limit_ = false;
    std::string data_;
    std::string event_type_;
    std::string last_id_;
    std::optional<std::chrono::milliseconds> retry_;
    std::optional<std::chrono::milliseconds> reconnection_time_;
    std::deque<sse_event> ready_;
};

}  // namespace fiskai::net
