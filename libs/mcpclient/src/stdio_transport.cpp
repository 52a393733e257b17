// The stdio transport: newline-delimited JSON-RPC on the child's stdin and stdout, its
// stderr logged at DEBUG. The child is started once and lives until close (or its death,
// which is the session's fault).

#include "transport.hpp"

#include <fiskai/gocompat/quote.hpp>
#include <fiskai/mcpclient/protocol.hpp>
#include <fiskai/toolkit/child_exit.hpp>
#include <fiskai/toolkit/process.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/readable_pipe.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/writable_pipe.hpp>
#include <boost/asio/write.hpp>
#include <boost/json/serialize.hpp>
#include <fmt/format.h>

#include <array>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <mutex>
#include <unordered_map>

#include <sys/wait.h>
#include <unistd.h>

namespace fiskai::mcpclient {
namespace {

namespace asio = boost::asio;
namespace json = boost::json;
constexpr auto tuple_awaitable = asio::as_tuple(asio::use_awaitable);

// One stderr line logged at most this long: a chatty server cannot flood the log.
constexpr std::size_t stderr_line_cap = 4096;
// A stdout line (one JSON-RPC message) over message_cap kills the session.
constexpr std::size_t stdout_line_cap = message_cap;

// Writing to a child that has exited raises SIGPIPE, whose default kills the whole server.
// Asio's pipes cannot pass MSG_NOSIGNAL, so the signal is ignored instead (EPIPE is then
// an ordinary write error), unless the application has chosen its own disposition.
void ignore_sigpipe_once() {
    static std::once_flag once;
    std::call_once(once, [] {
        struct sigaction current {};
        if (::sigaction(SIGPIPE, nullptr, &current) == 0 && current.sa_handler == SIG_DFL) {
            ::signal(SIGPIPE, SIG_IGN);
        }
    });
}

std::string describe_exit(int status) {
    if (WIFEXITED(status)) return fmt::format("the process exited with status {}", WEXITSTATUS(status));
    if (WIFSIGNALED(status)) {
        return fmt::format("the process was killed by signal {} ({})", WTERMSIG(status), ::strsignal(WTERMSIG(status)));
    }
    return "the process ended";
}

class stdio_transport final : public transport, public std::enable_shared_from_this<stdio_transport> {
public:
    stdio_transport(asio::any_io_executor ex, std::string server, gocompat::logger log, toolkit::piped_child child)
        : ex_(ex),
          server_(std::move(server)),
          log_(std::move(log)),
          pid_(child.pid),
          stdin_(ex, child.stdin_fd),
          stdout_(ex, child.stdout_fd),
          stderr_(ex, child.stderr_fd),
          exit_watch_(ex),
          exit_wait_(ex),
          eof_grace_(ex) {}

    ~stdio_transport() override {
        // Dropped without close (an io_context torn down): nothing of the group outlives us.
        if (!reaped_) {
            ::kill(-pid_, SIGKILL);
            while (::waitpid(pid_, nullptr, 0) < 0 && errno == EINTR) {}
        }
    }

    std::optional<std::string> begin() {
        if (auto failed = exit_watch_.watch(pid_)) return failed;
        auto self = shared_from_this();
        asio::co_spawn(ex_, self->read_stdout(self), asio::detached);
        asio::co_spawn(ex_, self->read_stderr(self), asio::detached);
        asio::co_spawn(ex_, self->watch_exit(self), asio::detached);
        return std::nullopt;
    }

    asio::awaitable<rpc_result> request(json::object message, std::int64_t id, clock::time_point deadline) override {
        if (dead_) co_return rpc_failure{rpc_failure::kind::dead, *dead_};
        auto waiter = std::make_shared<pending>(ex_);
        pending_[id] = waiter;
        send_line(json::serialize(message));
        waiter->timer.expires_at(deadline);
        auto [ec] = co_await waiter->timer.async_wait(tuple_awaitable);
        pending_.erase(id);
        if (waiter->response) co_return std::move(*waiter->response);
        if (waiter->failure) co_return *waiter->failure;
        if (!ec) co_return rpc_failure{rpc_failure::kind::timeout, {}};
        co_return rpc_failure{rpc_failure::kind::cancelled, {}};
    }

    asio::awaitable<std::optional<rpc_failure>> notify(json::object message, clock::time_point) override {
        if (dead_) co_return rpc_failure{rpc_failure::kind::dead, *dead_};
        send_line(json::serialize(message));
        co_return std::nullopt;
    }

    void post_notification(json::object message) override {
        if (!dead_) send_line(json::serialize(message));
    }

    void set_protocol_version(std::string) override {}

    asio::awaitable<void> close() override {
        if (closing_) co_return;
        closing_ = true;
        mark_dead("the session was closed");
        // The polite way first: end of input. Then the group, by signal.
        boost::system::error_code ignored;
        stdin_.close(ignored);
        if (!co_await wait_exit(std::chrono::seconds(2))) {
            ::kill(-pid_, SIGTERM);
            if (!co_await wait_exit(std::chrono::seconds(2))) {
                ::kill(-pid_, SIGKILL);
                co_await wait_exit(std::chrono::seconds(10));
            }
        }
        stdout_.close(ignored);
        stderr_.close(ignored);
    }

    void fail(std::string why) override {
        mark_dead(std::move(why));
        ::kill(-pid_, SIGKILL);
    }

    std::optional<std::string> dead() const override { return dead_; }
    const char* name() const noexcept override { return "stdio"; }
    int child_pid() const noexcept override { return pid_; }

private:
    struct pending {
        explicit pending(asio::any_io_executor ex) : timer(ex) {}
        asio::steady_timer timer;
        std::optional<json::value> response;
        std::optional<rpc_failure> failure;
    };

    void send_line(std::string line) {
        line.push_back('\n');
        outbox_.push_back(std::move(line));
        if (writing_) return;
        writing_ = true;
        auto self = shared_from_this();
        asio::co_spawn(ex_, self->write_loop(self), asio::detached);
    }

    // One writer at a time, so lines never interleave.
    asio::awaitable<void> write_loop(std::shared_ptr<stdio_transport>) {
        while (!outbox_.empty()) {
            auto [ec, n] = co_await asio::async_write(stdin_, asio::buffer(outbox_.front()), tuple_awaitable);
            outbox_.pop_front();
            if (ec) {
                // The child's death is reported by the exit watcher, with its status.
                outbox_.clear();
                break;
            }
        }
        writing_ = false;
    }

    asio::awaitable<void> read_stdout(std::shared_ptr<stdio_transport>) {
        std::string buffered;
        // What is left in `buffered` after a read holds no newline: the next search starts
        // at the new bytes, so a long line costs its length once, not once per read.
        std::size_t searched = 0;
        std::array<char, 16384> chunk;
        for (;;) {
            auto [ec, n] = co_await stdout_.async_read_some(asio::buffer(chunk), tuple_awaitable);
            buffered.append(chunk.data(), n);
            std::size_t start = 0;
            for (auto nl = buffered.find('\n', searched); nl != std::string::npos; nl = buffered.find('\n', start)) {
                std::string_view line(buffered.data() + start, nl - start);
                if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
                if (!line.empty()) take_message(line);
                start = nl + 1;
            }
            buffered.erase(0, start);
            searched = buffered.size();
            if (buffered.size() > stdout_line_cap) {
                mark_dead(fmt::format("it wrote a line over {} bytes on stdout", stdout_line_cap));
                ::kill(-pid_, SIGKILL);
                co_return;
            }
            if (ec) break;
        }
        if (closing_ || dead_) co_return;
        // Its stdout closed: usually it is exiting, and its exit status says more.
        eof_grace_.expires_after(std::chrono::seconds(1));
        co_await eof_grace_.async_wait(tuple_awaitable);
        if (!dead_) {
            mark_dead("it closed its stdout");
            ::kill(-pid_, SIGKILL);
        }
    }

    void take_message(std::string_view line) {
        auto in = classify(line);
        switch (in.what) {
            case incoming::kind::response: {
                auto it = in.id ? pending_.find(*in.id) : pending_.end();
                if (it == pending_.end()) {
                    log_.debug("mcp client: an answer to no pending request", {{"server", server_}});
                    return;
                }
                it->second->response = std::move(in.message);
                it->second->timer.cancel();
                return;
            }
            case incoming::kind::request:
                log_.debug("mcp client: refusing a server request", {{"server", server_}, {"method", in.method}});
                send_line(json::serialize(in.reply));
                return;
            case incoming::kind::notification:
                log_.debug("mcp client: notification ignored", {{"server", server_}, {"method", in.method}});
                return;
            case incoming::kind::invalid:
                if (malformed_.admit(log_, server_)) {
                    log_.warn(
                        "mcp client: a line on stdout that is not JSON-RPC",
                        {{"server", server_}, {"error", in.problem}, {"line", gocompat::quote(line.substr(0, 200))}});
                }
                return;
        }
    }

    asio::awaitable<void> read_stderr(std::shared_ptr<stdio_transport>) {
        std::string line;
        bool over = false;
        std::array<char, 4096> chunk;
        for (;;) {
            auto [ec, n] = co_await stderr_.async_read_some(asio::buffer(chunk), tuple_awaitable);
            for (std::size_t i = 0; i < n; ++i) {
                if (chunk[i] == '\n') {
                    if (!line.empty()) log_.debug("mcp server stderr", {{"server", server_}, {"line", line}});
                    line.clear();
                    over = false;
                } else if (line.size() < stderr_line_cap) {
                    line.push_back(chunk[i]);
                } else if (!over) {
                    over = true;
                    line += "...";
                }
            }
            if (ec) break;
        }
        if (!line.empty()) log_.debug("mcp server stderr", {{"server", server_}, {"line", line}});
    }

    asio::awaitable<void> watch_exit(std::shared_ptr<stdio_transport>) {
        // Whatever ended the wait (an exit, or a watch that failed), the child is killed and reaped.
        (void)co_await exit_watch_.exited();
        // The group before the leader is reaped, so its id cannot have been reused yet.
        ::kill(-pid_, SIGKILL);
        int status = 0;
        while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {}
        reaped_ = true;
        mark_dead(describe_exit(status));
        eof_grace_.cancel();
        exit_wait_.cancel();
    }

    asio::awaitable<bool> wait_exit(std::chrono::steady_clock::duration limit) {
        if (reaped_) co_return true;
        exit_wait_.expires_after(limit);
        co_await exit_wait_.async_wait(tuple_awaitable);
        co_return reaped_;
    }

    void mark_dead(std::string why) {
        if (dead_) return;
        dead_ = why;
        for (auto& [id, waiter] : pending_) {
            waiter->failure = rpc_failure{rpc_failure::kind::dead, why};
            waiter->timer.cancel();
        }
        if (!closing_ && on_death) on_death(why);
    }

    asio::any_io_executor ex_;
    std::string server_;
    gocompat::logger log_;
    malformed_messages malformed_;
    int pid_;
    asio::writable_pipe stdin_;
    asio::readable_pipe stdout_;
    asio::readable_pipe stderr_;
    toolkit::child_exit_watch exit_watch_;
    asio::steady_timer exit_wait_;
    asio::steady_timer eof_grace_;
    std::unordered_map<std::int64_t, std::shared_ptr<pending>> pending_;
    std::deque<std::string> outbox_;
    bool writing_ = false;
    bool closing_ = false;
    bool reaped_ = false;
    std::optional<std::string> dead_;
};

// The child's environment: the scrubbed one, the passthrough names, then `env` (last wins).
std::vector<std::string> child_environment(const config::mcp_server& server) {
    auto env = toolkit::scrubbed_environment();
    // One entry per name: with duplicates, which one a child reads is up to its libc.
    const auto set = [&env](const std::string& name, std::string_view value) {
        std::erase_if(env, [&](const std::string& e) {
            return e.size() > name.size() && e[name.size()] == '=' && e.compare(0, name.size(), name) == 0;
        });
        env.push_back(name + "=" + std::string(value));
    };
    std::erase_if(env, [](const std::string& e) { return e.rfind("LLMFORMAT=", 0) == 0; });
    for (const auto& name : server.env_passthrough) {
        if (const char* v = std::getenv(name.c_str())) set(name, v);
    }
    for (const auto& [name, value] : server.env) set(name, value);
    return env;
}

}  // namespace

boost::system::result<std::shared_ptr<transport>, std::string> start_stdio(asio::any_io_executor ex,
                                                                           const config::mcp_server& server,
                                                                           gocompat::logger log) {
    ignore_sigpipe_once();
    toolkit::process_spec spec;
    spec.executable = server.command;
    spec.arguments = server.args;
    spec.environment = child_environment(server);
    spec.work_dir = server.work_dir;
    std::string error;
    auto child = toolkit::start_piped_child(std::move(spec), error);
    if (child.pid < 0) {
        return fmt::format("mcp server {}: starting {}: {}", gocompat::quote(server.name),
                           gocompat::quote(server.command), error);
    }
    auto t = std::make_shared<stdio_transport>(ex, server.name, std::move(log), child);
    if (auto problem = t->begin()) {
        return fmt::format("mcp server {}: {}", gocompat::quote(server.name), *problem);
    }
    return std::shared_ptr<transport>(std::move(t));
}

}  // namespace fiskai::mcpclient
