// Jobs through the JetStream work queue (enqueue -> a worker fetches, runs the one-tool task
// with the fake LLM answering at once, stores the answer in KV -> acks), at 1 and 4 slots and
// with a fleet of 4 processes, beside the same tasks sent over the a2a channel to the same
// workers. Both sides start with every task outstanding: all jobs published, or all requests
// in flight; the figure is tasks/s from the first publish to the last answer.
//
// The stream, bucket and consumer are created here as an operator would (docs/queue.md).
//
// Usage: queue_bench <fisk-ai-serve> <fiskai-fake-llm> <fisk-demo> [tasks per row]

#include "../support/serve_fleet.hpp"

#include <fiskai/a2a/codec.hpp>
#include <fiskai/a2a/ids.hpp>
#include <fiskai/a2a/messages.hpp>
#include <fiskai/a2a/stamp.hpp>

#include <nats/nats.h>

#include <fmt/format.h>

#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <vector>

namespace {

namespace fb = fiskai::bench;
namespace a2a = fiskai::a2a;
using fb::bench_clock;

void check(natsStatus s, const char* what) {
    if (s != NATS_OK) throw std::runtime_error(fmt::format("{}: {}", what, nats_GetLastError(nullptr)));
}

// What `nats stream add`, `nats kv add` and `nats consumer add` in docs/queue.md create.
void provision(natsConnection* nc) {
    jsCtx* js = nullptr;
    check(natsConnection_JetStream(&js, nc, nullptr), "jetstream");
    jsStreamConfig sc;
    jsStreamConfig_Init(&sc);
    sc.Name = "FISK_WORK";
    const char* subjects[] = {"choria.fisk-ai.work.>"};
    sc.Subjects = subjects;
    sc.SubjectsLen = 1;
    sc.Retention = js_WorkQueuePolicy;
    sc.MaxMsgSize = 1048576;
    sc.Storage = js_FileStorage;
    jsErrCode ec{};
    check(js_AddStream(nullptr, js, &sc, nullptr, &ec), "add stream FISK_WORK");
    kvConfig kc;
    kvConfig_Init(&kc);
    kc.Bucket = "FISK_TASKS";
    kc.History = 1;
    kc.MaxValueSize = 786432;
    kvStore* kv = nullptr;
    check(js_CreateKeyValue(&kv, js, &kc), "add kv FISK_TASKS");
    kvStore_Destroy(kv);
    jsConsumerConfig cc;
    jsConsumerConfig_Init(&cc);
    cc.Durable = fb::bench_identity;
    cc.FilterSubject = "choria.fisk-ai.work.bench";
    cc.AckPolicy = js_AckExplicit;
    cc.AckWait = std::chrono::nanoseconds(std::chrono::seconds(30)).count();
    cc.MaxDeliver = 5;
    cc.MaxAckPending = 1000;
    cc.DeliverPolicy = js_DeliverAll;
    check(js_AddConsumer(nullptr, js, "FISK_WORK", &cc, nullptr, &ec), "add consumer");
    jsCtx_Destroy(js);
}

// Counts stored answers as they are put (a KV put is a stream publish on $KV.<bucket>.<key>).
struct answers {
    std::mutex m;
    std::condition_variable cv;
    int results = 0, errors = 0;
    std::string first_error;
};

void on_answer(natsConnection*, natsSubscription*, natsMsg* msg, void* closure) {
    auto* a = static_cast<answers*>(closure);
    const std::string body(natsMsg_GetData(msg), static_cast<std::size_t>(natsMsg_GetDataLength(msg)));
    {
        std::lock_guard lock(a->m);
        if (body.find(R"("protocol":"io.choria.fisk-ai.v1.result")") != std::string::npos) {
            ++a->results;
        } else if (a->errors++ == 0) {
            a->first_error = body;
        }
    }
    a->cv.notify_all();
    natsMsg_Destroy(msg);
}

struct queue_figures {
    double per_s;
    int answered, failed;
    std::string first_error;
};

queue_figures drive_queue(natsConnection* nc, int tasks) {
    answers got;
    natsSubscription* sub = nullptr;
    check(natsConnection_Subscribe(&sub, nc, "$KV.FISK_TASKS.bench.>", on_answer, &got), "subscribe answers");
    check(natsConnection_Flush(nc), "flush");
    jsCtx* js = nullptr;
    check(natsConnection_JetStream(&js, nc, nullptr), "jetstream");
    std::vector<std::string> bodies;
    std::vector<std::string> ids;
    for (int i = 0; i < tasks; ++i) {
        a2a::task_request r;
        a2a::stamp_request(r, "bench-producer", fb::bench_identity, a2a::new_id());
        r.prompt = fb::bench_prompt;
        ids.push_back(r.request);
        bodies.push_back(a2a::encode(a2a::message{r}).value());
    }
    const auto start = bench_clock::now();
    for (int i = 0; i < tasks; ++i) {
        jsPubOptions po;
        jsPubOptions_Init(&po);
        po.MsgId = ids[i].c_str();
        jsErrCode ec{};
        check(js_Publish(nullptr, js, "choria.fisk-ai.work.bench", bodies[i].data(), static_cast<int>(bodies[i].size()),
                         &po, &ec),
              "enqueue");
    }
    {
        std::unique_lock lock(got.m);
        if (!got.cv.wait_for(lock, std::chrono::minutes(5), [&] { return got.results + got.errors >= tasks; }))
            throw std::runtime_error(
                fmt::format("only {} of {} answers within 5 minutes", got.results + got.errors, tasks));
    }
    const double seconds = fb::ms_since(start) / 1000.0;
    natsSubscription_Destroy(sub);
    jsCtx_Destroy(js);
    return {static_cast<double>(got.results) / seconds, got.results, got.errors, got.first_error};
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 4) {
        std::fprintf(stderr, "usage: queue_bench <fisk-ai-serve> <fiskai-fake-llm> <fisk-demo> [tasks per row]\n");
        return 2;
    }
    const int tasks = argc > 4 ? std::atoi(argv[4]) : 200;
    try {
        fb::fleet f({argv[1], argv[2], argv[3]});
        fiskai::conns::connect_options co;
        co.name = "bench-producer";
        auto nats = fiskai::conns::connection::dial_url(f.nats_url(), co);
        provision(nats->native_handle());
        fmt::print(
            "one-tool tasks through the work queue and over a2a, same workers (nats-server {}, {} tasks per "
            "row, all outstanding at once)\n\n",
            f.nats_url(), tasks);
        fmt::print("  {:<60} {:>14} {:>14}\n", "", "queue jobs/s", "a2a tasks/s");
        struct shape {
            int processes, workers;
            std::string name;
        };
        const std::vector<shape> shapes = {{1, 1, "1 process, workers: 1"},
                                           {1, 4, "1 process, workers: 4"},
                                           {4, 1, "4 processes (one consumer, one queue group), workers: 1"}};
        for (const auto& s : shapes) {
            f.start_workers(s.processes, s.workers, true);
            (void)fb::drive_a2a(*nats, 4, 1);  // warm
            (void)drive_queue(nats->native_handle(), 4);
            const auto q = drive_queue(nats->native_handle(), tasks);
            const auto a = fb::drive_a2a(*nats, tasks, tasks);
            fmt::print("  {:<60} {:>14.1f} {:>14.1f}\n", s.name, q.per_s,
                       static_cast<double>(a.latency_ms.size()) / a.seconds);
            if (q.failed) fmt::print("    {} queue jobs answered with an error; first: {}\n", q.failed, q.first_error);
            if (a.failed) fmt::print("    {} a2a tasks failed; first: {}\n", a.failed, a.first_failure);
            f.stop_workers();
        }
    } catch (const std::exception& e) {
        std::fprintf(stderr, "queue_bench: %s\n", e.what());
        return 1;
    }
    return 0;
}
