#include <fiskai/gocompat/json.hpp>
#include <fiskai/gocompat/log.hpp>
#include <fiskai/gocompat/quote.hpp>

#include <cerrno>
#include <memory>
#include <mutex>

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
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

// One stream's writer: the descriptor it writes (its own non-blocking one for a pipe), and
// what a stalled reader has left behind.
class line_writer {
public:
    line_writer(int fd, std::chrono::milliseconds budget) : fd_(fd), budget_(budget) {
        // A pipe's reader can stop reading; a blocking write would then hold the caller (an
        // io thread) for as long. Opening the pipe again through /proc gives a new open file
        // description, so O_NONBLOCK on it leaves the process's stderr as it was. Regular
        // files and terminals keep the inherited descriptor (reopening a file would lose
        // its offset), as does a pipe /proc cannot reopen.
        struct stat st {};
        if (::fstat(fd, &st) == 0 && S_ISFIFO(st.st_mode)) {
            const std::string path = "/proc/self/fd/" + std::to_string(fd);
            const int own = ::open(path.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
            if (own >= 0) {
                fd_ = own;
                owned_ = true;
            }
        }
    }
    ~line_writer() {
        if (owned_) ::close(fd_);
    }
    line_writer(const line_writer&) = delete;
    line_writer& operator=(const line_writer&) = delete;

    void write(std::string_view line) noexcept {
        const std::lock_guard lock(mutex_);
        std::string_view rest = line;
        if (torn_) {
            // The last line was cut short by a stalled reader: end it before this one.
            if (!write_some("\n")) return;
            torn_ = false;
        }
        while (!rest.empty()) {
            const ssize_t n = ::write(fd_, rest.data(), rest.size());
            if (n > 0) {
                rest.remove_prefix(static_cast<std::size_t>(n));
                stalled_ = false;
                continue;
            }
            if (n < 0 && errno == EINTR) continue;
            if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) && !stalled_ && wait_writable()) continue;
            // Full past the budget, or EPIPE, EBADF...: drop the rest rather than block or throw.
            if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) stalled_ = true;
            torn_ = rest.size() != line.size();
            return;
        }
    }

private:
    // Writes all of `s`, or reports that it could not within the budget.
    bool write_some(std::string_view s) noexcept {
        while (!s.empty()) {
            const ssize_t n = ::write(fd_, s.data(), s.size());
            if (n > 0) {
                s.remove_prefix(static_cast<std::size_t>(n));
            } else if (!(n < 0 && errno == EINTR) && !(n < 0 && errno == EAGAIN && !stalled_ && wait_writable())) {
                return false;
            }
        }
        return true;
    }

    bool wait_writable() noexcept {
        pollfd p{fd_, POLLOUT, 0};
        const auto deadline = std::chrono::steady_clock::now() + budget_;
        for (;;) {
            const auto left =
                std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
            if (left.count() <= 0) return false;
            const int r = ::poll(&p, 1, static_cast<int>(left.count()));
            if (r > 0) return true;
            if (r == 0 || errno != EINTR) return false;
        }
    }

    int fd_;
    bool owned_ = false;
    std::chrono::milliseconds budget_;
    std::mutex mutex_;
    bool stalled_ = false;  // the last write found the pipe full past the budget
    bool torn_ = false;     // a line was cut short and still needs its newline
};

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
    auto writer = std::make_shared<line_writer>(options.fd, options.write_budget);
    return [options, writer](log_level level, std::string_view message, log_fields fields) {
        if (level < options.min_level) return;
        try {
            const std::string line =
                options.format == log_format::json
                    ? format_json_line(to_go_time(std::chrono::system_clock::now()), level, message, fields)
                    : format_text_line(level, message, fields);
            writer->write(line);
        } catch (...) {  // out of memory formatting a line: drop it, never throw into the caller
        }
    };
}

}  // namespace fiskai::gocompat
