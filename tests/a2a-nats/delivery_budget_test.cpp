// The bound on what an asynchronous subscription may post to the io_context and the
// io_context has not taken: by count and by bytes, with drops counted once.

#include "nats_support.hpp"
#include "nats_util.hpp"

#include <catch2/catch.hpp>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

using fiskai::a2a_nats::detail::delivery_budget;

TEST_CASE("delivery budget: messages past the count or the bytes are refused and counted", "[a2a-nats][budget]") {
    delivery_budget budget(3, 1000);
    CHECK(budget.reserve(100));
    CHECK(budget.reserve(100));
    CHECK(budget.reserve(100));
    CHECK_FALSE(budget.reserve(1));  // a fourth message
    budget.release(100);
    CHECK(budget.reserve(100));        // room again once one is taken
    CHECK_FALSE(budget.reserve(800));  // 1100 bytes would be held
    CHECK(budget.take_dropped() == 2);
    CHECK(budget.take_dropped() == 0);  // each drop reported once
    for (int i = 0; i < 3; ++i) budget.release(100);
    CHECK(budget.reserve(1000));  // empty again: the whole byte bound is free
}

TEST_CASE("delivery budget: reserving and releasing from two threads keeps the count exact", "[a2a-nats][budget]") {
    delivery_budget budget(1 << 20, std::size_t{1} << 40);
    auto work = [&] {
        for (int i = 0; i < 100000; ++i) {
            if (budget.reserve(7)) budget.release(7);
        }
    };
    std::thread a(work), b(work);
    a.join();
    b.join();
    CHECK(budget.take_dropped() == 0);
    // Nothing is held: exactly the bound fits.
    for (int i = 0; i < (1 << 20); ++i) REQUIRE(budget.reserve(0));
    CHECK_FALSE(budget.reserve(0));
}

// unsubscribe() is a barrier: its owner may destroy what the handler posts to (the
// io_context) right after it, so no handler call may be under way or start by then.
TEST_CASE("async subscription: unsubscribe waits out a handler call under way, and none starts after it",
          "[a2a-nats][nats]") {
    using fiskai::a2a_nats::detail::async_subscription;
    using namespace std::chrono_literals;
    nats_test::nats_env env;
    std::mutex mutex;
    std::condition_variable changed;
    int calls = 0;
    bool release = false;
    auto sub = async_subscription::subscribe(env.server_conn->native_handle(), "barrier.test", {}, [&](natsMsg*) {
        std::unique_lock lock(mutex);
        ++calls;
        changed.notify_all();
        changed.wait_for(lock, 10s, [&] { return release; });
    });
    REQUIRE(natsConnection_Flush(env.server_conn->native_handle()) == NATS_OK);
    REQUIRE(natsConnection_PublishString(env.client_conn->native_handle(), "barrier.test", "one") == NATS_OK);
    {
        std::unique_lock lock(mutex);
        REQUIRE(changed.wait_for(lock, 10s, [&] { return calls == 1; }));
    }
    std::atomic<bool> unsubscribed{false};
    std::thread unsubscriber([&] {
        sub->unsubscribe();
        unsubscribed = true;
    });
    // While the handler runs, unsubscribe() does not return (bounded: it would be at once).
    std::this_thread::sleep_for(300ms);
    CHECK_FALSE(unsubscribed);
    {
        const std::lock_guard lock(mutex);
        release = true;
    }
    changed.notify_all();
    unsubscriber.join();
    CHECK(unsubscribed);
    // Nothing more reaches the handler, even what was already on its way.
    REQUIRE(natsConnection_PublishString(env.client_conn->native_handle(), "barrier.test", "two") == NATS_OK);
    REQUIRE(natsConnection_Flush(env.client_conn->native_handle()) == NATS_OK);
    REQUIRE(natsConnection_Flush(env.server_conn->native_handle()) == NATS_OK);
    const std::lock_guard lock(mutex);
    CHECK(calls == 1);
}
