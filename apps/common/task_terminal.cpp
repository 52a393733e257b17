#include "task_terminal.hpp"
#include "terminal_text.hpp"

#include <fiskai/a2a/codec.hpp>
#include <fiskai/a2a_nats/task_caller.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/this_coro.hpp>

#include <fmt/format.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <functional>
#include <map>
#include <optional>
#include <memory>
#include <poll.h>
#include <thread>
#include <unistd.h>
#include <vector>

namespace fiskai::app {

namespace asio = boost::asio;
namespace a2a_nats = fiskai::a2a_nats;

read_outcome read_more(int fd, int stop_fd, std::string& pending) {
    for (;;) {
        pollfd fds[2] = {{fd, POLLIN, 0}, {stop_fd, POLLIN, 0}};
        if (::poll(fds, 2, -1) < 0) {
            if (errno == EINTR) continue;
            return read_outcome::stopped;
        }
        if (fds[1].revents != 0) return read_outcome::stopped;
        char buf[4096];
        const auto n = ::read(fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return read_outcome::end;
        pending.append(buf, static_cast<std::size_t>(n));
        return read_outcome::data;
    }
}

std::optional<std::string> take_line(std::string& pending) {
    const auto nl = pending.find('\n');
    if (nl == std::string::npos) return std::nullopt;
    std::string line = pending.substr(0, nl);
    pending.erase(0, nl + 1);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    return line;
}

namespace {

void err_line(std::string_view text) {
    fmt::print(stderr, "{}\n", terminal_safe(text));
    std::fflush(stderr);
}

// Reads lines from a terminal on its own thread and posts each to the executor, so a human
// typing never blocks the io_context. poll() on a self-pipe lets the destructor stop it.
class line_reader {
public:
    line_reader(int fd, asio::any_io_executor ex, std::function<void(std::optional<std::string>)> on_line) : fd_(fd) {
        if (::pipe(stop_) != 0) throw std::runtime_error("cannot create the terminal reader's pipe");
        thread_ = std::thread([this, ex, on_line = std::move(on_line)] {
            std::string pending;
            for (;;) {
                const auto read = read_more(fd_, stop_[0], pending);
                if (read == read_outcome::stopped) return;
                if (read == read_outcome::end) {
                    asio::post(ex, [on_line] { on_line(std::nullopt); });
                    return;
                }
                while (auto line = take_line(pending))
                    asio::post(ex, [on_line, line = std::move(*line)] { on_line(line); });
            }
        });
    }
    ~line_reader() {
        const char b = 0;
        [[maybe_unused]] const auto w = ::write(stop_[1], &b, 1);
        if (thread_.joinable()) thread_.join();
        ::close(stop_[0]);
        ::close(stop_[1]);
    }
    line_reader(const line_reader&) = delete;
    line_reader& operator=(const line_reader&) = delete;

private:
    int fd_;
    int stop_[2] = {-1, -1};
    std::thread thread_;
};

// The prompt for a question, as the human sees it.
std::string prompt_text(const a2a::task_question& q) {
    std::string out = fmt::format("? {}", one_line(q.question, 500));
    if (q.kind == "confirm") return out + " [y/N] ";
    if (q.kind == "approval") {
        return fmt::format("{}\n  tool {}: {}\nAllow once / allow for this Run / Deny [o/r/D] ", out,
                           one_line(q.tool, 160), one_line(q.command, 2000));
    }
    if (q.kind == "select") {
        for (std::size_t i = 0; i < q.options.size(); ++i)
            out += fmt::format("\n  {}) {}", i + 1, one_line(q.options[i], 160));
        return out + fmt::format("\nChoose 1-{}: ", q.options.size());
    }
    if (!q.default_value.empty()) return out + fmt::format(" [{}] ", one_line(q.default_value, 160));
    return out + " ";
}

// The answer a line gives, or nullopt when the line does not answer (ask again).
std::optional<a2a::task_answer> answer_from_line(const a2a::task_question& q, std::string line) {
    while (!line.empty() && (line.back() == ' ' || line.back() == '\t')) line.pop_back();
    while (!line.empty() && (line.front() == ' ' || line.front() == '\t')) line.erase(0, 1);
    std::string lower = line;
    for (auto& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    a2a::task_answer a;
    a.question_id = q.question_id;
    if (q.kind == "confirm") {
        a.confirmed = lower == "y" || lower == "yes";
    } else if (q.kind == "approval") {
        if (lower == "o" || lower == "once") {
            a.decision = "once";
        } else if (lower == "r" || lower == "run") {
            a.decision = "run";
        } else {
            a.decision = "deny";
        }
    } else if (q.kind == "select") {
        std::size_t n = 0;
        try {
            std::size_t used = 0;
            n = static_cast<std::size_t>(std::stoul(lower, &used));
            if (used != lower.size()) return std::nullopt;
        } catch (const std::exception&) {
            return std::nullopt;
        }
        if (n < 1 || n > q.options.size()) return std::nullopt;
        a.selected = n - 1;
    } else {
        a.value = line.empty() ? q.default_value : line;
    }
    return a;
}

a2a::task_answer declined(const std::string& question_id, std::string reason) {
    a2a::task_answer a;
    a.question_id = question_id;
    a.declined = true;
    a.reason = std::move(reason);
    return a;
}

// Renders one event on stderr.
void render_event(const a2a::task_event& e, std::map<std::string, std::string>& call_names) {
    std::visit(
        [&](const auto& b) {
            using B = std::decay_t<decltype(b)>;
            if constexpr (std::is_same_v<B, a2a::status_block>) {
                if (b.iteration > 0) {
                    err_line(fmt::format("· {} (iteration {})", b.phase, b.iteration));
                } else {
                    err_line(fmt::format("· {}", b.phase));
                }
            } else if constexpr (std::is_same_v<B, a2a::text_block>) {
                err_line(b.text);
            } else if constexpr (std::is_same_v<B, a2a::tool_call_block>) {
                call_names[b.id] = b.name;
                err_line(fmt::format("→ {} {}", b.name, one_line(b.input ? b.input->text() : "{}", 160)));
            } else if constexpr (std::is_same_v<B, a2a::tool_result_block>) {
                const auto it = call_names.find(b.call_id);
                const std::string name = it == call_names.end() ? b.call_id : it->second;
                std::string state = b.is_error ? "error" : "ok";
                if (b.exec && b.exec->exit_code != 0) state = fmt::format("exit {}", b.exec->exit_code);
                err_line(fmt::format("← {} {}: {}", name, state, one_line(b.output, 160)));
            } else if constexpr (std::is_same_v<B, a2a::agent_call_block>) {
                err_line(fmt::format("→ agent {} ({})", b.name, b.task));
            } else if constexpr (std::is_same_v<B, a2a::unknown_block>) {
                // A kind this version does not know: shown from its raw bytes.
                err_line(fmt::format("· {} {}", b.type(), one_line(b.raw().text(), 160)));
            }
            // thinking: not shown; the empty block does not decode.
        },
        e.block);
}

}  // namespace

asio::awaitable<int> run_task_at_terminal(a2a_nats::task_caller& caller, runtime& rt, task_terminal_options o) {
    const auto ex = co_await asio::this_coro::executor;
    const bool tty = ::isatty(o.input_fd) == 1;
    const auto mode = o.questions == question_mode::ask && !tty ? question_mode::decline : o.questions;

    auto print_json = [&](const a2a::message& m) {
        if (!o.json) return;
        if (auto body = a2a::encode(m)) {
            fmt::print("{}\n", *body);
            std::fflush(stdout);
        }
    };

    // The first interrupt asks the worker to stop at its next boundary; the second (the
    // runtime's cancel stage) stops waiting.
    // The hooks outlive this coroutine (a signal may land while the process exits): they
    // reach the caller through a pointer cleared when the coroutine ends.
    struct caller_ref {
        std::shared_ptr<a2a_nats::task_caller*> ptr;
        ~caller_ref() { *ptr = nullptr; }
    } ref{std::make_shared<a2a_nats::task_caller*>(&caller)};
    rt.on_drain([target = ref.ptr] {
        if (*target == nullptr) return;
        if (auto sent = (*target)->cancel(cancel_reason); !sent) {
            err_line(fmt::format("could not send cancel: {}", sent.error().message));
        } else {
            err_line("cancelling; the task stops at its next step (interrupt again to exit now)");
        }
    });
    rt.on_cancel([target = ref.ptr] {
        if (*target != nullptr) (*target)->close();
    });

    auto ack = co_await caller.start();
    if (!ack) {
        err_line(ack.error().message);
        co_return ack.error().kind == a2a_nats::task_failure::closed ? task_exit::interrupted : task_exit::not_started;
    }
    print_json(*ack);
    const std::string task = caller.task_id();
    const std::string continue_hint = fmt::format("{} --continue {} \"<prompt>\"", o.continue_command, task);
    if (!ack->accepted) err_line(fmt::format("the agent refused the task: {}", ack->reason));

    // The question a human is answering at the terminal, and the reader it types into.
    std::optional<a2a::task_question> prompting;
    std::unique_ptr<line_reader> reader;
    std::vector<std::string> deferred;
    std::map<std::string, std::string> call_names;

    auto on_line = [&](std::optional<std::string> line) {
        if (!prompting) return;
        const auto& q = *prompting;
        std::optional<a2a::task_answer> answer;
        if (!line) {
            answer = declined(q.question_id, "no answer was given at the terminal");
        } else {
            answer = answer_from_line(q, *line);
            if (!answer) {
                fmt::print(stderr, "{}", terminal_safe(prompt_text(q)));
                std::fflush(stderr);
                return;
            }
        }
        if (auto sent = caller.answer(std::move(*answer)); !sent) err_line(sent.error().message);
        prompting.reset();
    };
    const auto line_handler = std::make_shared<std::function<void(std::optional<std::string>)>>(on_line);

    for (;;) {
        auto arrival = co_await caller.next();
        if (!arrival) {
            prompting.reset();
            reader.reset();
            const auto kind = arrival.error().kind;
            if (kind == a2a_nats::task_failure::closed) co_return task_exit::interrupted;
            err_line(arrival.error().message);
            co_return kind == a2a_nats::task_failure::idle ? task_exit::idle : task_exit::not_started;
        }
        print_json(arrival->message);
        if (!arrival->closed_question.empty() && prompting && prompting->question_id == arrival->closed_question) {
            // The worker gave up on it (or it was answered elsewhere): withdraw the prompt.
            prompting.reset();
            err_line(fmt::format("\n(question {} closed)", arrival->closed_question));
        }
        if (const auto* ev = std::get_if<a2a::task_event>(&arrival->message)) {
            if (!o.json) render_event(*ev, call_names);
        } else if (const auto* q = std::get_if<a2a::task_question>(&arrival->message)) {
            if (mode == question_mode::decline) {
                // Said on stderr, since a declined approval leaves no tool result to show.
                err_line(
                    fmt::format("declined question {} ({}): {}", q->question_id,
                                o.questions == question_mode::ask ? "stdin is not a terminal" : "--decline-questions",
                                one_line(q->question, 500)));
                if (auto sent = caller.answer(declined(q->question_id, cannot_ask_reason)); !sent) {
                    err_line(sent.error().message);
                }
            } else if (mode == question_mode::defer) {
                deferred.push_back(q->question_id);
                err_line(fmt::format("open question {}: {}", q->question_id, one_line(q->question, 500)));
            } else {
                prompting = *q;
                caller.hold_question(q->question_id);
                fmt::print(stderr, "{}", terminal_safe(prompt_text(*q)));
                std::fflush(stderr);
                if (!reader) {
                    // Lines posted after this coroutine ended find the handler gone.
                    reader = std::make_unique<line_reader>(
                        o.input_fd, ex, [weak = std::weak_ptr(line_handler)](std::optional<std::string> line) {
                            if (const auto h = weak.lock()) (*h)(std::move(line));
                        });
                }
            }
        } else if (const auto* r = std::get_if<a2a::task_result>(&arrival->message)) {
            reader.reset();
            if (!o.json && !r->text.empty()) {
                // The answer as written when it goes to a file or a pipe; shown safely on a terminal.
                fmt::print("{}\n", ::isatty(STDOUT_FILENO) == 1 ? terminal_safe(r->text) : r->text);
                std::fflush(stdout);
            }
            for (const auto& open : deferred) {
                err_line(fmt::format("open question {}: continue with --continue {}", open, task));
            }
            if (r->stop_reason == a2a::stop_reasons::suspended) {
                err_line(fmt::format("suspended; continue with: {}", continue_hint));
                co_return task_exit::suspended;
            }
            co_return ack->accepted ? task_exit::result : task_exit::refused;
        } else if (const auto* e = std::get_if<a2a::task_error>(&arrival->message)) {
            reader.reset();
            if (!o.json) {
                err_line(e->code.empty() ? fmt::format("error: {}", e->error)
                                         : fmt::format("error ({}): {}", e->code, e->error));
            }
            for (const auto& open : deferred) {
                err_line(fmt::format("open question {}: continue with --continue {}", open, task));
            }
            if (!ack->accepted) co_return task_exit::refused;
            if (e->code == "interrupted") err_line(fmt::format("continue with: {}", continue_hint));
            co_return task_exit::error;
        }
    }
}

}  // namespace fiskai::app
