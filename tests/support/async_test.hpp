#pragma once
// Runs a coroutine to completion on a fresh io_context, failing the test if it does not
// finish within the deadline (no test can hang the suite).

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/use_future.hpp>

#include <chrono>
#include <stdexcept>
#include <string>
#include <thread>

namespace fiskai::test {

template <typename T>
T run_awaitable(boost::asio::awaitable<T> work,
                std::chrono::steady_clock::duration deadline = std::chrono::seconds(60)) {
    boost::asio::io_context ioc;
    auto future = boost::asio::co_spawn(ioc, std::move(work), boost::asio::use_future);
    ioc.run_for(deadline);
    if (future.wait_for(std::chrono::seconds(0)) != std::future_status::ready) {
        throw std::runtime_error("coroutine did not finish within the test deadline");
    }
    return future.get();
}

// Polls `condition` until it holds or the deadline passes; returns whether it held.
template <typename Condition>
bool wait_until(Condition condition, std::chrono::steady_clock::duration deadline = std::chrono::seconds(10)) {
    const auto end = std::chrono::steady_clock::now() + deadline;
    while (std::chrono::steady_clock::now() < end) {
        if (condition()) return true;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return condition();
}

// The same from inside a coroutine: waits on its executor (so the operations under test
// keep running on it) until `condition` holds or `limit` passes; returns whether it held.
template <typename Condition>
boost::asio::awaitable<bool> eventually(Condition condition,
                                        std::chrono::steady_clock::duration limit = std::chrono::seconds(10)) {
    boost::asio::steady_timer timer(co_await boost::asio::this_coro::executor);
    const auto end = std::chrono::steady_clock::now() + limit;
    while (!condition()) {
        if (std::chrono::steady_clock::now() > end) co_return false;
        timer.expires_after(std::chrono::milliseconds(5));
        co_await timer.async_wait(boost::asio::use_awaitable);
    }
    co_return true;
}

inline std::string source_path(const std::string& relative) { return std::string(FISKAI_SOURCE_DIR) + "/" + relative; }
inline std::string binary_path(const std::string& relative) { return std::string(FISKAI_BINARY_DIR) + "/" + relative; }

}  // namespace fiskai::test
