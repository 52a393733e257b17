#include <fiskai/gocompat/json.hpp>
#include <fiskai/gocompat/log.hpp>
#include <fiskai/gocompat/quote.hpp>

#include <cerrno>
#include <unistd.h>

namespace fiskai::gocompat {

std::string_view to_string(log_level l) noexcept {
    switch (l) {
    case log_level::debug: return "debug";
    case log_level::info: return "info";
    case log_level::warn: return "warn";
    case log_level::error: return "error";
    }
    return "info";
}

std::optional<log_format> parse_log_format(std::string_view s) noexcept {
    if (s == "text") return log_format::text;
    if (s == "json") return log_format::json;
    return std::nullopt;
}

namespace {

// A value slog's text handler writes bare: non-empty, with no space, quote, `=` or control.
bool needs_quoting(std::string_view value) noexcept {
    if (value.empty()) return true;
    for (const char ch : value) {
        const auto c = static_cast<unsigned char>(ch);
        if (c <= 0x20 || c == '"' || c == '=' || c == 0x7F) return true;
    }
    return false;
}

std::string_view text_prefix(log_level level) noexcept {
    switch (level) {
    case log_level::debug: return "debug: ";
    case log_level::info: return "";
    case log_level::warn: return "warning: ";
    case log_level::error: return "error: ";
    }
    return "";
}

// Writes all of `line` to `fd`: one write(2) unless interrupted or cut short.
void write_line(int fd, std::string_view line) noexcept {
    while (!line.empty()) {
        const ssize_t n = ::write(fd, line.data(), line.size());
        if (n < 0) {
            if (errno == EINTR) continue;
            return;  // EAGAIN, EPIPE, EBADF...: drop the line rather than block or throw
        }
        line.remove_prefix(static_cast<std::size_t>(n));
    }
}

}  // namespace

std::string format_text_line(log_level level, std::string_view message, log_fields fields) {
    std::string line(text_prefix(level));
    line.append(message);
    for (const auto& f : fields) {
        line.push_back(' ');
        line.append(f.key);
        line.push_back('=');
        if (needs_quoting(f.value)) {
            line.append(quote(f.value));
        } else {
            line.append(f.value);
        }
    }
    line.push_back('\n');
    return line;
}

std::string format_json_line(const go_time& time, log_level level, std::string_view message, log_fields fields) {
    std::string line = "{\"time\":\"";
    line.append(format_rfc3339_millis(time));
    line.append("\",\"level\":\"");
    line.append(to_string(level));
    line.append("\",\"msg\":");
    append_json_string(line, message);
    for (const auto& f : fields) {
        line.push_back(',');
        append_json_string(line, f.key);
        line.push_back(':');
        append_json_string(line, f.value);
    }
    line.append("}\n");
    return line;
}

logger stream_logger(stream_logger_options options) {
    return [options](log_level level, std::string_view message, log_fields fields) {
        if (level < options.min_level) return;
        try {
            const std::string line = options.format == log_format::json
                                         ? format_json_line(to_go_time(std::chrono::system_clock::now()), level,
                                                            message, fields)
                                         : format_text_line(level, message, fields);
            write_line(options.fd, line);
        } catch (...) {  // out of memory formatting a line: drop it, never throw into the caller
        }
    };
}

}  // namespace fiskai::gocompat
