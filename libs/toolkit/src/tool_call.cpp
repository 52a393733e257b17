#include <fiskai/gocompat/quote.hpp>
#include <fiskai/toolkit/slots.hpp>
#include <fiskai/toolkit/tool_call.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/deferred.hpp>
#include <boost/asio/experimental/parallel_group.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json/object.hpp>
#include <boost/system/system_error.hpp>

#include <fmt/format.h>

namespace fiskai::toolkit {
namespace {

namespace asio = boost::asio;
using std::chrono::steady_clock;

// Whole seconds as "30s", anything finer as milliseconds: the bound as an operator set it.
std::string describe_bound(steady_clock::duration d) {
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(d).count();
    if (ms % 1000 == 0) return fmt::format("{}s", ms / 1000);
    return fmt::format("{}ms", ms);
}

// Holds the in-flight count up for as long as it lives.
struct in_flight_guard {
    explicit in_flight_guard(std::size_t* c) : count(c) {
        if (count != nullptr) ++*count;
    }
    ~in_flight_guard() {
        if (count != nullptr) --*count;
    }
    in_flight_guard(const in_flight_guard&) = delete;
    in_flight_guard& operator=(const in_flight_guard&) = delete;
    std::size_t* count;
};

// Waits until `when` or until cancelled, without throwing: whether `when` came. The check
// comes first because a wait started after the cancellation was emitted would never see it.
asio::awaitable<bool> wait_until(steady_clock::time_point when) {
    auto state = co_await asio::this_coro::cancellation_state;
    if (state.cancelled() != asio::cancellation_type::none) co_return false;
    asio::steady_timer timer(co_await asio::this_coro::executor, when);
    auto [ec] = co_await timer.async_wait(asio::as_tuple(asio::use_awaitable));
    co_return !ec;
}

}  // namespace

std::string running_text(const tool& t) {
    return t.kind() == tool_kind::command ? fmt::format("running command {}", gocompat::quote(t.title()))
                                          : fmt::format("running tool {}", gocompat::quote(t.name()));
}

std::string deadline_text(const tool& t, steady_clock::duration bound) {
    return fmt::format("{}: context deadline exceeded (timed out after {})", running_text(t), describe_bound(bound));
}

asio::awaitable<outcome> run_tool_call(tool_ptr t, boost::json::value arguments, tool_call_policy policy) {
    // Cancellation is read, never thrown: the slot and the count must be restored below.
    co_await asio::this_coro::throw_if_cancelled(false);
    auto cancel_state = co_await asio::this_coro::cancellation_state;
    auto cancelled = [&] { return cancel_state.cancelled() != asio::cancellation_type::none; };

    if (arguments.is_null()) arguments = boost::json::object{};
    if (!arguments.is_object()) {
        co_return outcome::failure(
            fmt::format("invalid arguments for tool {}: arguments must be an object", gocompat::quote(t->name())));
    }
    if (auto problem = t->check_arguments(arguments)) co_return outcome::failure(std::move(*problem));
    const std::string command_line = t->describe_call(arguments);

    const auto posture = t->confirm().posture;
    if (posture == confirm_posture::unknown) {
        co_return outcome::failure(
            fmt::format("tool {} cannot say whether it needs approval, so it is not run", gocompat::quote(t->name())));
    }
    if (posture == confirm_posture::required) {
        if (!policy.approve) {
            co_return outcome::failure(
                fmt::format("tool {} needs approval and nobody on this surface can give it, so it is not run",
                            gocompat::quote(t->name())));
        }
        if (auto refusal = co_await policy.approve(*t, command_line)) co_return std::move(*refusal);
    }
    if (cancelled()) co_return outcome::failure(running_text(*t) + ": context canceled");

    // The slot is taken only now: a human deliberating above holds none.
    slot_pool::slot slot;
    if (policy.slots != nullptr) {
        if (policy.on_queued && policy.slots->available() == 0) policy.on_queued(*t, command_line);
        try {
            slot = co_await policy.slots->acquire();
        } catch (const std::exception&) {
            co_return outcome::failure(running_text(*t) + ": context canceled while waiting for a free slot");
        }
    }

    std::optional<outcome> result;
    const auto started = steady_clock::now();
    {
        in_flight_guard counted(policy.in_flight);
        if (policy.on_start) policy.on_start(*t, command_line);

        auto call_options = std::move(policy.call);
        call_options.timeout = steady_clock::duration::zero();
        // An exception is this call's failure, caught here so that it keeps the OS's words.
        auto guarded = [&]() -> asio::awaitable<std::optional<outcome>> {
            try {
                co_return co_await t->call(arguments, std::move(call_options));
            } catch (const boost::system::system_error& e) {
                // The OS's words (`Too many open files`), not Boost's decorated what().
                result = outcome::failure(fmt::format("{}: {}", running_text(*t), e.code().message()));
            } catch (const std::exception& e) {
                result = outcome::failure(fmt::format("{}: {}", running_text(*t), e.what()));
            }
            co_return std::nullopt;
        };
        // The deadline and the alongside work end without throwing when the race is over:
        // at one tool call per task, the unwinding of two cancelled branches was measurable.
        auto deadline = [&]() -> asio::awaitable<bool> {
            co_return co_await wait_until(policy.timeout > steady_clock::duration::zero()
                                              ? steady_clock::now() + policy.timeout
                                              : steady_clock::time_point::max());
        };
        auto alongside = [&]() -> asio::awaitable<void> {
            if (policy.alongside) {
                try {
                    co_await policy.alongside(*t, command_line);
                } catch (const std::exception&) {
                    // Its own failure (keepalives that could not be sent) is not the call's.
                }
            }
            (void)co_await wait_until(steady_clock::time_point::max());
        };

        // The first branch to finish ends the race; every branch has finished when it returns.
        auto executor = co_await asio::this_coro::executor;
        auto [order, call_error, called, deadline_error, expired, alongside_error] =
            co_await asio::experimental::make_parallel_group(asio::co_spawn(executor, guarded(), asio::deferred),
                                                             asio::co_spawn(executor, deadline(), asio::deferred),
                                                             asio::co_spawn(executor, alongside(), asio::deferred))
                .async_wait(asio::experimental::wait_for_one(), asio::use_awaitable);
        (void)deadline_error;
        (void)alongside_error;
        if (order[0] == 1 && expired) {
            result = outcome::failure(deadline_text(*t, policy.timeout));
        } else if (called) {
            result = std::move(*called);
        } else if (call_error && !result) {
            // guarded() keeps every std::exception's words: this one is not one.
            result = outcome::failure(running_text(*t) + ": unknown exception");
        }
        if (!result) result = outcome::failure(running_text(*t) + ": context canceled");
        if (result->is_deferral() && !policy.carries_deferral) {
            result = outcome::failure(fmt::format("tool {} deferred a question, which this surface cannot carry",
                                                  gocompat::quote(t->name())));
        }
        slot = {};  // free the slot before anyone is told the call finished
    }
    if (policy.on_finish) policy.on_finish(*t, command_line, *result, steady_clock::now() - started);
    co_return std::move(*result);
}

}  // namespace fiskai::toolkit
