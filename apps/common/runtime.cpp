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

namespace fiskai::app {

namespace asio = boost::asio;

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
    asio::signal_set signals(ioc_, SIGINT, SIGTERM);
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
        signals.async_wait(on_signal);
    };
    signals.async_wait(on_signal);

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
        signals.cancel();
        budget.cancel();
        grace.cancel();
    });
    ioc_.run();
    return cancelled_ ? exit_code::interrupted : result;
}

}  // namespace fiskai::app
