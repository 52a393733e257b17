// A one-tool task end to end over a2a (caller -> NATS -> `fisk-ai-serve serve` -> fake LLM
// -> `fisk-demo stream info` -> fake LLM -> terminal), with the fake answering at once, at
// 1 and 4 slots, beside the floor it is made of, each part measured alone on the same
// machine, in batches between the 1-worker row's tasks so both see the same load:
//  - two fake-LLM round trips (the task's own two request bodies, replayed from the fake's log);
//  - one spawn of the tool;
//  - the journal's syncs as a new session needs them: its file created with the first record
//    and synced, the directory synced (the new name must survive a crash), then one write +
//    fdatasync for each further record (records per session counted from the journal);
//  - the NATS hops on the critical path: the request to the worker and the terminal back (one
//    request-reply round trip) and the flush that confirms the task's subscriptions before
//    the ack (one PING/PONG, serve.md section 6.10).
// Then the same parts once more as one bare task, in the order a task meets them and with
// nothing in between (no framework, no events, no thread but the bench's): the floor the
// goal is measured against. On a virtual machine a part costs more after other work than
// straight after itself (a process woken from idle, an fdatasync after a pause), so the sum
// of the parts measured alone is a best case no sequence of them reaches; it stays printed.
//
// The 1-worker row is also run without events (`stream: false`, the ack and the terminal
// only), in the same batches: the floor counts no event, and the difference is what a task's
// seven events cost it on a machine where every process shares the cores.
//
// Who uses the cores while the 1-worker tasks run: each process's CPU time a task, with
// events and without (from /proc, over the task batches only); beside the tool's, its CPU in
// the floor's spawns, alone and with the other core kept busy (not part of the floor).
//
// For the 4-slot rows, the share of the cores all the task's processes held: slots scale to
// the cores when they fill them.
//
// Then the workers' resident memory (after the warm-up and after the 1-worker row's tasks, so a
// per-task leak shows as growth; the largest worker of each other row) and the share of CPU
// time the hypervisor took for other guests while the rows ran.
//
// "Workers" is expose.agent.workers: the slots of one process (serve.md §5.1). The fleet row
// runs 4 processes of 1 slot in one queue group instead.
//
// Usage: serve_bench <fisk-ai-serve> <fiskai-fake-llm> <fisk-demo> [tasks per row]

#include "../support/bare_journal.hpp"
#include "../support/bare_spawn.hpp"
#include "../support/cpu_steal.hpp"
#include "../support/process_cpu.hpp"
#include "../support/serve_fleet.hpp"

#include <fiskai/net/http_client.hpp>

#include <nats/nats.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/json.hpp>

#include <fmt/format.h>

#include <fcntl.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

namespace {

namespace asio = boost::asio;
namespace json = boost::json;
namespace fb = fiskai::bench;
using fb::bench_clock;

struct row_figures {
    double p50, p90, per_s;
};

row_figures figures(const fb::drive_figures& d) {
    return {fb::percentile(d.latency_ms, 0.5), fb::percentile(d.latency_ms, 0.9),
            static_cast<double>(d.latency_ms.size()) / d.seconds};
}

// The first task's two model requests as the worker sent them (steps 0 and 1).
std::vector<std::string> logged_bodies(const fb::fs::path& log) {
    std::vector<std::string> out;
    std::istringstream in(fb::slurp(log));
    std::string line;
    while (std::getline(in, line) && out.size() < 2) {
        auto v = json::parse(line).as_object();
        out.push_back(json::serialize(v.at("body")));
    }
    if (out.size() < 2) throw std::runtime_error("the fake LLM logged fewer than two requests");
    return out;
}

// One of the task's model requests, replayed to the fake.
asio::awaitable<void> replay_model_call(fiskai::net::http_client& client, const std::string& url,
                                        const std::string& body) {
    fiskai::net::http_request r;
    r.url = url + "/v1/messages";
    r.headers = {{"content-type", "application/json"}, {"x-api-key", "bench"}, {"anthropic-version", "2023-06-01"}};
    r.body = body;
    auto got = co_await client.send(std::move(r), bench_clock::now() + std::chrono::seconds(10));
    if (!got || got->status != 200) throw std::runtime_error("fake LLM replay failed");
}

// The two round trips of one task, back to back on one keep-alive client, n times.
std::vector<double> llm_floor_ms(const std::string& url, const std::vector<std::string>& bodies, int n) {
    asio::io_context ioc;
    fiskai::net::http_client client(ioc.get_executor());
    std::vector<double> samples;
    auto loop = [&]() -> asio::awaitable<void> {
        for (int i = 0; i < n + 1; ++i) {
            const auto t = bench_clock::now();
            for (const auto& b : bodies) co_await replay_model_call(client, url, b);
            if (i >= 1) samples.push_back(fb::ms_since(t));  // the first opens the connection
        }
        client.close_idle();  // else its idle keep-alive connection holds run() for its 60 s timeout
    };
    auto f = asio::co_spawn(ioc, loop(), asio::use_future);
    ioc.run();
    f.get();
    return samples;
}

// The task's tool, run bare; its time in ms.
double run_tool_ms(const std::string& demo) {
    const auto t = bench_clock::now();
    auto r = fb::bare_spawn(demo, {"stream", "info", "--", "ORDERS"});
    const double ms = fb::ms_since(t);
    if (r.status != 0) throw std::runtime_error("fisk-demo stream info failed: " + r.output);
    return ms;
}

std::vector<double> spawn_floor_ms(const std::string& demo, int n) {
    std::vector<double> samples;
    for (int i = 0; i < n; ++i) samples.push_back(run_tool_ms(demo));
    return samples;
}

// Keeps one core busy for as long as it lives: a thread that spins without a system call.
// The tool's spawn measured beside it shows what the host makes of a busy neighbour core
// (on a shared VM the two vCPUs may be one physical core's two hyperthreads), which is how a
// task's tool runs while the broker and the caller handle its events on the other core.
class busy_core {
public:
    busy_core()
        : thread_([](const std::stop_token& stop) {
              while (!stop.stop_requested()) {}
          }) {}

private:
    std::jthread thread_;
};

// Records per session: lines of the journal files (one fdatasync each in the file backend).
double records_per_session(const fb::fs::path& runs) {
    std::size_t files = 0, lines = 0;
    for (const auto& e : fb::fs::directory_iterator(runs)) {
        if (e.path().extension() != ".json") continue;
        ++files;
        const auto text = fb::slurp(e.path());
        lines += static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
    }
    return files ? static_cast<double>(lines) / static_cast<double>(files) : 0;
}

std::vector<double> fdatasync_floor_ms(const fb::fs::path& dir, int n) {
    const auto path = dir / "floor.json";
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0600);
    if (fd < 0) throw std::runtime_error("cannot open the fdatasync floor file");
    const std::string line(600, 'x');
    std::vector<double> samples;
    for (int i = 0; i < n; ++i) {
        const auto t = bench_clock::now();
        if (!fb::write_synced(fd, line)) throw std::runtime_error("write + fdatasync failed");
        samples.push_back(fb::ms_since(t));
    }
    ::close(fd);
    fb::fs::remove(path);
    return samples;
}

// A new session's first record: a new file created with it and synced, then the directory.
std::vector<double> create_floor_ms(const fb::fs::path& dir, int n) {
    const std::string line(600, 'x');
    std::vector<double> samples;
    for (int i = 0; i < n; ++i) {
        const auto path = dir / fmt::format("floor-{}.json", i);
        const auto t = bench_clock::now();
        const int fd = fb::create_synced(path.string(), dir.string(), line);
        samples.push_back(fb::ms_since(t));
        if (fd < 0) throw std::runtime_error("create + fdatasync + directory fsync failed");
        ::close(fd);
        fb::fs::remove(path);
    }
    return samples;
}

void echo_handler(natsConnection* nc, natsSubscription*, natsMsg* msg, void*) {
    if (const char* reply = natsMsg_GetReply(msg)) {
        natsConnection_Publish(nc, reply, natsMsg_GetData(msg), natsMsg_GetDataLength(msg));
    }
    natsMsg_Destroy(msg);
}

// A bare nats.c request-reply to an echo responder on another connection of the same broker.
class nats_floor {
public:
    explicit nats_floor(const std::string& url)
        : a_(fiskai::conns::connection::dial_url(url, options())),
          b_(fiskai::conns::connection::dial_url(url, options())) {
        natsConnection_Subscribe(&sub_, b_->native_handle(), "bench.echo", echo_handler, nullptr);
        natsConnection_Flush(b_->native_handle());
        (void)samples(5);  // the request path's first use (the response subscription) is not the floor
    }
    ~nats_floor() { natsSubscription_Destroy(sub_); }
    nats_floor(const nats_floor&) = delete;
    nats_floor& operator=(const nats_floor&) = delete;

    std::vector<double> samples(int n) {
        const std::string body(400, 'x');
        std::vector<double> out;
        for (int i = 0; i < n; ++i) {
            natsMsg* reply = nullptr;
            const auto t = bench_clock::now();
            if (natsConnection_Request(&reply, a_->native_handle(), "bench.echo", body.data(),
                                       static_cast<int>(body.size()), 5000) != NATS_OK)
                throw std::runtime_error("bare request-reply failed");
            out.push_back(fb::ms_since(t));
            natsMsg_Destroy(reply);
        }
        return out;
    }

    // The flush before the ack: one PING/PONG with the broker.
    std::vector<double> flush_samples(int n) {
        std::vector<double> out;
        for (int i = 0; i < n; ++i) {
            const auto t = bench_clock::now();
            if (natsConnection_FlushTimeout(b_->native_handle(), 5000) != NATS_OK)
                throw std::runtime_error("bare flush failed");
            out.push_back(fb::ms_since(t));
        }
        return out;
    }

private:
    static fiskai::conns::connect_options options() {
        fiskai::conns::connect_options o;
        o.name = "bench-floor";
        return o;
    }
    std::unique_ptr<fiskai::conns::connection> a_, b_;
    natsSubscription* sub_ = nullptr;
};

// The floor's parts once more, one bare task at a time in the order a task meets them: the
// request's round trip and the flush; the first model call, beside it the new session's file
// and the prompt's record on a second thread (the server overlaps them too: a model call acts
// on nothing); the turn's record; the tool; the second model call beside the tool result's
// record; the last record. Each part alone, back to back in a batch, is its best case; in a
// task each follows other work or a wait, and on a virtual machine that matters (an
// fdatasync after 5 ms of something else took twice as long as one straight after another on
// the machine of 2026-12-04). Nothing else runs: this is what the task costs at the least,
// here, with the overlaps the design allows and no others.
struct sequence_figures {
    std::vector<double> total;  // ms, one bare task each
    // ms, each part of each bare task: the round trip, the flush, the first model call with
    // the new file and the prompt's record beside it, each record written and synced alone,
    // the tool, the second model call with the tool result's record beside it
    std::vector<double> hops, flush, first_call, syncs, spawn, second_call;
};

class bare_task {
public:
    bare_task(nats_floor& nats, std::string llm_url, std::vector<std::string> bodies, std::string demo,
              fb::fs::path dir, int syncs_after_create)
        : nats_(nats),
          llm_url_(std::move(llm_url)),
          bodies_(std::move(bodies)),
          demo_(std::move(demo)),
          dir_(std::move(dir)),
          syncs_(syncs_after_create) {}

    void run(int n, sequence_figures& out) {
        asio::io_context ioc;
        asio::thread_pool beside(1);
        fiskai::net::http_client client(ioc.get_executor());
        auto loop = [&]() -> asio::awaitable<void> {
            co_await replay_model_call(client, llm_url_, bodies_[0]);  // opens the keep-alive connection: not a sample
            const std::string line(400, 'x');
            for (int i = 0; i < n; ++i) {
                const auto path = dir_ / fmt::format("sequence-{}.json", i);
                const auto t = bench_clock::now();
                out.hops.push_back(nats_.samples(1).front());
                out.flush.push_back(nats_.flush_samples(1).front());
                auto part = bench_clock::now();
                // By value: a failed model call ends this frame while the job may still run.
                auto created = asio::post(beside, asio::use_future([file = path.string(), dir = dir_.string(), line] {
                                              const int fd = fb::create_synced(file, dir, line);
                                              return fd >= 0 && fb::write_synced(fd, line) ? fd : -1;
                                          }));
                co_await replay_model_call(client, llm_url_, bodies_[0]);
                const int fd = created.get();
                out.first_call.push_back(fb::ms_since(part));
                if (fd < 0) throw std::runtime_error("create + fdatasync + directory fsync failed");
                timed_sync(fd, line, out);  // the model's turn
                out.spawn.push_back(run_tool_ms(demo_));
                part = bench_clock::now();
                auto result_synced =
                    asio::post(beside, asio::use_future([fd, line] { return fb::write_synced(fd, line); }));
                co_await replay_model_call(client, llm_url_, bodies_[1]);
                if (!result_synced.get()) throw std::runtime_error("write + fdatasync failed");
                out.second_call.push_back(fb::ms_since(part));
                // The prompt's, the turn's and the tool result's records are in: the rest.
                for (int k = 3; k < syncs_; ++k) timed_sync(fd, line, out);
                out.total.push_back(fb::ms_since(t));
                ::close(fd);
                fb::fs::remove(path);
            }
            client.close_idle();  // else its idle keep-alive connection holds run() for its 60 s timeout
        };
        auto f = asio::co_spawn(ioc, loop(), asio::use_future);
        ioc.run();
        f.get();
        beside.join();
    }

private:
    static void timed_sync(int fd, const std::string& line, sequence_figures& out) {
        const auto t = bench_clock::now();
        if (!fb::write_synced(fd, line)) throw std::runtime_error("write + fdatasync failed");
        out.syncs.push_back(fb::ms_since(t));
    }

    nats_floor& nats_;
    std::string llm_url_;
    std::vector<std::string> bodies_;
    std::string demo_;
    fb::fs::path dir_;
    int syncs_;
};

void append(std::vector<double>& to, const std::vector<double>& more) { to.insert(to.end(), more.begin(), more.end()); }

}  // namespace

int main(int argc, char** argv) {
    if (argc < 4) {
        std::fprintf(stderr, "usage: serve_bench <fisk-ai-serve> <fiskai-fake-llm> <fisk-demo> [tasks per row]\n");
        return 2;
    }
    const int tasks = argc > 4 ? std::atoi(argv[4]) : 200;
    try {
        fb::fleet f({argv[1], argv[2], argv[3]});
        fiskai::conns::connect_options co;
        co.name = "bench-client";
        // As fisk-ai-a2a connects: a task's inbox subscription starts no delivery thread of its own.
        co.shared_delivery = true;
        auto nats = fiskai::conns::connection::dial_url(f.nats_url(), co);
        fmt::print("one-tool task over a2a through fisk-ai-serve serve (nats-server {}, {} tasks per row)\n",
                   f.nats_url(), tasks);

        // 1 worker: tasks and the floor's parts measured in alternation, a batch of each at a
        // time, so that both see the same machine (a shared VM's speed drifts over a minute).
        constexpr int batch = 20;
        f.start_workers(1, 1, false);
        (void)fb::drive_a2a(*nats, 4, 1);  // warm: introspection caches, page cache, connections
        const auto warm_memory = fb::resident_of(f.worker_pids().front());
        const auto bodies = logged_bodies(f.dir() / "llm.jsonl");
        const double records = records_per_session(f.runs());
        nats_floor hops_floor(f.nats_url());
        bare_task sequence(hops_floor, f.llm_url(), bodies, argv[3], f.runs(),
                           static_cast<int>(std::lround(records - 1)));
        sequence_figures in_order;
        fb::drive_figures one, quiet;
        std::vector<double> llm, spawn, spawn_busy, sync, create, hops, flush;
        fb::steal_meter steal_one, steal_rest;
        // The caller is this process: its io thread and nats.c's threads (the floor's own
        // connections stay idle while tasks run).
        fb::cpu_meter cpu_events, cpu_quiet;
        for (auto* m : {&cpu_events, &cpu_quiet}) {
            m->watch("fisk-ai-serve (the worker)", f.worker_pids().front());
            m->watch("the tool (fisk-demo, the worker's children)", f.worker_pids().front(), true);
            m->watch("nats-server", f.broker_pid());
            m->watch("the caller (task_caller and nats.c, this process)", ::getpid());
            m->watch("fiskai-fake-llm", f.llm_pid());
        }
        fb::cpu_meter cpu_spawn;  // the floor's spawns of the tool: this process's reaped children
        cpu_spawn.watch("the tool alone", ::getpid(), true);
        fb::cpu_meter cpu_spawn_busy;  // the same, with the other core kept busy
        cpu_spawn_busy.watch("the tool beside a busy core", ::getpid(), true);
        steal_one.start();
        for (int done = 0; done < tasks; done += batch) {
            cpu_events.start();
            auto d = fb::drive_a2a(*nats, batch, 1);
            cpu_events.stop();
            if (d.failed) fmt::print("  {} tasks failed; first: {}\n", d.failed, d.first_failure);
            append(one.latency_ms, d.latency_ms);
            one.seconds += d.seconds;
            // The same tasks without events: what the seven events of a task cost the p50.
            cpu_quiet.start();
            auto q = fb::drive_a2a(*nats, batch, 1, false);
            cpu_quiet.stop();
            if (q.failed) fmt::print("  {} tasks failed; first: {}\n", q.failed, q.first_failure);
            append(quiet.latency_ms, q.latency_ms);
            quiet.seconds += q.seconds;
            append(llm, llm_floor_ms(f.llm_url(), bodies, batch));
            cpu_spawn.start();
            append(spawn, spawn_floor_ms(argv[3], batch));
            cpu_spawn.stop();
            {
                const busy_core neighbour;
                cpu_spawn_busy.start();
                append(spawn_busy, spawn_floor_ms(argv[3], batch));
                cpu_spawn_busy.stop();
            }
            append(sync, fdatasync_floor_ms(f.runs(), batch));
            append(create, create_floor_ms(f.runs(), batch));
            append(hops, hops_floor.samples(batch));
            append(flush, hops_floor.flush_samples(batch));
            sequence.run(batch, in_order);
        }
        steal_one.stop();
        // After every 1-worker task (with and without events): a leak per task would show here
        // as growth over the resident set after the warm-up.
        const auto one_memory = fb::resident_of(f.worker_pids().front());
        f.stop_workers();

        struct shape {
            int processes, workers, in_flight;
            std::string name;
        };
        const std::vector<shape> shapes = {{1, 4, 4, "1 process, workers: 4, 4 tasks in flight"},
                                           {4, 1, 4, "4 processes (one queue group), workers: 1 each, 4 in flight"}};
        std::vector<row_figures> rows{figures(one)};
        std::vector<fb::resident_kib> row_memory;  // per shape: the largest worker's
        // Per shape: the CPU a task took, every process of the task together (ms). With the row's
        // tasks/s it gives the share of the cores they held: slots scale to the cores when they
        // fill them, and what is left over then is no longer the server's to take.
        std::vector<double> row_cpu_per_task;
        const row_figures quiet_row = figures(quiet);
        for (const auto& s : shapes) {
            f.start_workers(s.processes, s.workers, false);
            (void)fb::drive_a2a(*nats, 4, 1);
            fb::cpu_meter row_cpu;
            for (const auto pid : f.worker_pids()) {
                row_cpu.watch("worker", pid);
                row_cpu.watch("tools", pid, true);
            }
            row_cpu.watch("nats-server", f.broker_pid());
            row_cpu.watch("caller", ::getpid());
            row_cpu.watch("fake LLM", f.llm_pid());
            steal_rest.start();
            row_cpu.start();
            auto d = fb::drive_a2a(*nats, tasks, s.in_flight);
            row_cpu.stop();
            steal_rest.stop();
            double row_ms = 0;
            for (std::size_t i = 0; i < row_cpu.size(); ++i) row_ms += row_cpu.ms_per_task(i, 1);
            row_cpu_per_task.push_back(d.latency_ms.empty() ? 0.0 : row_ms / static_cast<double>(d.latency_ms.size()));
            if (d.failed) fmt::print("  {} tasks failed; first: {}\n", d.failed, d.first_failure);
            rows.push_back(figures(d));
            fb::resident_kib largest;
            for (const auto pid : f.worker_pids()) {
                const auto m = fb::resident_of(pid);
                largest.now = std::max(largest.now, m.now);
                largest.peak = std::max(largest.peak, m.peak);
            }
            row_memory.push_back(largest);
            f.stop_workers();
        }

        const double llm_p50 = fb::percentile(llm, 0.5), spawn_p50 = fb::percentile(spawn, 0.5),
                     sync_p50 = fb::percentile(sync, 0.5), create_p50 = fb::percentile(create, 0.5),
                     hops_p50 = fb::percentile(hops, 0.5), flush_p50 = fb::percentile(flush, 0.5);
        const double journal = create_p50 + (records - 1) * sync_p50;
        const double floor = llm_p50 + spawn_p50 + journal + hops_p50 + flush_p50;

        fmt::print("\n  {:<64} {:>9} {:>9} {:>9}\n", "", "p50 ms", "p90 ms", "tasks/s");
        fmt::print("  {:<64} {:>9.2f} {:>9.2f} {:>9.1f}\n", "1 process, workers: 1, 1 task in flight", rows[0].p50,
                   rows[0].p90, rows[0].per_s);
        fmt::print("  {:<64} {:>9.2f} {:>9.2f} {:>9.1f}\n", "  the same without events (stream: false)", quiet_row.p50,
                   quiet_row.p90, quiet_row.per_s);
        for (std::size_t i = 0; i < shapes.size(); ++i) {
            fmt::print("  {:<64} {:>9.2f} {:>9.2f} {:>9.1f}\n", shapes[i].name, rows[i + 1].p50, rows[i + 1].p90,
                       rows[i + 1].per_s);
        }
        fmt::print("\n  floor (p50 of each part, measured alone, in batches between the 1-worker tasks):\n");
        fmt::print("    {:<62} {:>9.2f} ms\n", "two fake-LLM round trips (the task's own request bodies)", llm_p50);
        fmt::print("    {:<62} {:>9.2f} ms\n", "one spawn of the tool (fisk-demo stream info -- ORDERS)", spawn_p50);
        fmt::print("    {:<62} {:>9.2f} ms\n",
                   fmt::format("journal: new file + fdatasync + dir fsync ({:.3f} ms),", create_p50), journal);
        fmt::print("    {:<62}\n",
                   fmt::format("  then {:.1f} records x write + fdatasync ({:.3f} ms)", records - 1, sync_p50));
        fmt::print("    {:<62} {:>9.2f} ms\n", "NATS: request to the worker + terminal back (1 round trip)", hops_p50);
        fmt::print("    {:<62} {:>9.2f} ms\n", "NATS: the flush before the ack (1 PING/PONG)", flush_p50);
        fmt::print("    {:<62} {:>9.2f} ms  = {:.0f} tasks/s one at a time\n", "sum", floor, 1000.0 / floor);
        const double in_order_floor = fb::percentile(in_order.total, 0.5);
        fmt::print("    {:<62} {:>9.2f} ms\n", "the same parts as one bare task, in a task's order (p50)",
                   in_order_floor);
        const auto p50 = [](const std::vector<double>& v) { return fb::percentile(v, 0.5); };
        fmt::print(
            "      (its parts' p50s: round trip {:.2f}, flush {:.2f}, model call with the new file beside it {:.2f},\n"
            "       record {:.3f} x {}, tool {:.2f}, model call with a record beside it {:.2f} ms)\n",
            p50(in_order.hops), p50(in_order.flush), p50(in_order.first_call), p50(in_order.syncs),
            in_order.syncs.size() / std::max<std::size_t>(1, in_order.total.size()), p50(in_order.spawn),
            p50(in_order.second_call));
        fmt::print(
            "\n  1 worker p50 = {:.2f}x the bare task in a task's order (goal <= 1.5x); without events {:.2f}x\n",
            rows[0].p50 / in_order_floor, quiet_row.p50 / in_order_floor);
        fmt::print("  1 worker p50 = {:.2f}x the sum of the parts measured alone; without events {:.2f}x\n",
                   rows[0].p50 / floor, quiet_row.p50 / floor);
        // Both floors hold one NATS round trip and the flush, none of the events a streaming
        // task sends on to its caller.
        fmt::print(
            "  (neither floor holds the hops of the seven events: the tasks without events compare like for "
            "like)\n");
        // The sum this bench printed before 2026-12-02 (every record as an append to an existing
        // file, no flush), kept beside it so figures taken then stay comparable.
        const double appends_only = llm_p50 + spawn_p50 + records * sync_p50 + hops_p50;
        fmt::print("  (against the earlier floor, every record an append and no flush: {:.2f} ms, {:.2f}x)\n",
                   appends_only, rows[0].p50 / appends_only);
        fmt::print("  scaling: workers 4 = {:.2f}x, 4 processes = {:.2f}x the tasks/s of 1 worker (2 cores)\n",
                   rows[1].per_s / rows[0].per_s, rows[2].per_s / rows[0].per_s);
        fmt::print("\n  CPU a task in the 1-worker batches (ms; /proc/<pid>/stat), with events / without:\n");
        double sum_events = 0, sum_quiet = 0;
        for (std::size_t i = 0; i < cpu_events.size(); ++i) {
            const double e = cpu_events.ms_per_task(i, one.latency_ms.size());
            const double q = cpu_quiet.ms_per_task(i, quiet.latency_ms.size());
            sum_events += e;
            sum_quiet += q;
            fmt::print("    {:<62} {:>5.2f} / {:.2f}\n", cpu_events.name(i), e, q);
        }
        fmt::print(
            "      (the tool alone, in the floor's spawns: {:.2f}; with the other core kept busy by a spinning "
            "thread: {:.2f}, its spawn p50 {:.2f} ms)\n",
            cpu_spawn.ms_per_task(0, spawn.size()), cpu_spawn_busy.ms_per_task(0, spawn_busy.size()),
            fb::percentile(spawn_busy, 0.5));
        // The machine's share those processes held while the batches ran.
        const double cores = static_cast<double>(std::max(1L, ::sysconf(_SC_NPROCESSORS_ONLN)));
        const auto share = [cores](double ms_per_task, double tasks_per_s) {
            return 100.0 * ms_per_task * tasks_per_s / (1000.0 * cores);
        };
        fmt::print("    {:<62} {:>5.2f} / {:.2f}  = {:.0f}% / {:.0f}% of the {} cores while the batches ran\n", "sum",
                   sum_events, sum_quiet, share(sum_events, rows[0].per_s), share(sum_quiet, quiet_row.per_s), cores);
        fmt::print(
            "  the {} cores were {:.0f}% busy in the 4-slot row and {:.0f}% in the 4-process row "
            "(one task at a time: {:.0f}%),\n"
            "  at {:.2f} and {:.2f} ms of CPU a task in all (one task at a time: {:.2f})\n",
            cores, share(row_cpu_per_task[0], rows[1].per_s), share(row_cpu_per_task[1], rows[2].per_s),
            share(sum_events, rows[0].per_s), row_cpu_per_task[0], row_cpu_per_task[1], sum_events);
        const auto mib = [](long kib) { return static_cast<double>(kib) / 1024.0; };
        fmt::print("\n  worker memory (resident, from /proc/<pid>/status):\n");
        fmt::print("    1 worker: {:.1f} MiB after the warm-up, {:.1f} MiB after its {} tasks, peak {:.1f} MiB\n",
                   mib(warm_memory.now), mib(one_memory.now), one.latency_ms.size() + quiet.latency_ms.size(),
                   mib(one_memory.peak));
        for (std::size_t i = 0; i < shapes.size(); ++i) {
            fmt::print("    {}: the largest worker {:.1f} MiB after the row, peak {:.1f} MiB\n", shapes[i].name,
                       mib(row_memory[i].now), mib(row_memory[i].peak));
        }
        if (const auto one_pct = steal_one.percent(), rest_pct = steal_rest.percent(); one_pct && rest_pct) {
            fmt::print(
                "  CPU time the hypervisor took for others (steal): {:.0f}% during the 1-worker batches, "
                "{:.0f}% during the other rows; figures taken under different steal do not compare\n",
                *one_pct, *rest_pct);
        }
    } catch (const std::exception& e) {
        std::fprintf(stderr, "serve_bench: %s\n", e.what());
        return 1;
    }
    return 0;
}
