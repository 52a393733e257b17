#pragma once
// The one logger every library logs through. A library never chooses an output: it holds
// a `logger` its user supplies (an empty one drops everything). Applications make one
// with stream_logger(): text lines on stderr by default, or JSON lines for log shippers.

#include <fiskai/gocompat/time.hpp>

#include <chrono>
#include <concepts>
#include <functional>
#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

namespace fiskai::gocompat {

enum class log_level { debug, info, warn, error };

// "debug", "info", "warn", "error".
[[nodiscard]] std::string_view to_string(log_level l) noexcept;

// One attribute of a record: `tool=demo_echo`. Values are text; callers format numbers
// and durations (format_duration) themselves so both output formats agree.
struct log_field {
    std::string_view key;
    std::string_view value;
};
using log_fields = std::span<const log_field>;

// What receives a record. Called on the logging thread; must not throw.
using log_sink = std::function<void(log_level, std::string_view message, log_fields fields)>;

class logger {
public:
    logger() = default;
    template <class Sink>
    requires(!std::same_as<std::remove_cvref_t<Sink>, logger> &&
             std::is_invocable_v<Sink&, log_level, std::string_view, log_fields>) logger(Sink sink)
        : sink_(std::move(sink)) {}  // NOLINT: implicit, so a lambda is a logger

    void log(log_level level, std::string_view message, log_fields fields) const {
        if (sink_) sink_(level, message, fields);
    }
    void operator()(log_level level, std::string_view message, std::initializer_list<log_field> fields = {}) const {
        if (sink_) sink_(level, message, log_fields(fields.begin(), fields.size()));
    }
    void debug(std::string_view message, std::initializer_list<log_field> fields = {}) const {
        (*this)(log_level::debug, message, fields);
    }
    void info(std::string_view message, std::initializer_list<log_field> fields = {}) const {
        (*this)(log_level::info, message, fields);
    }
    void warn(std::string_view message, std::initializer_list<log_field> fields = {}) const {
        (*this)(log_level::warn, message, fields);
    }
    void error(std::string_view message, std::initializer_list<log_field> fields = {}) const {
        (*this)(log_level::error, message, fields);
    }

    explicit operator bool() const noexcept { return static_cast<bool>(sink_); }

private:
    log_sink sink_;
};

enum class log_format { text, json };

// "text" or "json"; nullopt for anything else.
[[nodiscard]] std::optional<log_format> parse_log_format(std::string_view s) noexcept;
inline constexpr std::string_view log_format_choices = "text, json";

// One text line, newline included: the message alone at info, `warning: ` and `error: `
// and `debug: ` before it otherwise, then each field as ` key=value`, the value quoted
// (strconv.Quote) when empty or holding a space, a quote, `=` or a control, as slog's
// text handler does: `warning: Rejecting unknown tool call tool=x error="no such tool"`.
[[nodiscard]] std::string format_text_line(log_level level, std::string_view message, log_fields fields);

// One JSON line, newline included:
// {"time":"2026-12-01T14:29:54.123Z","level":"info","msg":"...","tool":"x"}.
// Fields follow in their order, strings with Go's JSON escaping (as slog's JSON handler).
[[nodiscard]] std::string format_json_line(const go_time& time, log_level level, std::string_view message,
                                           log_fields fields);

struct stream_logger_options {
    log_format format = log_format::text;
    log_level min_level = log_level::info;  // records below it are dropped
    int fd = 2;                             // stderr
    // How long one record may wait for a full pipe before it is dropped. While the pipe
    // stays full, later records try once and drop at once, so a stalled log reader costs
    // the calling thread this budget once per stall, not once per line.
    std::chrono::milliseconds write_budget{100};
};

// A logger writing one line per record to a file descriptor. Each line goes out in one
// write(2) (retried only for EINTR or a short write), never through a buffered stream, so
// lines from several threads do not interleave and nothing flushes per character. When
// the descriptor is a pipe, the logger writes through its own non-blocking description of
// it (stderr's own flags are left alone) and waits at most `write_budget` for room. A
// failed or timed-out write drops the line: logging never throws into, nor stalls, the
// caller.
[[nodiscard]] logger stream_logger(stream_logger_options options = {});

}  // namespace fiskai::gocompat
