#include "async_test.hpp"

#include <fiskai/toolkit/slots.hpp>

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/system/system_error.hpp>

#include <catch2/catch.hpp>

#include <optional>
#include <thread>
#include <vector>

using namespace fiskai::toolkit;
using namespace std::chrono_literals;
namespace asio = boost::asio;

namespace {

// What one waiter saw: nothing yet, a slot, or the wait aborted.
enum class wait_state { waiting, granted, aborted };

// Waits for a slot and keeps it in `held` until the test drops it. A function, not a
// lambda: a coroutine lambda's captures die with the closure, before the coroutine ends.
asio::awaitable<void> wait_for_slot(slot_pool& pool, wait_state& state, std::optional<slot_pool::slot>& held) {
    try {
        held.emplace(co_await pool.acquire());
        state = wait_state::granted;
    } catch (const boost::system::system_error& e) {
        CHECK(e.code() == asio::error::operation_aborted);
        state = wait_state::aborted;
    }
}

// Starts a waiter; `cancel` can cut its wait short.
void start_waiter(asio::io_context& ioc, slot_pool& pool, wait_state& state, std::optional<slot_pool::slot>& held,
                  asio::cancellation_signal* cancel = nullptr) {
    if (cancel != nullptr) {
        asio::co_spawn(ioc, wait_for_slot(pool, state, held),
                       asio::bind_cancellation_slot(cancel->slot(), asio::detached));
    } else {
        asio::co_spawn(ioc, wait_for_slot(pool, state, held), asio::detached);
    }
}

// Takes a slot, records its turn, keeps the slot for a moment, and counts itself done once
// the slot is back in the pool.
asio::awaitable<void> hold_briefly(slot_pool& pool, std::vector<int>& order, int& done, int id) {
    {
        auto s = co_await pool.acquire();
        order.push_back(id);
        asio::steady_timer t(co_await asio::this_coro::executor, 1ms);
        co_await t.async_wait(asio::use_awaitable);
    }
    ++done;
}

// Runs handlers until `done` holds, failing the test at the deadline.
template <typename Condition>
void run_until(asio::io_context& ioc, Condition done, std::chrono::steady_clock::duration deadline = 10s) {
    const auto end = std::chrono::steady_clock::now() + deadline;
    while (!done()) {
        REQUIRE(std::chrono::steady_clock::now() < end);
        ioc.restart();
        ioc.run_for(5ms);
    }
}

}  // namespace

TEST_CASE("a cancelled wait for a slot loses no slot and wedges nothing", "[slots]") {
    asio::io_context ioc;
    slot_pool pool(ioc.get_executor(), 1);

    wait_state first = wait_state::waiting;
    std::optional<slot_pool::slot> first_slot;
    start_waiter(ioc, pool, first, first_slot);
    run_until(ioc, [&] { return first == wait_state::granted; });
    CHECK(pool.available() == 0);

    // Many waiters queue behind it and are all cancelled while they wait.
    constexpr int cancelled_waiters = 20;
    std::vector<asio::cancellation_signal> signals(cancelled_waiters);
    std::vector<wait_state> states(cancelled_waiters, wait_state::waiting);
    std::vector<std::optional<slot_pool::slot>> slots(cancelled_waiters);
    for (int i = 0; i < cancelled_waiters; ++i) start_waiter(ioc, pool, states[i], slots[i], &signals[i]);
    ioc.restart();
    ioc.poll();
    for (auto& s : signals) s.emit(asio::cancellation_type::terminal);
    run_until(ioc, [&] {
        for (auto s : states) {
            if (s != wait_state::aborted) return false;
        }
        return true;
    });
    CHECK(pool.available() == 0);

    // The slot still works: released, the next waiter gets it, and then the pool is full again.
    wait_state next = wait_state::waiting;
    std::optional<slot_pool::slot> next_slot;
    start_waiter(ioc, pool, next, next_slot);
    ioc.restart();
    ioc.poll();
    CHECK(next == wait_state::waiting);
    first_slot.reset();
    run_until(ioc, [&] { return next == wait_state::granted; });
    next_slot.reset();
    CHECK(pool.available() == 1);
}

TEST_CASE("slots are handed out first come first served", "[slots]") {
    asio::io_context ioc;
    slot_pool pool(ioc.get_executor(), 1);
    std::vector<int> order;
    int done = 0;
    for (int i = 0; i < 5; ++i) asio::co_spawn(ioc, hold_briefly(pool, order, done, i), asio::detached);
    // Until the last holder has given its slot back, not merely taken it.
    run_until(ioc, [&] { return done == 5; });
    CHECK(order == std::vector<int>{0, 1, 2, 3, 4});
    CHECK(pool.available() == 1);
}

TEST_CASE("a slot released on another thread wakes the waiter on its own executor", "[slots]") {
    asio::io_context ioc;
    slot_pool pool(ioc.get_executor(), 1);
    wait_state first = wait_state::waiting, second = wait_state::waiting;
    std::optional<slot_pool::slot> first_slot, second_slot;
    start_waiter(ioc, pool, first, first_slot);
    run_until(ioc, [&] { return first == wait_state::granted; });
    start_waiter(ioc, pool, second, second_slot);
    ioc.restart();
    ioc.poll();
    std::thread releaser([&] { first_slot.reset(); });
    releaser.join();
    run_until(ioc, [&] { return second == wait_state::granted; });
    second_slot.reset();
    CHECK(pool.available() == 1);
}

TEST_CASE("a cancellation racing a grant never loses the slot", "[slots]") {
    // The grant and the cancellation land in the same turn of the loop: whichever wins,
    // the pool ends with its one slot free again.
    for (int round = 0; round < 50; ++round) {
        asio::io_context ioc;
        slot_pool pool(ioc.get_executor(), 1);
        wait_state holder = wait_state::waiting, racer = wait_state::waiting;
        std::optional<slot_pool::slot> holder_slot, racer_slot;
        asio::cancellation_signal signal;
        start_waiter(ioc, pool, holder, holder_slot);
        run_until(ioc, [&] { return holder == wait_state::granted; });
        start_waiter(ioc, pool, racer, racer_slot, &signal);
        ioc.restart();
        ioc.poll();
        if (round % 2 == 0) {
            holder_slot.reset();
            signal.emit(asio::cancellation_type::terminal);
        } else {
            signal.emit(asio::cancellation_type::terminal);
            holder_slot.reset();
        }
        run_until(ioc, [&] { return racer != wait_state::waiting; });
        racer_slot.reset();
        CHECK(pool.available() == 1);
    }
}

TEST_CASE("destroying the pool ends the waits still queued", "[slots]") {
    asio::io_context ioc;
    auto pool = std::make_unique<slot_pool>(ioc.get_executor(), 1);
    wait_state holder = wait_state::waiting, waiter = wait_state::waiting;
    std::optional<slot_pool::slot> holder_slot, waiter_slot;
    start_waiter(ioc, *pool, holder, holder_slot);
    run_until(ioc, [&] { return holder == wait_state::granted; });
    start_waiter(ioc, *pool, waiter, waiter_slot);
    ioc.restart();
    ioc.poll();
    pool.reset();
    run_until(ioc, [&] { return waiter == wait_state::aborted; });
    holder_slot.reset();  // releasing into a destroyed pool is harmless
}
