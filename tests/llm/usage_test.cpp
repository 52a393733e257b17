// Token counts: sums saturate at the cap, whatever the counts held.

#include <fiskai/llm/types.hpp>

#include <catch2/catch.hpp>

#include <limits>

using namespace fiskai::llm;

TEST_CASE("usage sums saturate at the token cap and ignore negatives", "[llm][usage]") {
    constexpr auto big = std::numeric_limits<std::int64_t>::max();
    constexpr auto small = std::numeric_limits<std::int64_t>::min();
    CHECK(add_tokens(1, 2) == 3);
    CHECK(add_tokens(max_token_count, 1) == max_token_count);
    CHECK(add_tokens(big, big) == max_token_count);
    CHECK(add_tokens(-5, 7) == 7);
    CHECK(add_tokens(small, small) == 0);

    CHECK(total_tokens(usage{1, 2, 3, 4}) == 10);
    CHECK(total_tokens(usage{big, big, big, big}) == max_token_count);
    CHECK(total_tokens(usage{-1, small, 5, 0}) == 5);

    usage sum{10, 20, 30, 40};
    add_usage(sum, usage{1, 2, 3, 4});
    CHECK(sum == usage{11, 22, 33, 44});
    add_usage(sum, usage{big, big, -1, small});
    CHECK(sum == usage{max_token_count, max_token_count, 33, 44});
}
