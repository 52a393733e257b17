#include "runtime.hpp"

#include "app_support.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <csignal>
#include <cstdlib>
#include <exception>
#include <optional>
#include <pthread.h>

namespace fiskai::app {

namespace asio = boost::asio;

namespace {

// The disposition of SIGINT and SIGTERM once the io_context has stopped: a signal that
// arrives while the process is exiting (destructors, the sanitizers' exit checks) ends it
// at once with the interrupted code instead of killing it by the default action.
extern "C" void exit_on_late_signal(int) { std::_Exit(fiskai::app::exit_code::interrupted); }

// Removes the signal_set (Asio then restores the default action) and installs
// exit_on_late_signal with both signals blocked, so no signal can fall between the two.
void hand_signals_to_exit(std::optional<asio::signal_set>& signals) {
    sigset_t both;
    sigset_t previous;
    sigemptyset(&both);
    sigaddset(&both, SIGINT);
    sigaddset(&both, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &both, &previous);
    signals.reset();
    struct sigaction action {};
    action.sa_handler = exit_on_late_signal;
    sigemptyset(&action.sa_mask);
    sigaction(SIGINT, &action, nullptr);
    sigaction(SIGTERM, &action, nullptr);
    pthread_sigmask(SIG_SETMASK, &previous, nullptr);
}

}  // namespace

std::optional<int> parse_command_line(CLI::App& cli, int argc, char** argv) {
    try {
        cli.parse(argc, argv);
    } catch (const CLI::Success& e) {
        return cli.exit(e);  // --help, --version
    } catch (const CLI::ParseError& e) {
        (void)cli.exit(e);  // prints the message and the usage hint on stderr
        return exit_code::usage;
    }
    return std::nullopt;
}

void runtime::start_drain() {
    draining_ = true;
    for (auto& hook : drain_hooks_) hook();
}

void runtime::start_cancel(const char* why) {
    if (cancelled_) return;
    cancelled_ = true;
    log_info(fmt::format("{}: cancelling running work", why));
    for (auto& hook : cancel_hooks_) hook();
}

int runtime::run(asio::awaitable<int> main, const char* program) {
    int result = exit_code::failure;
    std::optional<asio::signal_set> signals(std::in_place, ioc_, SIGINT, SIGTERM);
    asio::steady_timer budget(ioc_);
    asio::steady_timer grace(ioc_);

    auto arm_grace = [&] {
        grace.expires_after(cancel_grace_);
        grace.async_wait([&](const boost::system::error_code& ec) {
            if (ec || finished_) return;
            log_warning(fmt::format("the work did not end within {}s of being cancelled; exiting now",
                                    std::chrono::duration_cast<std::chrono::seconds>(cancel_grace_).count()));
            std::fflush(stderr);
            std::_Exit(exit_code::interrupted);
        });
    };
    std::function<void(const boost::system::error_code&, int)> on_signal = [&](const boost::system::error_code& ec,
                                                                               int) {
        if (ec || finished_) return;
        if (!draining_) {
            start_drain();
            if (drain_budget_ > clock::duration::zero()) {
                budget.expires_after(drain_budget_);
                budget.async_wait([&](const boost::system::error_code& timer_ec) {
                    if (timer_ec || finished_) return;
                    start_cancel("the drain did not finish within its budget");
                    arm_grace();
                });
            }
        } else {
            start_cancel("second signal");
            arm_grace();
        }
        signals->async_wait(on_signal);
    };
    signals->async_wait(on_signal);

    asio::co_spawn(ioc_, std::move(main), [&](std::exception_ptr e, int code) {
        finished_ = true;
        result = code;
        if (e) {
            try {
                std::rethrow_exception(e);
            } catch (const std::exception& ex) {
                fmt::print(stderr, "{}: error: {}\n", program, ex.what());
            } catch (...) {
                fmt::print(stderr, "{}: error: unknown failure\n", program);
            }
            result = exit_code::failure;
        }
        signals->cancel();
        budget.cancel();
        grace.cancel();
    });
    ioc_.run();
    hand_signals_to_exit(signals);
    return cancelled_ ? exit_code::interrupted : result;
}

}  // namespace fiskai::app
