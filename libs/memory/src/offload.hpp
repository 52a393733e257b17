#pragma once
// Runs a blocking function on the blocking pool and resumes the awaiting coroutine on its
// own executor with the result. Deliberately not cancellable: a memory write that has
// started is always finished and its outcome delivered (serve.md Amendment 6), so the
// awaiting coroutine is resumed only when the work is done.

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <type_traits>
#include <utility>

namespace fiskai::memory::detail {

template <class F>
boost::asio::awaitable<std::invoke_result_t<F&>> offload(boost::asio::any_io_executor pool, F fn) {
    using R = std::invoke_result_t<F&>;
    auto initiate = [pool](auto handler, F work_fn) mutable {
        // The caller's executor must not run out of work while the job runs elsewhere.
        auto resume_on = boost::asio::get_associated_executor(handler);
        auto guard = boost::asio::make_work_guard(resume_on);
        boost::asio::post(
            pool, [handler = std::move(handler), work_fn = std::move(work_fn), guard = std::move(guard)]() mutable {
                R value = work_fn();
                auto ex = guard.get_executor();
                boost::asio::dispatch(
                    ex, [handler = std::move(handler), value = std::move(value), guard = std::move(guard)]() mutable {
                        std::move(handler)(std::move(value));
                        guard.reset();
                    });
            });
    };
    co_return co_await boost::asio::async_initiate<const boost::asio::use_awaitable_t<>&, void(R)>(
        initiate, boost::asio::use_awaitable, std::move(fn));
}

}  // namespace fiskai::memory::detail
