#include <fiskai/gocompat/log.hpp>

#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>

#include <catch2/catch.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

using namespace fiskai::gocompat;

namespace {

// Reads everything from `fd` until EOF.
std::string read_all(int fd) {
    std::string out;
    std::array<char, 4096> buf{};
    for (;;) {
        const ssize_t n = ::read(fd, buf.data(), buf.size());
        if (n <= 0) break;
        out.append(buf.data(), static_cast<std::size_t>(n));
    }
    return out;
}

std::vector<std::string> lines_of(const std::string& text) {
    std::vector<std::string> out;
    std::size_t start = 0;
    for (std::size_t nl = text.find('\n'); nl != std::string::npos; nl = text.find('\n', start)) {
        out.push_back(text.substr(start, nl - start));
        start = nl + 1;
    }
    CHECK(start == text.size());  // every line ends with a newline
    return out;
}

struct pipe_fds {
    int read_end = -1;
    int write_end = -1;
    pipe_fds() {
        int fds[2];
        REQUIRE(::pipe(fds) == 0);
        read_end = fds[0];
        write_end = fds[1];
    }
    void close_write() {
        if (write_end >= 0) ::close(write_end);
        write_end = -1;
    }
    ~pipe_fds() {
        close_write();
        ::close(read_end);
    }
};

}  // namespace

TEST_CASE("gocompat: text lines keep the apps' format, fields as slog writes them", "[gocompat][log]") {
    const std::array<log_field, 3> fields{{{"tool", "demo_echo"}, {"error", "no such tool"}, {"empty", ""}}};
    CHECK(format_text_line(log_level::info, "Running tool call", fields) ==
          "Running tool call tool=demo_echo error=\"no such tool\" empty=\"\"\n");
    CHECK(format_text_line(log_level::warn, "careful", {}) == "warning: careful\n");
    CHECK(format_text_line(log_level::error, "broken", {}) == "error: broken\n");
    CHECK(format_text_line(log_level::debug, "detail", {}) == "debug: detail\n");
    const std::array<log_field, 2> odd{{{"a", "x=y"}, {"b", "tab\there"}}};
    CHECK(format_text_line(log_level::info, "m", odd) == "m a=\"x=y\" b=\"tab\\there\"\n");
}

TEST_CASE("gocompat: JSON lines are one valid object each, with time, level, msg and fields", "[gocompat][log]") {
    const std::array<log_field, 2> fields{{{"tool", "<x>"}, {"duration", "1.5s"}}};
    const go_time t{std::chrono::sys_days{std::chrono::year{2026} / 12 / 1} + std::chrono::hours{14}, 123'456'789,
                    std::chrono::minutes{0}};
    const auto line = format_json_line(t, log_level::warn, "line one\nline \"two\"", fields);
    CHECK(line ==
          "{\"time\":\"2026-12-01T14:00:00.123Z\",\"level\":\"warn\",\"msg\":\"line one\\nline "
          "\\\"two\\\"\",\"tool\":\"\\u003cx\\u003e\",\"duration\":\"1.5s\"}\n");
    const auto v = boost::json::parse(line);
    CHECK(v.at("msg").as_string() == "line one\nline \"two\"");
    CHECK(v.at("tool").as_string() == "<x>");
}

TEST_CASE("gocompat: stream_logger writes whole lines, drops below its level, parses as JSON", "[gocompat][log]") {
    pipe_fds p;
    {
        // The logger writes the pipe through its own description: it must be gone for EOF.
        const auto log = stream_logger({.format = log_format::json, .min_level = log_level::info, .fd = p.write_end});
        log.debug("not shown");
        log.info("Tool call completed", {{"tool", "demo_echo"}, {"duration", "12ms"}});
        log(log_level::error, "Tool call failed", {{"error", "exit status 1"}});
    }
    p.close_write();
    const auto lines = lines_of(read_all(p.read_end));
    REQUIRE(lines.size() == 2);
    const auto first = boost::json::parse(lines[0]);
    CHECK(first.at("level").as_string() == "info");
    CHECK(first.at("msg").as_string() == "Tool call completed");
    CHECK(first.at("tool").as_string() == "demo_echo");
    CHECK(first.at("duration").as_string() == "12ms");
    CHECK(parse_rfc3339(std::string_view(first.at("time").as_string())));
    const auto second = boost::json::parse(lines[1]);
    CHECK(second.at("level").as_string() == "error");
    CHECK(second.at("error").as_string() == "exit status 1");
}

TEST_CASE("gocompat: lines from many threads never interleave", "[gocompat][log]") {
    pipe_fds p;
    std::string received;
    std::thread reader([&] { received = read_all(p.read_end); });
    {
        const auto log = stream_logger({.format = log_format::text, .fd = p.write_end});
        std::vector<std::thread> writers;
        for (int w = 0; w < 4; ++w) {
            writers.emplace_back([&log, w] {
                const std::string id = std::to_string(w);
                for (int i = 0; i < 500; ++i)
                    log.info("record from writer", {{"writer", id}, {"pad", std::string(200, 'x')}});
            });
        }
        for (auto& t : writers) t.join();
    }
    p.close_write();
    reader.join();
    const auto lines = lines_of(received);
    CHECK(lines.size() == 2000);
    const std::string tail = " pad=" + std::string(200, 'x');
    for (const auto& l : lines) {
        if (l.rfind("record from writer writer=", 0) != 0 || l.size() < tail.size() ||
            l.compare(l.size() - tail.size(), tail.size(), tail) != 0) {
            FAIL("interleaved line: " << l);
        }
    }
}

TEST_CASE("gocompat: an empty logger drops everything, formats parse by name", "[gocompat][log]") {
    const logger none;
    CHECK_FALSE(static_cast<bool>(none));
    none.error("dropped");  // no sink, no effect
    std::vector<std::string> seen;
    const logger capture = [&seen](log_level level, std::string_view message, log_fields fields) {
        seen.push_back(std::string(to_string(level)) + " " + std::string(message) + " " +
                       std::to_string(fields.size()));
    };
    CHECK(static_cast<bool>(capture));
    capture.warn("w", {{"k", "v"}});
    REQUIRE(seen.size() == 1);
    CHECK(seen[0] == "warn w 1");
    CHECK(parse_log_format("text") == log_format::text);
    CHECK(parse_log_format("json") == log_format::json);
    CHECK_FALSE(parse_log_format("JSON"));
    CHECK_FALSE(parse_log_format(""));
}

TEST_CASE("gocompat: a stalled pipe costs one write budget, then records drop at once", "[gocompat][log]") {
    using namespace std::chrono_literals;
    using clock = std::chrono::steady_clock;
    pipe_fds p;
    {
        const auto log = stream_logger({.fd = p.write_end, .write_budget = 50ms});
        // The logger leaves the descriptor it was given as it was.
        CHECK((::fcntl(p.write_end, F_GETFL) & O_NONBLOCK) == 0);
        // Fill the pipe as a reader that stopped reading would leave it.
        REQUIRE(::fcntl(p.write_end, F_SETFL, O_NONBLOCK) == 0);
        const std::string block(4096, 'f');
        std::size_t filled = 0;
        for (ssize_t n; (n = ::write(p.write_end, block.data(), block.size())) > 0;)
            filled += static_cast<std::size_t>(n);
        REQUIRE(filled > 0);

        const auto t0 = clock::now();
        log.info("dropped after the budget");
        const auto t1 = clock::now();
        CHECK(t1 - t0 >= 45ms);
        CHECK(t1 - t0 < 5s);
        for (int i = 0; i < 100; ++i) log.info("dropped at once");
        // 100 records waiting out their budget would take 5 s.
        CHECK(clock::now() - t1 < 2s);

        // The reader catches up: the next record goes out whole.
        REQUIRE(::fcntl(p.read_end, F_SETFL, O_NONBLOCK) == 0);
        std::array<char, 4096> buf{};
        std::size_t drained = 0;
        for (ssize_t n; (n = ::read(p.read_end, buf.data(), buf.size())) > 0;) drained += static_cast<std::size_t>(n);
        CHECK(drained == filled);
        REQUIRE(::fcntl(p.read_end, F_SETFL, 0) == 0);
        log.info("after the stall", {{"ok", "yes"}});
    }
    p.close_write();
    CHECK(read_all(p.read_end) == "after the stall ok=yes\n");
}
