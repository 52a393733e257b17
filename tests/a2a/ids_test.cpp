// KSUIDs and stamping.

#include <fiskai/a2a/ids.hpp>
#include <fiskai/a2a/stamp.hpp>

#include "support.hpp"

#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <set>
#include <thread>
#include <vector>

using namespace fiskai::a2a;

TEST_CASE("a2a.ids: KSUIDs match segmentio's encoding", "[a2a][ids]") {
    std::array<std::uint8_t, 16> zero{};
    CHECK(make_ksuid(0, zero) == "000000000000000000000000000");
    std::array<std::uint8_t, 16> ones;
    ones.fill(0xFF);
    CHECK(make_ksuid(0xFFFFFFFF, ones) == "aWgEPTl1tmebfsQzFP4bxwgy80V");  // ksuid.Max
    // segmentio's README example: 0ujtsYcgvSTl8PAuAdqWYSMnLOv carries timestamp 107608047.
    const std::array<std::uint8_t, 16> payload{0xB5, 0xA1, 0xCD, 0x34, 0xB5, 0xF9, 0x9D, 0x11,
                                               0x54, 0xFB, 0x68, 0x53, 0x34, 0x5C, 0x97, 0x35};
    CHECK(make_ksuid(107608047, payload) == "0ujtsYcgvSTl8PAuAdqWYSMnLOv");
}

TEST_CASE("a2a.ids: fresh ids are 27 base-62 characters, distinct, and time-ordered by second", "[a2a][ids]") {
    std::set<std::string> seen;
    for (int i = 0; i < 1000; ++i) {
        const auto id = new_id();
        REQUIRE(id.size() == ksuid_length);
        REQUIRE(id.find_first_not_of("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz") ==
                std::string::npos);
        CHECK(seen.insert(id).second);
    }
    CHECK(ksuid_timestamp(std::chrono::system_clock::from_time_t(1'400'000'000)) == 0);
    CHECK(ksuid_timestamp(std::chrono::system_clock::from_time_t(1'400'000'061)) == 61);
    // The first character moves with time: an id minted now sorts after one from 2020.
    const auto old = make_ksuid(ksuid_timestamp(std::chrono::system_clock::from_time_t(1'600'000'000)), {});
    CHECK(old < new_id());
}

// Ids draw their random bytes from a per-thread reserve: threads never share one, and a
// forked child refills its own instead of minting its parent's next ids.
TEST_CASE("a2a.ids: ids minted on many threads and across a fork are all distinct", "[a2a][ids]") {
    constexpr int per_thread = 2000;
    std::vector<std::vector<std::string>> minted(4);
    std::vector<std::thread> threads;
    for (auto& out : minted) {
        threads.emplace_back([&out] {
            for (int i = 0; i < per_thread; ++i) out.push_back(new_id());
        });
    }
    for (auto& t : threads) t.join();
    std::set<std::string> seen;
    for (const auto& out : minted) seen.insert(out.begin(), out.end());
    CHECK(seen.size() == minted.size() * per_thread);

    (void)new_id();  // this thread's reserve now holds the bytes of the next ids
    int fds[2];
    REQUIRE(::pipe(fds) == 0);
    const pid_t child = ::fork();
    REQUIRE(child >= 0);
    if (child == 0) {
        std::string ids;
        for (int i = 0; i < 4; ++i) ids += new_id();
        const bool ok = ::write(fds[1], ids.data(), ids.size()) == static_cast<ssize_t>(ids.size());
        ::_exit(ok ? 0 : 1);
    }
    ::close(fds[1]);
    std::string from_child(4 * ksuid_length, '\0');
    std::size_t got = 0;
    while (got < from_child.size()) {
        const auto n = ::read(fds[0], from_child.data() + got, from_child.size() - got);
        if (n <= 0) break;
        got += static_cast<std::size_t>(n);
    }
    ::close(fds[0]);
    int status = 0;
    ::waitpid(child, &status, 0);
    REQUIRE(got == from_child.size());
    for (int i = 0; i < 4; ++i) {
        // Minted within the same second as the child's, so equal random bytes would mean equal ids.
        const auto parent_id = new_id();
        for (int j = 0; j < 4; ++j) {
            CHECK(parent_id != from_child.substr(static_cast<std::size_t>(j) * ksuid_length, ksuid_length));
        }
    }
}

TEST_CASE("a2a.stamp: stamping a request: one id three times, sequence 0, sender and recipient named", "[a2a][stamp]") {
    tool_request m;
    m.parent = "stale";
    m.must_understand = true;
    m.sequence = 9;
    stamp_request(m, "caller", "svc");
    CHECK(m.id.size() == ksuid_length);
    CHECK(m.request == m.id);
    CHECK(m.conversation == m.id);
    CHECK(m.sequence == 0);
    CHECK(m.parent.empty());
    CHECK_FALSE(m.must_understand);
    CHECK(m.sender == identity{"caller", ""});
    CHECK(m.recipient == identity{"svc", ""});
    CHECK(m.time.offset().count() == 0);

    discovery_request d;
    stamp_request(d, "caller", "", "fixed", timestamp());
    CHECK(d.id == "fixed");
    CHECK_FALSE(d.recipient);
}

TEST_CASE("a2a.stamp: stamping a reply: a fresh id, request and conversation echoed, parties swapped", "[a2a][stamp]") {
    tool_request req;
    stamp_request(req, "caller", "svc");
    req.conversation = "session-7";
    req.sender.instance = "i9";
    req.parent = "p";

    tool_reply rep;
    stamp_reply(rep, req, "svc");
    CHECK(rep.id != req.id);
    CHECK(rep.request == req.request);
    CHECK(rep.conversation == "session-7");
    CHECK(rep.parent.empty());
    CHECK(rep.sequence == 0);
    CHECK(rep.sender == identity{"svc", ""});
    CHECK(rep.recipient == identity{"caller", ""});  // the instance is dropped

    tool_request anonymous;
    tool_reply rep2;
    stamp_reply(rep2, anonymous, "svc");
    CHECK_FALSE(rep2.recipient);
}
