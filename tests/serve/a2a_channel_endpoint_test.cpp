// The a2a channel's intake as the `request` endpoint of a micro service (serve_tools on,
// serve.md §6.1, D12, Amendment 16): INFO lists it, STATS counts the handed-over requests
// without errors, a task is served as on the plain subscription, and the drain refuses what
// the endpoint still held with a negative ack and `shutting_down` (not the micro 503).
#include "a2a_channel_support.hpp"

#include <fiskai/a2a_nats/micro.hpp>

#include <boost/json.hpp>

using namespace a2a_channel_test;
namespace micro = fiskai::a2a_nats::micro;

namespace {

std::shared_ptr<micro::service> tool_service(env& e) {
    micro::service_config c;
    c.name = "svc";
    c.queue_group = "svc";
    return std::make_shared<micro::service>(*e.worker_conn, e.ioc.get_executor(), std::move(c));
}

const boost::json::object* endpoint_named(const boost::json::value& v, std::string_view name) {
    for (const auto& ep : v.at("endpoints").as_array()) {
        if (ep.at("name").as_string() == name) return &ep.as_object();
    }
    return nullptr;
}

}  // namespace

TEST_CASE("a2a channel on a request endpoint: INFO lists it, a task is served, STATS counts it", "[serve][a2a][nats]") {
    env e;
    auto svc = tool_service(e);
    auto o = e.options();
    o.request_service = svc;
    auto ch = e.channel(std::move(o));
    CHECK(ch->description() == "a2a: requests on choria.fisk-ai.request.svc (queue group svc), elicitation off");

    const auto info = boost::json::parse(svc->info_json());
    const auto* listed = endpoint_named(info, "request");
    REQUIRE(listed);
    CHECK(listed->at("subject") == "choria.fisk-ai.request.svc");
    CHECK(listed->at("queue_group") == "svc");

    raw_caller a(*e.caller_conn, "svc");
    a.send(a.task("E1"));
    auto w = e.take(*ch);
    e.done(*w, completed("all done"));
    REQUIRE(e.wait_count(a, 2));
    check_reply_set(a, "E1", w->session_id);

    const auto stats = boost::json::parse(svc->stats_json());
    const auto* counted = endpoint_named(stats, "request");
    REQUIRE(counted);
    CHECK(counted->at("num_requests").to_number<std::int64_t>() == 1);
    CHECK(counted->at("num_errors").to_number<std::int64_t>() == 0);
}

TEST_CASE("a2a channel on a request endpoint: the drain refuses what it held with shutting_down",
          "[serve][a2a][nats]") {
    env e;
    auto svc = tool_service(e);
    auto o = e.options();
    o.request_service = svc;
    auto ch = e.channel(std::move(o));
    raw_caller a(*e.caller_conn, "svc", "caller-a");
    raw_caller b(*e.caller_conn, "svc", "caller-b");
    a.send(a.task("E2"));
    b.send(b.task("E3"));
    REQUIRE(run_until(e.ioc, [&] { return ch->pending_requests() == 2; }));
    ch->release();
    REQUIRE(e.wait_count(a, 2));
    REQUIRE(e.wait_count(b, 2));
    for (auto* c : {&a, &b}) {
        auto ack = c->at_as<a2a::task_ack>(0);
        CHECK_FALSE(ack.accepted);
        auto err = c->at_as<a2a::task_error>(1);
        CHECK(err.code == "shutting_down");
    }
    auto w = a2a_test::run(e.ioc, ch->next());
    CHECK(w == nullptr);
    // The endpoint left INFO; the service itself still answers (its other endpoints are
    // the tool service's to stop).
    CHECK(endpoint_named(boost::json::parse(svc->info_json()), "request") == nullptr);
}
