#pragma once
// Runs a blocking call (nats.c's JetStream API, fdatasync) on a blocking pool and resumes
// the awaiting coroutine on its own executor, so the io thread never blocks.
//
// Cancellation: a terminal cancellation of the awaiter resumes it at once with
// boost::asio::error::operation_aborted; the call itself is not interrupted (nats.c calls
// carry their own timeouts) and its result is dropped when it finishes. Completion and
// cancellation are both decided on the awaiter's executor, which must not run handlers
// concurrently (one io thread, D1), so exactly one of them resumes the coroutine.
//
// offload_to_completion() is the other kind: the awaiter's cancellation does not reach it,
// so the awaiter resumes only when the call has finished, with its outcome. A journal or
// memory write that has started is always finished and reported (serve.md Amendment 6).

#include <boost/asio/associated_cancellation_slot.hpp>
#include <boost/asio/associated_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/cancellation_type.hpp>
#include <boost/asio/execution/outstanding_work.hpp>
#include <boost/asio/prefer.hpp>
#include <boost/asio/error.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/system/system_error.hpp>

#include <atomic>
#include <chrono>
#include <exception>
#include <memory>
#include <optional>
#include <thread>
#include <type_traits>
#include <utility>
#include <variant>

namespace fiskai::jetstream {

namespace detail {

// How many offload_to_thread() calls are still running on their threads, the post of their
// result included.
inline std::atomic<int> threads_running{0};

template <typename R>
using offload_value = std::conditional_t<std::is_void_v<R>, std::monostate, R>;

template <typename R, typename Handler>
struct offload_state {
    explicit offload_state(Handler&& h) : handler(std::move(h)) {}
    Handler handler;
    bool completed = false;  // touched only on the awaiter's executor
};

// The one place that resumes the awaiter: a copyable `complete(error, value)` that lets the
// first call through and ignores the rest. When `Cancellable`, a terminal cancellation of
// the awaiter is the first call, with operation_aborted.
template <bool Cancellable, typename V, typename Handler>
auto make_completion(Handler handler) {
    auto io = boost::asio::get_associated_executor(handler);
    auto state = std::make_shared<offload_state<V, Handler>>(std::move(handler));
    auto complete = [state](std::exception_ptr e, std::optional<V> v) {
        if (state->completed) return;
        state->completed = true;
        if constexpr (Cancellable) {
            auto slot = boost::asio::get_associated_cancellation_slot(state->handler);
            if (slot.is_connected()) slot.clear();
        }
        std::move(state->handler)(std::move(e), std::move(v));
    };
    if constexpr (Cancellable) {
        auto slot = boost::asio::get_associated_cancellation_slot(state->handler);
        if (slot.is_connected()) {
            slot.assign([io, complete](boost::asio::cancellation_type type) {
                if ((type & boost::asio::cancellation_type::terminal) == boost::asio::cancellation_type::none) return;
                // Resume through the executor rather than inside the emitter's call.
                boost::asio::post(io, [complete] {
                    complete(
                        std::make_exception_ptr(boost::system::system_error(boost::asio::error::operation_aborted)),
                        std::nullopt);
                });
            });
        }
    }
    return std::pair(io, std::move(complete));
}

// offload_with() and offload_to_completion(), which differ only in whether the awaiter's
// cancellation resumes it early.
template <bool Cancellable, typename Submit, typename F>
auto offload_via(Submit submit, F fn) -> boost::asio::awaitable<std::invoke_result_t<F&>> {
    using R = std::invoke_result_t<F&>;
    using V = offload_value<R>;
    using signature = void(std::exception_ptr, std::optional<V>);

    auto initiation = [submit = std::move(submit)](auto handler, F f) mutable {
        auto made = make_completion<Cancellable, V>(std::move(handler));
        auto io = made.first;
        auto complete = std::move(made.second);
        // Tracked work: the awaiter's context keeps running until the call has finished,
        // even when the awaiter gave up on it.
        auto tracked = boost::asio::prefer(io, boost::asio::execution::outstanding_work.tracked);
        submit([tracked, complete = std::optional(complete), f = std::optional<F>(std::move(f))]() mutable {
            std::exception_ptr error;
            std::optional<V> value;
            try {
                if constexpr (std::is_void_v<R>) {
                    (*f)();
                    value.emplace();
                } else {
                    value.emplace((*f)());
                }
            } catch (...) {
                error = std::current_exception();
            }
            boost::asio::post(tracked, [complete = *complete, error, value = std::move(value)]() mutable {
                complete(error, std::move(value));
            });
            // Everything the job holds goes before the work count drops: once it does, the
            // awaiter's context may be destroyed.
            f.reset();
            complete.reset();
            tracked = decltype(tracked)();
        });
    };

    // use_awaitable rethrows the exception_ptr argument when it is set.
    std::optional<V> value = co_await boost::asio::async_initiate<const boost::asio::use_awaitable_t<>, signature>(
        std::move(initiation), boost::asio::use_awaitable, std::move(fn));
    if constexpr (std::is_void_v<R>) {
        co_return;
    } else {
        co_return std::move(*value);
    }
}

}  // namespace detail

// Runs `fn()` through `submit` (a callable taking the job, which it must run once on some
// thread that may block) and returns its result on the awaiting coroutine's executor. An
// exception thrown by `fn` is rethrown in the awaiter.
template <typename Submit, typename F>
auto offload_with(Submit submit, F fn) -> boost::asio::awaitable<std::invoke_result_t<F&>> {
    return detail::offload_via<true>(std::move(submit), std::move(fn));
}

// Starts an operation that reports once, from any thread, through a callback: `start` is
// called at once on the awaiter's thread with `done`, a copyable callable taking the
// result, to be called exactly once. The awaiter resumes on its executor with the result;
// cancellation behaves as offload()'s (the result is dropped when it comes).
template <typename R, typename Start>
auto await_callback(Start start) -> boost::asio::awaitable<R> {
    using signature = void(std::exception_ptr, std::optional<R>);
    auto initiation = [](auto handler, Start begin) {
        auto made = detail::make_completion<true, R>(std::move(handler));
        auto io = made.first;
        auto complete = std::move(made.second);
        // The work count is held until the result is delivered; a holder shared by the
        // copies of `done` lets the one call release it.
        auto tracked = std::make_shared<
            std::optional<decltype(boost::asio::prefer(io, boost::asio::execution::outstanding_work.tracked))>>(
            boost::asio::prefer(io, boost::asio::execution::outstanding_work.tracked));
        auto done = [tracked, complete](R value) {
            auto ex = std::move(**tracked);
            tracked->reset();
            boost::asio::post(ex,
                              [complete, value = std::move(value)]() mutable { complete(nullptr, std::move(value)); });
        };
        try {
            begin(std::move(done));
        } catch (...) {
            boost::asio::post(io, [complete, e = std::current_exception()] { complete(e, std::nullopt); });
        }
    };
    std::optional<R> value = co_await boost::asio::async_initiate<const boost::asio::use_awaitable_t<>, signature>(
        std::move(initiation), boost::asio::use_awaitable, std::move(start));
    co_return std::move(*value);
}

// Runs `fn()` on `pool` (an executor whose handlers may block, e.g. a thread_pool's).
template <typename PoolExecutor, typename F>
auto offload(PoolExecutor pool, F fn) -> boost::asio::awaitable<std::invoke_result_t<F&>> {
    auto submit = [pool](auto job) { boost::asio::post(pool, std::move(job)); };
    return offload_with(std::move(submit), std::move(fn));
}

// Runs `fn()` on `pool` like offload(), but the awaiter's cancellation is not connected: it
// resumes when the call has finished, with the call's result (Amendment 6).
template <typename PoolExecutor, typename F>
auto offload_to_completion(PoolExecutor pool, F fn) -> boost::asio::awaitable<std::invoke_result_t<F&>> {
    auto submit = [pool](auto job) { boost::asio::post(pool, std::move(job)); };
    return detail::offload_via<false>(std::move(submit), std::move(fn));
}

// Runs `fn()` on a thread of its own, for a call that may wait long (a fetch that waits for
// work) and so must not hold a pool thread. The thread is detached: it owns nothing but
// the job. Its last act is posting the result to the awaiter's io_context, so that context
// must outlive it: an owner that destroys its context without running it until it has no
// work left (a test) calls wait_for_offloaded_threads() first.
template <typename F>
auto offload_to_thread(F fn) -> boost::asio::awaitable<std::invoke_result_t<F&>> {
    auto submit = [](auto job) {
        ++detail::threads_running;
        try {
            std::thread([job = std::move(job)]() mutable {
                job();
                --detail::threads_running;
            }).detach();
        } catch (...) {
            --detail::threads_running;
            throw;
        }
    };
    return offload_with(std::move(submit), std::move(fn));
}

// Blocks until every offload_to_thread() call in the process has returned and posted its
// result, or `limit` has passed; whether they all had. Closing the connection first ends a
// fetch's wait at once.
inline bool wait_for_offloaded_threads(std::chrono::steady_clock::duration limit) {
    const auto end = std::chrono::steady_clock::now() + limit;
    while (detail::threads_running.load() != 0) {
        if (std::chrono::steady_clock::now() >= end) return false;
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return true;
}

}  // namespace fiskai::jetstream
