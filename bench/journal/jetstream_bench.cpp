// The JetStream column of bench/journal: the p50 of a session-journal append through the
// runstate JetStream backend (encode, offload to the blocking pool, publish with
// Nats-Msg-Id and wait for the ack, resume on the io thread) beside its floor, a bare
// nats.c js_Publish loop of the same bytes with the same header on the same broker.
// Goal: append p50 <= 1.3x the floor.
// Usage: jetstream_bench [appends]

#include <fiskai/conns/connection.hpp>
#include <fiskai/conns/embedded_broker.hpp>
#include <fiskai/runstate/jetstream_store.hpp>
#include <fiskai/runstate/records.hpp>

#include <nats/nats.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/asio/use_future.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

namespace asio = boost::asio;
namespace rs = fiskai::runstate;
using clock_type = std::chrono::steady_clock;

namespace {

struct figures {
    double p50 = 0;
    double p90 = 0;
    double p99 = 0;
};

figures summarize(std::vector<double> us) {
    std::sort(us.begin(), us.end());
    auto at = [&](double q) { return us[static_cast<std::size_t>(q * static_cast<double>(us.size() - 1))]; };
    return {at(0.50), at(0.90), at(0.99)};
}

rs::record sample_record(std::uint64_t seq) {
    rs::assistant_record a;
    a.iteration = static_cast<std::int64_t>(seq);
    a.message.who = fiskai::llm::role::assistant;
    a.message.content.push_back(fiskai::llm::text_block{std::string(240, 'x')});
    a.message.content.push_back(
        fiskai::llm::tool_use_block{"toolu_01", "stream_info", R"({"stream":"ORDERS"})", std::nullopt});
    a.stop_reason = "tool_use";
    a.in_tokens = 1200;
    a.out_tokens = 80;
    return rs::record{seq, a};
}

void add_stream(jsCtx* js, const char* name, const char* subject) {
    jsStreamConfig cfg;
    jsStreamConfig_Init(&cfg);
    cfg.Name = name;
    const char* subjects[] = {subject};
    cfg.Subjects = subjects;
    cfg.SubjectsLen = 1;
    cfg.MaxMsgsPerSubject = 1;
    cfg.Discard = js_DiscardNew;
    cfg.DiscardNewPerSubject = true;
    cfg.Storage = js_FileStorage;
    jsErrCode ec = static_cast<jsErrCode>(0);
    if (js_AddStream(nullptr, js, &cfg, nullptr, &ec) != NATS_OK) throw std::runtime_error("add stream");
}

}  // namespace

int main(int argc, char** argv) {
    const int n = argc > 1 ? std::max(50, std::atoi(argv[1])) : 2000;
    fiskai::conns::embedded_broker broker;
    fiskai::conns::connect_options co;
    co.name = fiskai::conns::connection_name("journal-bench");
    auto connection = fiskai::conns::connection::dial_url(broker.url(), co);
    jsCtx* js = nullptr;
    if (natsConnection_JetStream(&js, connection->native_handle(), nullptr) != NATS_OK) return 1;
    add_stream(js, "BARE", "bare.>");
    add_stream(js, "SESSIONS", "fisk.sessions.>");

    // The floor: the same bytes and header straight from nats.c, one synchronous publish
    // at a time (a journal append waits for its ack too). Floor and append alternate, so
    // both see the same machine load.
    std::vector<std::string> bodies;
    for (int i = 0; i < n; ++i) bodies.push_back(rs::encode_record(sample_record(static_cast<std::uint64_t>(i + 2))));
    std::vector<double> bare;
    bare.reserve(static_cast<std::size_t>(n));
    auto bare_publish = [&](int i) {
        const auto subject = fmt::format("bare.run.{}", i + 2);
        const auto msg_id = fmt::format("0123456789abcdef0123456789abcdef-{}", i + 2);
        jsPubOptions po;
        jsPubOptions_Init(&po);
        po.MsgId = msg_id.c_str();
        const auto& body = bodies[static_cast<std::size_t>(i)];
        const auto t0 = clock_type::now();
        jsErrCode ec = static_cast<jsErrCode>(0);
        if (js_Publish(nullptr, js, subject.c_str(), body.data(), static_cast<int>(body.size()), &po, &ec) != NATS_OK) {
            throw std::runtime_error("bare publish failed");
        }
        bare.push_back(std::chrono::duration<double, std::micro>(clock_type::now() - t0).count());
    };

    // The backend: one run, n appends awaited one after another on the io thread.
    asio::thread_pool pool(4);
    asio::io_context io;
    std::vector<double> appends;
    appends.reserve(static_cast<std::size_t>(n));
    auto body = [&]() -> asio::awaitable<void> {
        rs::jetstream_store_options o;
        o.stream = "SESSIONS";
        // Locals, not temporaries, inside co_await expressions (GCC 12).
        const rs::context ctx{pool.get_executor(), {}, connection.get()};
        auto store = co_await rs::bind_jetstream_store(o, ctx);
        rs::meta_record meta;
        meta.fingerprint = {"anthropic", "claude-sonnet-4-6", std::string(64, 'a'), std::string(64, 'b'), "off", 1, 1};
        std::string id = "bench";
        auto journal = co_await store->create(std::move(id), meta);
        if (!journal) throw std::runtime_error(journal.error().message);
        for (int i = 0; i < n; ++i) {
            bare_publish(i);  // blocks the io thread: only the bench does that
            const auto seq = static_cast<std::uint64_t>(i + 2);
            auto rec = sample_record(seq);
            const auto t0 = clock_type::now();
            auto written = co_await (*journal)->append(seq, std::move(rec));
            appends.push_back(std::chrono::duration<double, std::micro>(clock_type::now() - t0).count());
            if (!written) throw std::runtime_error(written.error().message);
        }
    };
    auto done = asio::co_spawn(io, body(), asio::use_future);
    io.run();
    done.get();
    pool.join();
    jsCtx_Destroy(js);

    const auto f = summarize(bare);
    const auto a = summarize(appends);
    fmt::print("journal append over JetStream ({} appends, nats-server {} on loopback, {} byte records)\n", n, "2.9",
               bodies.front().size());
    fmt::print("  {:<44} {:>9} {:>9} {:>9}\n", "", "p50 us", "p90 us", "p99 us");
    fmt::print("  {:<44} {:>9.1f} {:>9.1f} {:>9.1f}\n", "floor: bare nats.c js_Publish + Nats-Msg-Id", f.p50, f.p90,
               f.p99);
    fmt::print("  {:<44} {:>9.1f} {:>9.1f} {:>9.1f}\n", "runstate jetstream backend append", a.p50, a.p90, a.p99);
    fmt::print("  append p50 = {:.2f}x the floor (target 1.3x)\n", a.p50 / f.p50);
    return 0;
}
