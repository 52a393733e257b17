// Fold (agent-llm-state.md §6, 48-52) and the turn additions.
#include <fiskai/runstate/state.hpp>

#include <catch2/catch.hpp>

#include <limits>
#include <string>
#include <vector>

namespace rs = fiskai::runstate;
namespace llm = fiskai::llm;

namespace {

rs::record meta(const std::string& prompt = "go", bool interactive = false) {
    rs::meta_record m;
    m.run_id = "r";
    m.prompt = prompt;
    m.interactive = interactive;
    m.fingerprint.model = "m";
    return {1, m};
}

llm::message assistant_msg(std::vector<llm::content_block> blocks) { return {llm::role::assistant, std::move(blocks)}; }

rs::record assistant(std::uint64_t seq, std::int64_t iter, std::vector<std::string> tool_ids,
                     std::string stop = "tool_use", std::int64_t in = 10, std::int64_t out = 5, std::int64_t cr = 0,
                     std::int64_t cc = 0) {
    std::vector<llm::content_block> blocks;
    if (tool_ids.empty()) blocks.push_back(llm::text_block{"answer " + std::to_string(seq)});
    for (const auto& id : tool_ids) blocks.push_back(llm::tool_use_block{id, "tool", "{}", {}});
    rs::assistant_record a{iter, assistant_msg(std::move(blocks)), std::move(stop), in, out, cr, cc};
    return {seq, a};
}

rs::record result(std::uint64_t seq, const std::string& id, bool remote = false) {
    return {seq, rs::tool_result_record{id, {id, "out " + id, false}, remote}};
}

rs::record user(std::uint64_t seq, const std::string& text) {
    return {seq, rs::user_record{{llm::role::user, {llm::text_block{text}}}}};
}

rs::record terminal(std::uint64_t seq, rs::terminal_reason r) { return {seq, rs::terminal_record{r, ""}}; }

std::string text_of(const llm::content_block& b) { return std::get<llm::text_block>(b).text; }

}  // namespace

TEST_CASE("fold rebuilds the prompt, commits complete turns, derives counters and sums cache tiers", "[fold]") {
    auto s = rs::fold({meta("hello"), assistant(2, 0, {"a", "b"}, "tool_use", 100, 10, 0, 3000), result(3, "a", true),
                       result(4, "b"), assistant(5, 1, {}, "end_turn", 20, 7, 3000, 0),
                       terminal(6, rs::terminal_reason::completed)});
    REQUIRE(s.has_value());
    REQUIRE(s->messages.size() == 4);
    CHECK(s->messages[0].who == llm::role::user);
    CHECK(text_of(s->messages[0].content[0]) == "hello");
    CHECK(s->messages[1].who == llm::role::assistant);
    REQUIRE(s->messages[2].content.size() == 2);
    CHECK(std::get<llm::tool_result_block>(s->messages[2].content[0]).tool_use_id == "a");
    CHECK(s->counters == rs::counters{2, 2, 1, 120, 17, 3000, 3000});
    CHECK(s->next_iteration == 2);
    CHECK(s->last_stop_reason == "end_turn");
    CHECK(s->completed());
    CHECK(!s->pending);
    CHECK(s->last_seq == 6);
}

TEST_CASE("a journal written before prompt caching folds its cache tiers as zero", "[fold]") {
    auto s = rs::fold({meta(), assistant(2, 0, {}, "end_turn", 5, 6)});
    REQUIRE(s.has_value());
    CHECK(s->counters.cache_read_tokens == 0);
    CHECK(s->counters.cache_create_tokens == 0);
    CHECK(!s->terminal);
    CHECK(!s->completed());
}

TEST_CASE("an unanswered tool batch becomes pending, not a message", "[fold]") {
    auto s = rs::fold({meta(), assistant(2, 0, {"a"}), result(3, "a"), assistant(4, 1, {"b", "c"}), result(5, "c"),
                       terminal(6, rs::terminal_reason::suspended)});
    REQUIRE(s.has_value());
    CHECK(s->messages.size() == 3);
    REQUIRE(s->pending.has_value());
    CHECK(s->pending->iteration == 1);
    CHECK(s->pending->stop_reason == "tool_use");
    REQUIRE(s->pending->results.size() == 1);
    CHECK(s->pending->results[0].tool_use_id == "c");
    CHECK(s->pending->answered == std::set<std::string>{"c"});
    CHECK(s->next_iteration == 2);
    CHECK(!s->completed());
}

TEST_CASE("a trailing pause_turn turn is committed and its stop reason surfaced", "[fold]") {
    auto s = rs::fold({meta(), assistant(2, 0, {}, "pause_turn")});
    REQUIRE(s.has_value());
    CHECK(s->messages.size() == 2);
    CHECK(!s->pending);
    CHECK(s->last_stop_reason == "pause_turn");
    CHECK(s->next_iteration == 1);
}

TEST_CASE("only version 3 folds, the first record must be meta, seqs must increase", "[fold]") {
    auto empty = rs::fold({});
    REQUIRE(!empty);
    CHECK(empty.error().code == rs::errc::no_records);
    CHECK(empty.error().message == "no records");

    auto no_meta = rs::fold({terminal(1, rs::terminal_reason::completed)});
    REQUIRE(!no_meta);
    CHECK(no_meta.error().message == "first record is not meta");

    auto old = meta();
    std::get<rs::meta_record>(old.payload).version = 2;
    auto v = rs::fold({old});
    REQUIRE(!v);
    CHECK(v.error().code == rs::errc::unsupported_version);
    CHECK(v.error().message == "unsupported snapshot version: snapshot version 2, supported 3");

    auto order = rs::fold({meta(), assistant(3, 0, {}), assistant(3, 1, {})});
    REQUIRE(!order);
    CHECK(order.error().message == "corrupt record sequence: seq 3 not increasing after 3");

    auto second_meta = meta();
    second_meta.seq = 2;
    auto dup = rs::fold({meta(), second_meta});
    REQUIRE(!dup);
    CHECK(dup.error().message == "corrupt record sequence: duplicate meta at seq 2");

    auto early = rs::fold({meta(), result(2, "a")});
    REQUIRE(!early);
    CHECK(early.error().message == "corrupt record sequence: tool_result before any assistant at seq 2");
}

TEST_CASE("follow-ups fold as the runtime builds them", "[fold]") {
    SECTION("after an answer a follow-up is a new user message") {
        auto s = rs::fold({meta(), assistant(2, 0, {}, "end_turn"), user(3, "more")});
        REQUIRE(s.has_value());
        REQUIRE(s->messages.size() == 3);
        CHECK(text_of(s->messages[2].content[0]) == "more");
        // The position survives a trailing follow-up.
        CHECK(s->next_iteration == 1);
        CHECK(s->last_stop_reason == "end_turn");
    }
    SECTION("a follow-up merges into a trailing results turn; consecutive follow-ups merge") {
        auto s = rs::fold({meta(), assistant(2, 0, {"a"}), result(3, "a"), user(4, "one"), user(5, "two")});
        REQUIRE(s.has_value());
        REQUIRE(s->messages.size() == 3);
        const auto& last = s->messages.back();
        CHECK(last.who == llm::role::user);
        REQUIRE(last.content.size() == 3);
        CHECK(std::holds_alternative<llm::tool_result_block>(last.content[0]));
        CHECK(text_of(last.content[2]) == "two");
    }
    SECTION("runtime-merged and separately journaled histories fold identically") {
        // An errored turn leaves the prompt dangling; the retry merges into it at runtime.
        auto journaled = rs::fold({meta("first"), user(2, "retry")});
        REQUIRE(journaled.has_value());
        REQUIRE(journaled->messages.size() == 1);
        CHECK(journaled->messages[0].content.size() == 2);
        CHECK(text_of(journaled->messages[0].content[1]) == "retry");
    }
    SECTION("a chat resumes across a suspended terminal") {
        auto s = rs::fold({meta("hi", true), assistant(2, 0, {}, "end_turn"),
                           terminal(3, rs::terminal_reason::suspended), user(4, "again"),
                           assistant(5, 1, {}, "end_turn", 3, 4), terminal(6, rs::terminal_reason::suspended)});
        REQUIRE(s.has_value());
        CHECK(s->interactive);
        CHECK(s->messages.size() == 4);
        CHECK(!s->completed());
        CHECK(s->terminal->reason == rs::terminal_reason::suspended);
        CHECK(s->next_iteration == 2);
    }
}

TEST_CASE("turn usage and start iteration count from the last follow-up", "[fold]") {
    auto none = rs::fold({meta(), assistant(2, 0, {}, "end_turn", 10, 1, 2, 3)});
    REQUIRE(none.has_value());
    CHECK(none->turn_usage == llm::usage{10, 1, 2, 3});
    CHECK(none->turn_start_iteration == 0);

    auto s = rs::fold({meta(), assistant(2, 0, {}, "end_turn", 10, 1), user(3, "next"),
                       assistant(4, 1, {"a"}, "tool_use", 7, 2), result(5, "a"),
                       assistant(6, 2, {}, "end_turn", 5, 3, 4, 0)});
    REQUIRE(s.has_value());
    CHECK(s->turn_usage == llm::usage{12, 5, 4, 0});
    CHECK(s->turn_start_iteration == 1);
    CHECK(s->counters.in_tokens == 22);
}

TEST_CASE("fold refuses negative counts and an iteration with no successor and saturates token sums", "[fold]") {
    constexpr auto big = std::numeric_limits<std::int64_t>::max();
    SECTION("an iteration at INT64_MAX") {
        auto s = rs::fold({meta(), assistant(2, big, {}, "end_turn")});
        REQUIRE(!s);
        CHECK(s.error().code == rs::errc::corrupt);
        CHECK(s.error().message ==
              "corrupt record sequence: assistant at seq 2 has iteration 9223372036854775807, outside 0 to "
              "9223372036854775806");
    }
    SECTION("a negative iteration") {
        auto s = rs::fold({meta(), assistant(2, -1, {}, "end_turn")});
        REQUIRE(!s);
        CHECK(s.error().message ==
              "corrupt record sequence: assistant at seq 2 has iteration -1, outside 0 to 9223372036854775806");
    }
    SECTION("a negative token count") {
        auto s = rs::fold({meta(), assistant(2, 0, {}, "end_turn", 10, 5, -3, 0)});
        REQUIRE(!s);
        CHECK(s.error().message == "corrupt record sequence: assistant at seq 2 has a negative token count (-3)");
    }
    SECTION("huge token counts saturate at the cap") {
        auto s = rs::fold({meta(), assistant(2, 0, {"a"}, "tool_use", big, big, big, big), result(3, "a"),
                           assistant(4, big - 1, {}, "end_turn", big, 1, 2, 3)});
        REQUIRE(s.has_value());
        CHECK(s->counters.in_tokens == llm::max_token_count);
        CHECK(s->counters.out_tokens == llm::max_token_count);
        CHECK(s->counters.cache_read_tokens == llm::max_token_count);
        CHECK(s->counters.cache_create_tokens == llm::max_token_count);
        CHECK(s->turn_usage ==
              llm::usage{llm::max_token_count, llm::max_token_count, llm::max_token_count, llm::max_token_count});
        CHECK(s->next_iteration == big);
    }
    SECTION("a follow-up after an iteration just below the limit") {
        auto s = rs::fold({meta(), assistant(2, big - 1, {}, "end_turn"), user(3, "more")});
        REQUIRE(s.has_value());
        CHECK(s->turn_start_iteration == big);
    }
}
