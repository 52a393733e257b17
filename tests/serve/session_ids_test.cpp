// Derived session ids (serve.md §5.6): stable, tagged, 40 hex digits, apart across channels
// and across part boundaries.

#include <fiskai/serve/session_ids.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cctype>
#include <set>

using namespace fiskai;

namespace {
bool is_lower_hex(std::string_view s) {
    return std::all_of(s.begin(), s.end(),
                       [](char c) { return std::isdigit(static_cast<unsigned char>(c)) || (c >= 'a' && c <= 'f'); });
}
}  // namespace

TEST_CASE("a derived session id is the tag, a dash and 40 hex digits of the hash") {
    const auto id = serve::derive_session_id("q", "fisk-ai.session.queue.v1", {"worker", "task-1"});
    REQUIRE(id.size() == 2 + 40);
    CHECK(id.substr(0, 2) == "q-");
    CHECK(is_lower_hex(id.substr(2)));
    // sha256("fisk-ai.session.queue.v1" 0x00 "worker" 0x00 "task-1"), first 20 bytes, computed
    // independently with `printf 'fisk-ai.session.queue.v1\0worker\0task-1' | sha256sum`.
    CHECK(id == "q-1ff3898ed3db295e7b8324238da34b62e2b4e410");
    CHECK(id == serve::queue_session_id("worker", "task-1"));
}

TEST_CASE("session ids are stable: the same inputs give the same id") {
    CHECK(serve::a2a_session_id("w", "alice", "t1") == serve::a2a_session_id("w", "alice", "t1"));
    CHECK(serve::queue_session_id("w", "t1") == serve::queue_session_id("w", "t1"));
    CHECK(serve::slack_session_id("w", "T1", "C1", "1.2") == serve::slack_session_id("w", "T1", "C1", "1.2"));
}

TEST_CASE("each channel tags its ids") {
    CHECK(serve::a2a_session_id("w", "alice", "t1").rfind("a2a-", 0) == 0);
    CHECK(serve::queue_session_id("w", "t1").rfind("q-", 0) == 0);
    CHECK(serve::slack_session_id("w", "T", "C", "1.2").rfind("slack-", 0) == 0);
}

TEST_CASE("the same inputs on different channels never give the same hash") {
    // The prefix inside the hash keeps channels apart even when the parts agree.
    const auto a = serve::derive_session_id("x", "fisk-ai.session.a2a.v1", {"w", "t1"});
    const auto q = serve::derive_session_id("x", "fisk-ai.session.queue.v1", {"w", "t1"});
    CHECK(a != q);
    CHECK(serve::queue_session_id("w", "t1").substr(2) != serve::a2a_session_id("w", "", "t1").substr(4));
}

TEST_CASE("every part counts, and so does where one part ends") {
    CHECK(serve::derive_session_id("t", "p", {"ab", "c"}) != serve::derive_session_id("t", "p", {"a", "bc"}));
    CHECK(serve::derive_session_id("t", "p", {"abc"}) != serve::derive_session_id("t", "p", {"ab", "c"}));
    CHECK(serve::derive_session_id("t", "p", {"a", ""}) != serve::derive_session_id("t", "p", {"a"}));
    std::set<std::string> ids{serve::a2a_session_id("w", "alice", "t1"), serve::a2a_session_id("w", "bob", "t1"),
                              serve::a2a_session_id("w", "alice", "t2"), serve::a2a_session_id("w2", "alice", "t1")};
    CHECK(ids.size() == 4);
    CHECK(serve::slack_session_id("w", "T", "C", "1.2") != serve::slack_session_id("w", "T", "C2", "1.2"));
}
