// offload(): the io thread keeps running while a blocking call runs on the pool, a
// cancelled awaiter resumes at once while the call still finishes, exceptions cross over.

#include <fiskai/jetstream/offload.hpp>

#include "async_test.hpp"

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <catch2/catch.hpp>

#include <atomic>
#include <future>
#include <stdexcept>
#include <thread>

namespace asio = boost::asio;
using namespace std::chrono_literals;
using fiskai::jetstream::offload;

TEST_CASE("offload: a timer on the io thread keeps ticking during a slow blocking call", "[jetstream][offload]") {
    asio::thread_pool pool(2);
    asio::io_context io;
    int ticks = 0;
    bool done = false;
    std::thread::id call_thread;
    const auto io_thread = std::this_thread::get_id();
    std::thread::id resumed_on;

    auto ticker = [&]() -> asio::awaitable<void> {
        asio::steady_timer t(co_await asio::this_coro::executor);
        while (!done) {
            t.expires_after(10ms);
            co_await t.async_wait(asio::use_awaitable);
            ++ticks;
        }
    };
    auto slow = [&]() -> asio::awaitable<int> {
        auto blocking = [&] {
            call_thread = std::this_thread::get_id();
            std::this_thread::sleep_for(400ms);  // the blocking call under test, not a wait
            return 42;
        };
        const int v = co_await offload(pool.get_executor(), blocking);
        resumed_on = std::this_thread::get_id();
        done = true;
        co_return v;
    };
    asio::co_spawn(io, ticker(), asio::detached);
    auto result = asio::co_spawn(io, slow(), asio::use_future);
    io.run_for(10s);
    REQUIRE(result.wait_for(0s) == std::future_status::ready);
    CHECK(result.get() == 42);
    CHECK(call_thread != io_thread);
    CHECK(resumed_on == io_thread);
    // 400 ms at 10 ms a tick: the io thread was free for nearly all of it.
    CHECK(ticks >= 20);
}

TEST_CASE("offload: a cancelled awaiter resumes at once, the call still finishes", "[jetstream][offload]") {
    asio::thread_pool pool(1);
    asio::io_context io;
    std::atomic<bool> release{false};
    std::atomic<bool> finished{false};
    asio::cancellation_signal cancel;
    bool aborted = false;

    auto awaiter = [&]() -> asio::awaitable<void> {
        auto blocking = [&] {
            while (!release) std::this_thread::yield();
            finished = true;
            return 1;
        };
        try {
            co_await offload(pool.get_executor(), blocking);
        } catch (const boost::system::system_error& e) {
            aborted = e.code() == asio::error::operation_aborted;
        }
    };
    asio::co_spawn(io, awaiter(), asio::bind_cancellation_slot(cancel.slot(), asio::detached));
    asio::steady_timer t(io);
    t.expires_after(20ms);
    t.async_wait([&](auto) { cancel.emit(asio::cancellation_type::terminal); });
    // Runs until the awaiter has resumed: the call is still blocked.
    REQUIRE(fiskai::test::wait_until(
        [&] {
            io.run_one_for(10ms);
            return aborted;
        },
        5s));
    CHECK_FALSE(finished);
    release = true;
    io.restart();
    io.run_for(5s);  // returns once the finished call has been delivered (and dropped)
    CHECK(finished);
    pool.join();
}

TEST_CASE("offload_to_thread: a cancelled awaiter's call is waited for before its context goes",
          "[jetstream][offload]") {
    std::atomic<bool> release{false};
    bool aborted = false;
    {
        asio::io_context io;
        asio::cancellation_signal cancel;
        auto awaiter = [&]() -> asio::awaitable<void> {
            auto blocking = [&] {
                while (!release) std::this_thread::sleep_for(1ms);
                return 1;
            };
            try {
                co_await fiskai::jetstream::offload_to_thread(blocking);
            } catch (const boost::system::system_error& e) {
                aborted = e.code() == asio::error::operation_aborted;
            }
        };
        asio::co_spawn(io, awaiter(), asio::bind_cancellation_slot(cancel.slot(), asio::detached));
        io.poll();
        cancel.emit(asio::cancellation_type::terminal);
        REQUIRE(fiskai::test::wait_until(
            [&] {
                io.run_one_for(10ms);
                return aborted;
            },
            5s));
        // The awaiter has gone on; its call has not returned, so the context must stay.
        CHECK_FALSE(fiskai::jetstream::wait_for_offloaded_threads(50ms));
        release = true;
        CHECK(fiskai::jetstream::wait_for_offloaded_threads(5s));
        // Destroyed here with the call's result posted and not run: under ASan, a post after
        // this point would be a use after free.
    }
    CHECK(aborted);
}

TEST_CASE("offload: an exception thrown by the call is rethrown in the awaiter", "[jetstream][offload]") {
    asio::thread_pool pool(1);
    auto body = [&]() -> asio::awaitable<std::string> {
        auto failing = []() -> int { throw std::runtime_error("nats.c said no"); };
        try {
            co_await offload(pool.get_executor(), failing);
        } catch (const std::runtime_error& e) {
            co_return std::string(e.what());
        }
        co_return std::string("no exception");
    };
    CHECK(fiskai::test::run_awaitable(body()) == "nats.c said no");
    auto void_body = [&]() -> asio::awaitable<bool> {
        bool ran = false;
        auto fn = [&] { ran = true; };
        co_await offload(pool.get_executor(), fn);
        co_return ran;
    };
    CHECK(fiskai::test::run_awaitable(void_body()));
}

// Amendment 6: a started journal or memory write is finished and its outcome delivered,
// whatever happens to the awaiter.
TEST_CASE("offload_to_completion: a cancelled awaiter still waits for the call and gets its result",
          "[jetstream][offload]") {
    asio::thread_pool pool(1);
    asio::io_context io;
    std::atomic<bool> release{false};
    asio::cancellation_signal cancel;
    bool cancel_emitted = false;
    bool resumed = false;
    bool aborted = false;
    int value = 0;

    auto awaiter = [&]() -> asio::awaitable<void> {
        auto blocking = [&] {
            while (!release) std::this_thread::yield();
            return 7;
        };
        try {
            value = co_await fiskai::jetstream::offload_to_completion(pool.get_executor(), blocking);
        } catch (const boost::system::system_error& e) {
            aborted = e.code() == asio::error::operation_aborted;
        }
        resumed = true;
    };
    asio::co_spawn(io, awaiter(), asio::bind_cancellation_slot(cancel.slot(), asio::detached));
    asio::steady_timer t(io);
    t.expires_after(20ms);
    t.async_wait([&](auto) {
        cancel.emit(asio::cancellation_type::terminal);
        cancel_emitted = true;
    });
    REQUIRE(fiskai::test::wait_until(
        [&] {
            io.run_one_for(10ms);
            return cancel_emitted;
        },
        5s));
    // Everything the cancellation could have queued has run: the awaiter is still waiting.
    io.poll();
    CHECK_FALSE(resumed);
    release = true;
    REQUIRE(fiskai::test::wait_until(
        [&] {
            io.run_one_for(10ms);
            return resumed;
        },
        5s));
    CHECK_FALSE(aborted);
    CHECK(value == 7);
    pool.join();
}
