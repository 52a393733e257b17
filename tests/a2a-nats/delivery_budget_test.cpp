// The bound on what an asynchronous subscription may post to the io_context and the
// io_context has not taken: by count and by bytes, with drops counted once.

#include "nats_util.hpp"

#include <catch2/catch.hpp>

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
