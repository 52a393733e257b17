#pragma once
// What bench/serve and bench/queue share: a real nats-server (JetStream on), the scripted
// fiskai-fake-llm answering at once, and `fisk-ai-serve serve` worker processes on the
// demo application; plus an a2a driver that sends one-tool tasks through task_caller (the
// client `fisk-ai-a2a ask` uses) and times each from publish to terminal.

#include <fiskai/a2a_nats/task_caller.hpp>
#include <fiskai/conns/connection.hpp>
#include <fiskai/conns/embedded_broker.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>

#include <fmt/format.h>

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <variant>
#include <vector>

extern char** environ;

namespace fiskai::bench {

namespace fs = std::filesystem;
using bench_clock = std::chrono::steady_clock;

inline double ms_since(bench_clock::time_point t) {
    return std::chrono::duration<double, std::milli>(bench_clock::now() - t).count();
}

// The value at fraction p of the sorted samples.
inline double percentile(std::vector<double> v, double p) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    return v[std::min(v.size() - 1, static_cast<std::size_t>(p * static_cast<double>(v.size())))];
}

inline std::string slurp(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

// A child with stdout and stderr appended to `log`.
inline pid_t spawn_logged(const std::string& exe, const std::vector<std::string>& args, const fs::path& log) {
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0600);
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
    std::vector<char*> argv{const_cast<char*>(exe.c_str())};
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    pid_t pid = 0;
    const int rc = posix_spawn(&pid, exe.c_str(), &fa, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0) throw std::runtime_error(fmt::format("cannot start {}: {}", exe, std::strerror(rc)));
    return pid;
}

// Waits until `log` contains `needle` (the child's banner); throws with the log when the
// child exits first or the deadline passes.
inline std::string await_text(pid_t pid, const fs::path& log, const std::string& needle,
                              std::chrono::seconds limit = std::chrono::seconds(60)) {
    const auto deadline = bench_clock::now() + limit;
    for (;;) {
        auto text = slurp(log);
        if (text.find(needle) != std::string::npos) return text;
        int status = 0;
        if (::waitpid(pid, &status, WNOHANG) == pid || bench_clock::now() > deadline)
            throw std::runtime_error(fmt::format("{} did not show \"{}\":\n{}", log.string(), needle, text));
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
}

// A process's resident set now (`VmRSS`) and at its peak (`VmHWM`), in KiB, from
// /proc/<pid>/status; zeros when it cannot be read.
struct resident_kib {
    long now = 0, peak = 0;
};

inline resident_kib resident_of(pid_t pid) {
    std::ifstream in(fmt::format("/proc/{}/status", pid));
    resident_kib r;
    std::string line;
    while (std::getline(in, line)) {
        if (line.rfind("VmRSS:", 0) == 0) r.now = std::atol(line.c_str() + 6);
        if (line.rfind("VmHWM:", 0) == 0) r.peak = std::atol(line.c_str() + 6);
    }
    return r;
}

inline void stop_child(pid_t pid) {
    if (pid <= 0) return;
    ::kill(pid, SIGTERM);
    int status = 0;
    ::waitpid(pid, &status, 0);
}

// One task of the benchmark: the fake answers step 0 with a stream_info call and step 1
// with the final text, both at once.
inline constexpr const char* one_tool_script = R"({"conversations": [{"name": "bench", "steps": [
  {"reply": {"content": [{"type": "text", "text": "Checking."},
                         {"type": "tool_use", "name": "stream_info", "input": {"name": "ORDERS"}}],
             "stop_reason": "tool_use", "usage": {"input_tokens": 1200, "output_tokens": 40}}},
  {"reply": {"content": [{"type": "text", "text": "ORDERS holds 38988 messages."}],
             "stop_reason": "end_turn", "usage": {"input_tokens": 1400, "output_tokens": 20}}}]}]})";

inline constexpr const char* bench_prompt = "How many messages are in ORDERS?";
inline constexpr const char* bench_identity = "bench";

struct fleet_paths {
    std::string serve_bin, fake_bin, demo_bin;
};

// The broker, the fake LLM and the scratch directory live as long as the fleet; workers
// come and go per row.
class fleet {
public:
    explicit fleet(fleet_paths paths) : paths_(std::move(paths)), broker_(broker_opts()) {
        char tmpl[] = "/tmp/fiskai-serve-bench-XXXXXX";
        const char* base = std::getenv("TMPDIR");
        std::string t = base ? std::string(base) + "/fiskai-serve-bench-XXXXXX" : tmpl;
        if (!::mkdtemp(t.data())) throw std::runtime_error("mkdtemp failed");
        dir_ = t;
        fs::create_directories(dir_ / "xdg/nats/context");
        std::ofstream(dir_ / "xdg/nats/context/bench.json") << fmt::format(R"({{"url":"{}"}})", broker_.url());
        std::ofstream(dir_ / "script.json") << one_tool_script;
        ::setenv("XDG_CONFIG_HOME", (dir_ / "xdg").c_str(), 1);
        ::setenv("ANTHROPIC_API_KEY", "bench", 1);
        ::setenv("DEMO_STATE_DIR", dir_.c_str(), 1);
        fake_pid_ = spawn_logged(paths_.fake_bin,
                                 {"--script", (dir_ / "script.json").string(), "--port", "0", "--log",
                                  (dir_ / "llm.jsonl").string(), "--exit-with-parent"},
                                 dir_ / "fake.log");
        const auto text = await_text(fake_pid_, dir_ / "fake.log", "listening on 127.0.0.1:");
        const auto at = text.find("127.0.0.1:");
        llm_url_ = "http://" + text.substr(at, text.find_first_of("\r\n", at) - at);
    }
    ~fleet() {
        stop_workers();
        stop_child(fake_pid_);
        std::error_code ec;
        fs::remove_all(dir_, ec);
    }
    fleet(const fleet&) = delete;
    fleet& operator=(const fleet&) = delete;

    [[nodiscard]] const std::string& nats_url() const { return broker_.url(); }
    [[nodiscard]] const std::string& llm_url() const { return llm_url_; }
    [[nodiscard]] pid_t broker_pid() const noexcept { return broker_.pid(); }
    [[nodiscard]] pid_t llm_pid() const noexcept { return fake_pid_; }
    [[nodiscard]] const fs::path& dir() const { return dir_; }
    [[nodiscard]] fs::path runs() const { return dir_ / "runs"; }

    // `processes` workers with `workers` slots each (expose.agent.workers), all in the
    // queue group of one identity; `queue` adds the work-queue channel.
    void start_workers(int processes, int workers, bool queue) {
        stop_workers();
        std::string cfg = fmt::format(R"(identity: {}
application_path: {}
nats_context: bench
system_prompt: You operate the fisk-demo tool.
llm:
  provider: anthropic
  model: fake
  base_url: {}
harness:
  sessions:
    backend: file
    options:
      directory: {}
expose:
  agent:
    workers: {}
    a2a:
      prompts: {{}}
)",
                                      bench_identity, paths_.demo_bin, llm_url_, runs().string(), workers);
        if (queue) cfg += "    queue: {}\n";
        const auto path = dir_ / fmt::format("serve-{}x{}.yaml", processes, workers);
        std::ofstream(path) << cfg;
        for (int i = 0; i < processes; ++i) {
            const auto log = dir_ / fmt::format("worker-{}x{}-{}.log", processes, workers, i);
            const auto pid = spawn_logged(paths_.serve_bin, {"serve", "--config", path.string()}, log);
            workers_.push_back(pid);
            await_text(pid, log, "services:");
        }
    }
    [[nodiscard]] const std::vector<pid_t>& worker_pids() const { return workers_; }
    void stop_workers() {
        for (auto pid : workers_) stop_child(pid);
        workers_.clear();
    }

private:
    static conns::broker_options broker_opts() {
        conns::broker_options o;
        o.jetstream = true;
        return o;
    }

    fleet_paths paths_;
    conns::embedded_broker broker_;
    fs::path dir_;
    pid_t fake_pid_ = -1;
    std::string llm_url_;
    std::vector<pid_t> workers_;
};

struct drive_figures {
    std::vector<double> latency_ms;  // publish of the request to its terminal, per task
    double seconds = 0;              // the whole row
    int failed = 0;
    std::string first_failure;
};

// `tasks` one-tool tasks, `in_flight` at a time, each through its own task_caller on one
// connection and one io_context thread (as `fisk-ai-a2a ask` runs one). `stream` false asks
// for no events (the request's `stream: false`): the ack and the terminal only.
inline drive_figures drive_a2a(conns::connection& nats, int tasks, int in_flight, bool stream = true) {
    namespace asio = boost::asio;
    asio::io_context ioc;
    drive_figures out;
    int next_task = 0;
    auto one = [&]() -> asio::awaitable<void> {
        while (next_task < tasks) {
            ++next_task;
            a2a_nats::task_caller_options o;
            o.agent = bench_identity;
            o.self = "bench-client";
            o.prompt = bench_prompt;
            o.accept_timeout = std::chrono::seconds(120);
            o.idle_timeout = std::chrono::seconds(120);
            if (!stream) o.stream = false;
            a2a_nats::task_caller caller(nats, ioc.get_executor(), std::move(o));
            const auto t = bench_clock::now();
            std::string failure;
            auto ack = co_await caller.start();
            if (!ack) {
                failure = ack.error().message;
            } else if (!ack->accepted) {
                failure = "refused: " + ack->reason;
            } else {
                for (;;) {
                    auto got = co_await caller.next();
                    if (!got) {
                        failure = got.error().message;
                        break;
                    }
                    if (!got->is_terminal()) continue;
                    if (!std::holds_alternative<a2a::task_result>(got->message)) failure = "error: " + got->body;
                    break;
                }
            }
            if (failure.empty()) {
                out.latency_ms.push_back(ms_since(t));
            } else {
                if (out.failed++ == 0) out.first_failure = failure;
            }
            caller.close();
        }
    };
    const auto start = bench_clock::now();
    for (int i = 0; i < in_flight; ++i) asio::co_spawn(ioc, one(), asio::detached);
    ioc.run();
    out.seconds = ms_since(start) / 1000.0;
    return out;
}

}  // namespace fiskai::bench
