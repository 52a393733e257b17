#pragma once
// The one runtime every fisk-ai executable runs on: one io_context for the whole process,
// the app's work as a coroutine on it, and one two-stage shutdown.
//
// First SIGINT/SIGTERM: every drain hook runs (stop intake, let running work finish). If
// the work has not ended when the drain budget is spent, or on a second signal, every
// cancel hook runs (cancel running calls, which kills their process groups) and the app
// has `cancel_grace` to end before the process exits with exit_code::interrupted. A drain
// that ends in time exits with whatever the app's coroutine returned.

#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>

#include <chrono>
#include <functional>
#include <optional>
#include <vector>

namespace CLI {
class App;
}  // namespace CLI

namespace fiskai::app {

// Exit codes, one table for every fisk-ai executable.
namespace exit_code {
inline constexpr int ok = 0;
// The work could not be done, or what it was given (config, input, peer) was refused; the
// reason is on stderr.
inline constexpr int failure = 1;
// The command line itself is wrong (unknown flag, bad value, missing argument).
inline constexpr int usage = 2;
// A second signal, or a drain that overran its budget, cut the shutdown short.
inline constexpr int interrupted = 130;
}  // namespace exit_code

// The exit codes as --help states them.
inline constexpr const char* exit_codes_help =
    "Exit codes: 0 done; 1 failed (the reason is on stderr); 2 wrong command line; 130 a second "
    "interrupt cut the shutdown short.";

// Parses the command line. Returns nullopt to go on, or the code to exit with: 0 after
// --help or --version, exit_code::usage (with CLI11's message on stderr) for a bad one.
[[nodiscard]] std::optional<int> parse_command_line(CLI::App& cli, int argc, char** argv);

class runtime {
public:
    using clock = std::chrono::steady_clock;

    runtime() = default;
    runtime(const runtime&) = delete;
    runtime& operator=(const runtime&) = delete;

    [[nodiscard]] boost::asio::io_context& context() noexcept { return ioc_; }

    // Called, in order of registration, when the first signal arrives.
    void on_drain(std::function<void()> hook) { drain_hooks_.push_back(std::move(hook)); }
    // Called when a second signal arrives or the drain budget is spent.
    void on_cancel(std::function<void()> hook) { cancel_hooks_.push_back(std::move(hook)); }
    // How long a drain may take before the cancel stage starts; zero: no bound.
    void set_drain_budget(clock::duration budget) { drain_budget_ = budget; }
    // How long the app has to end after the cancel hooks ran.
    void set_cancel_grace(clock::duration grace) { cancel_grace_ = grace; }

    [[nodiscard]] bool draining() const noexcept { return draining_; }
    [[nodiscard]] bool cancelled() const noexcept { return cancelled_; }

    // Runs `main` to its end and returns its exit code, or exit_code::interrupted when the
    // cancel stage ran. An exception from `main` is printed as `<program>: error: <what>`
    // and becomes exit_code::failure.
    int run(boost::asio::awaitable<int> main, const char* program);

private:
    void start_drain();
    void start_cancel(const char* why);

    boost::asio::io_context ioc_;
    std::vector<std::function<void()>> drain_hooks_;
    std::vector<std::function<void()>> cancel_hooks_;
    clock::duration drain_budget_{};
    clock::duration cancel_grace_ = std::chrono::seconds(5);
    bool draining_ = false;
    bool cancelled_ = false;
    bool finished_ = false;
};

}  // namespace fiskai::app
