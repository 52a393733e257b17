// The transport seam: subjects, the single-shot responder, and the in-memory transport's
// NATS-like behaviour (no responders, queue-group sharing, closing).

#include <fiskai/a2a/memory_transport.hpp>
#include <fiskai/a2a/transport.hpp>

#include "engine_support.hpp"
#include "support.hpp"

using namespace fiskai::a2a;
using namespace a2a_test;
using namespace std::chrono_literals;

namespace {

asio::awaitable<std::optional<incoming>> next_of(intake& in) { co_return co_await in.next(); }

}  // namespace

TEST_CASE("a2a.transport: subjects are the Go original's", "[a2a][transport]") {
    CHECK(subject(route::discovery, "nats") == "choria.fisk-ai.discovery.nats");
    CHECK(subject(route::tool, "orders-db") == "choria.fisk-ai.tool.orders-db");
    CHECK(to_string(route::discovery) == "discovery");
    CHECK(to_string(route::tool) == "tool");
}

TEST_CASE("a2a.transport: a responder answers exactly once, and a 500 if it never did", "[a2a][transport]") {
    std::vector<reply> sent;
    {
        responder r([&](reply rep) { sent.push_back(std::move(rep)); });
        CHECK(static_cast<bool>(r));
        r(reply::message("one"));
        CHECK_FALSE(static_cast<bool>(r));
        r(reply::message("two"));
    }
    REQUIRE(sent.size() == 1);
    CHECK(sent[0] == reply::message("one"));

    sent.clear();
    {
        responder forgotten([&](reply rep) { sent.push_back(std::move(rep)); });
        responder moved = std::move(forgotten);
        CHECK_FALSE(static_cast<bool>(forgotten));
    }
    REQUIRE(sent.size() == 1);
    CHECK(sent[0] == reply::refusal(500, "no reply was produced"));
}

TEST_CASE("a2a.transport: intakes for one identity share its requests, one each", "[a2a][transport]") {
    asio::io_context ctx;
    memory_transport bus(ctx.get_executor());
    auto a = run(ctx, bus.listen(route::tool, "svc")).value();
    auto b = run(ctx, bus.listen(route::tool, "svc")).value();

    auto first = start(ctx, bus.request(route::tool, "svc", "one", 5s));
    auto second = start(ctx, bus.request(route::tool, "svc", "two", 5s));
    run_until_idle(ctx);
    CHECK(bus.queued(route::tool, "svc") == 2);
    CHECK(bus.queued(route::discovery, "svc") == 0);

    auto got_a = run(ctx, next_of(*a));
    auto got_b = run(ctx, next_of(*b));
    REQUIRE(got_a);
    REQUIRE(got_b);
    CHECK(got_a->body == "one");
    CHECK(got_b->body == "two");
    CHECK(bus.queued(route::tool, "svc") == 0);
    got_b->respond(reply::message("for two"));
    got_a->respond(reply::refusal(400, "bad"));
    REQUIRE(run_until(ctx, [&] { return first->has_value() && second->has_value(); }));
    CHECK(**first == reply::refusal(400, "bad"));
    CHECK(**second == reply::message("for two"));

    // Closing one keeps the identity served; closing both leaves nobody.
    a->close();
    auto third = start(ctx, bus.request(route::tool, "svc", "three", 5s));
    auto got = run(ctx, next_of(*b));
    REQUIRE(got);
    got->respond(reply::message("for three"));
    REQUIRE(run_until(ctx, [&] { return third->has_value(); }));
    CHECK(third->value()->body == "for three");

    auto pending = start(ctx, next_of(*b));
    run_until_idle(ctx);
    b->close();
    REQUIRE(run_until(ctx, [&] { return pending->has_value(); }));
    CHECK_FALSE(pending->value().has_value());
    const auto gone = run(ctx, bus.request(route::tool, "svc", "four", 5s));
    CHECK(gone.error().code == errc::agent_unavailable);
}

TEST_CASE("a2a.transport: a request left unread when the last intake closes gets a 500", "[a2a][transport]") {
    asio::io_context ctx;
    memory_transport bus(ctx.get_executor());
    auto in = run(ctx, bus.listen(route::discovery, "svc")).value();
    auto waiting = start(ctx, bus.request(route::discovery, "svc", "hello", 5s));
    run_until_idle(ctx);
    in->close();
    REQUIRE(run_until(ctx, [&] { return waiting->has_value(); }));
    REQUIRE(waiting->value());
    CHECK(waiting->value()->error == service_error{500, "no reply was produced"});
}
