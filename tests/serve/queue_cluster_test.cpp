// The queue on a real JetStream cluster (issue 16): three nats-server processes on loopback
// forming one cluster, the work-queue stream, the answer bucket and the session journal at 3
// replicas, two workers connected to different nodes, each given all three URLs. The node a
// busy worker is connected to is killed (SIGKILL); the worker reconnects to another node and
// every job completes exactly once.
#include "queue_support.hpp"

#include <fiskai/runstate/jetstream_store.hpp>

#include <boost/asio/thread_pool.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <list>
#include <thread>

using namespace queue_test;

namespace {

namespace runstate = fiskai::runstate;

// A port nothing listens on now, for a node's cluster listener (routes need it up front).
unsigned short free_port() {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    REQUIRE(fd >= 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = 0;
    ::inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
    REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
    socklen_t len = sizeof addr;
    REQUIRE(::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0);
    ::close(fd);
    return ntohs(addr.sin_port);
}

// Polls `f` on this thread until it holds or the deadline passes (no workers run yet).
bool poll_until(const std::function<bool()>& f, std::chrono::steady_clock::duration deadline) {
    const auto end = std::chrono::steady_clock::now() + deadline;
    while (!f()) {
        if (std::chrono::steady_clock::now() >= end) return false;
        std::this_thread::sleep_for(200ms);
    }
    return true;
}

struct node {
    std::string name;
    std::unique_ptr<conns::embedded_broker> broker;
};

// Three servers of one cluster, each with JetStream in its own store and its own name.
struct cluster {
    std::vector<node> nodes;

    cluster() {
        std::vector<unsigned short> ports;
        while (ports.size() < 3) {
            const auto p = free_port();
            if (std::find(ports.begin(), ports.end(), p) == ports.end()) ports.push_back(p);
        }
        std::string routes;
        for (auto p : ports) routes += fmt::format("{}nats://127.0.0.1:{}", routes.empty() ? "" : ",", p);
        for (std::size_t i = 0; i < ports.size(); ++i) {
            conns::broker_options o;
            o.extra_args = {"--server_name",  fmt::format("n{}", i),
                            "--cluster_name", "fisk-queue",
                            "--cluster",      fmt::format("nats://127.0.0.1:{}", ports[i]),
                            "--routes",       routes};
            o.startup_deadline = 30s;
            nodes.push_back(node{fmt::format("n{}", i), std::make_unique<conns::embedded_broker>(o)});
        }
    }

    [[nodiscard]] std::string urls() const {
        std::string out;
        for (const auto& n : nodes) out += (out.empty() ? "" : ",") + n.broker->url();
        return out;
    }

    // The node a connection is on, by its client URL; null when none matches.
    node* serving(const conns::connection& c) {
        const auto url = c.connected_url();
        for (auto& n : nodes)
            if (n.broker->running() && !url.empty() && url.ends_with(fmt::format(":{}", n.broker->port()))) return &n;
        return nullptr;
    }
};

// The operator's side, through nats.c directly: provisioning at 3 replicas and reading back.
struct admin {
    std::unique_ptr<conns::connection> conn;
    jsCtx* js = nullptr;
    kvStore* kv = nullptr;

    explicit admin(const std::string& urls)
        : conn(conns::connection::dial_url(urls, fiskai::test::js_test_connect_options())) {
        jsOptions o;
        jsOptions_Init(&o);
        o.Wait = 5000;
        REQUIRE(natsConnection_JetStream(&js, conn->native_handle(), &o) == NATS_OK);
    }
    ~admin() {
        if (kv) kvStore_Destroy(kv);
        if (js) jsCtx_Destroy(js);
    }

    bool meta_leader() const {
        jsAccountInfo* ai = nullptr;
        jsErrCode ec = static_cast<jsErrCode>(0);
        if (js_GetAccountInfo(&ai, js, nullptr, &ec) != NATS_OK) return false;
        jsAccountInfo_Destroy(ai);
        return true;
    }

    bool add_stream(jsStreamConfig& cfg) const {
        jsErrCode ec = static_cast<jsErrCode>(0);
        jsStreamInfo* si = nullptr;
        if (js_AddStream(&si, js, &cfg, nullptr, &ec) != NATS_OK) return false;
        jsStreamInfo_Destroy(si);
        return true;
    }

    bool provision() {
        jsStreamConfig work;
        jsStreamConfig_Init(&work);
        work.Name = "FISK_WORK";
        const char* work_subjects[] = {"choria.fisk-ai.work.>"};
        work.Subjects = work_subjects;
        work.SubjectsLen = 1;
        work.Retention = js_WorkQueuePolicy;
        work.MaxMsgSize = 1048576;
        work.Storage = js_FileStorage;
        work.Replicas = 3;
        jsStreamConfig sessions;
        jsStreamConfig_Init(&sessions);
        sessions.Name = "SESSIONS";
        const char* session_subjects[] = {"fisk.sessions.>"};
        sessions.Subjects = session_subjects;
        sessions.SubjectsLen = 1;
        sessions.MaxMsgsPerSubject = 1;
        sessions.Discard = js_DiscardNew;
        sessions.DiscardNewPerSubject = true;
        sessions.Storage = js_FileStorage;
        sessions.Replicas = 3;
        if (!add_stream(work) || !add_stream(sessions)) return false;
        if (!kv) {
            kvConfig cfg;
            kvConfig_Init(&cfg);
            cfg.Bucket = "FISK_TASKS";
            cfg.MaxValueSize = 786432;
            cfg.History = 1;
            cfg.Replicas = 3;
            if (js_CreateKeyValue(&kv, js, &cfg) != NATS_OK) return false;
        }
        jsConsumerConfig consumer;
        jsConsumerConfig_Init(&consumer);
        consumer.Durable = "svc";
        consumer.FilterSubject = "choria.fisk-ai.work.svc";
        consumer.AckPolicy = js_AckExplicit;
        consumer.AckWait = std::chrono::nanoseconds(30s).count();
        consumer.MaxDeliver = 5;
        consumer.MaxAckPending = 1000;
        consumer.DeliverPolicy = js_DeliverAll;
        jsConsumerInfo* ci = nullptr;
        jsErrCode ec = static_cast<jsErrCode>(0);
        if (js_AddConsumer(&ci, js, "FISK_WORK", &consumer, nullptr, &ec) != NATS_OK) return false;
        jsConsumerInfo_Destroy(ci);
        return true;
    }

    static bool led(const jsClusterInfo* c, const std::string& not_on) {
        return c && c->Leader && *c->Leader && not_on != c->Leader;
    }

    // Every stream and the consumer have a leader, none on `not_on`.
    bool leaders(const std::string& not_on = {}) const {
        for (const char* name : {"FISK_WORK", "KV_FISK_TASKS", "SESSIONS"}) {
            jsStreamInfo* si = nullptr;
            jsErrCode ec = static_cast<jsErrCode>(0);
            if (js_GetStreamInfo(&si, js, name, nullptr, &ec) != NATS_OK) return false;
            const bool ok = led(si->Cluster, not_on);
            jsStreamInfo_Destroy(si);
            if (!ok) return false;
        }
        jsConsumerInfo* ci = nullptr;
        jsErrCode ec = static_cast<jsErrCode>(0);
        if (js_GetConsumerInfo(&ci, js, "FISK_WORK", "svc", nullptr, &ec) != NATS_OK) return false;
        const bool ok = led(ci->Cluster, not_on);
        jsConsumerInfo_Destroy(ci);
        return ok;
    }

    // The server leading a stream's replicas; empty while there is none.
    std::string stream_leader(const char* stream) const {
        jsStreamInfo* si = nullptr;
        jsErrCode ec = static_cast<jsErrCode>(0);
        if (js_GetStreamInfo(&si, js, stream, nullptr, &ec) != NATS_OK) return {};
        std::string leader = si->Cluster && si->Cluster->Leader ? si->Cluster->Leader : "";
        jsStreamInfo_Destroy(si);
        return leader;
    }

    void enqueue(const std::string& task, const std::string& prompt) const {
        const auto body = world::job_body(task, prompt);
        jsPubOptions po;
        jsPubOptions_Init(&po);
        po.MsgId = task.c_str();
        jsErrCode ec = static_cast<jsErrCode>(0);
        jsPubAck* pa = nullptr;
        REQUIRE(js_Publish(&pa, js, "choria.fisk-ai.work.svc", body.data(), static_cast<int>(body.size()), &po, &ec) ==
                NATS_OK);
        jsPubAck_Destroy(pa);
    }

    std::optional<std::string> answer(const std::string& task) const {
        kvEntry* e = nullptr;
        if (kvStore_Get(&e, kv, ("svc." + task).c_str()) != NATS_OK) return std::nullopt;
        std::string value(kvEntry_ValueString(e), static_cast<std::size_t>(kvEntry_ValueLen(e)));
        kvEntry_Destroy(e);
        return value;
    }

    // Messages and last sequence of a stream; nullopt while it cannot answer.
    std::optional<std::pair<std::uint64_t, std::uint64_t>> state(const char* stream) const {
        jsStreamInfo* si = nullptr;
        jsErrCode ec = static_cast<jsErrCode>(0);
        if (js_GetStreamInfo(&si, js, stream, nullptr, &ec) != NATS_OK) return std::nullopt;
        std::pair<std::uint64_t, std::uint64_t> out{si->State.Msgs, si->State.LastSeq};
        jsStreamInfo_Destroy(si);
        return out;
    }

    std::int64_t redelivered() const {
        jsConsumerInfo* ci = nullptr;
        jsErrCode ec = static_cast<jsErrCode>(0);
        if (js_GetConsumerInfo(&ci, js, "FISK_WORK", "svc", nullptr, &ec) != NATS_OK) return -1;
        const auto n = ci->NumRedelivered;
        jsConsumerInfo_Destroy(ci);
        return n;
    }
};

// A worker's connection (all three URLs), blocking pool and JetStream context. Kept apart
// from the worker so they outlive the io_context, where a channel's last handlers may linger
// (the connections are closed before it goes: fetches_ended).
struct worker_link {
    std::unique_ptr<conns::connection> conn;
    asio::thread_pool pool{2};
    std::unique_ptr<js::context> jsctx;

    explicit worker_link(std::unique_ptr<conns::connection> c)
        : conn(std::move(c)), jsctx(std::make_unique<js::context>(*conn, pool.get_executor())) {}
};

// One worker of the fleet: its journal on the replicated SESSIONS stream, its queue channel
// and its server (one slot), all on `l`.
struct cluster_worker {
    worker_link& l;
    std::shared_ptr<fiskai::agent::runtime> rt;
    std::shared_ptr<serve::queue_channel> channel;
    std::unique_ptr<serve::server> server;
    std::future<void> finished;

    cluster_worker(fiskai::test::session_harness& h, worker_link& lk) : l(lk) {
        runstate::jetstream_store_options so;
        so.stream = "SESSIONS";
        rt = std::make_shared<fiskai::agent::runtime>(*h.rt);
        rt->sessions = fiskai::test::run_on(
            h.ioc, runstate::bind_jetstream_store(so, runstate::context{l.pool.get_executor(), {}, l.conn.get()}), 30s);
        serve::queue_channel_options o;
        o.identity = "svc";
        o.context_name = "cluster";
        o.fetch_wait = 500ms;
        o.crash_delay = 200ms;
        o.put_retry_delay = 500ms;
        o.tool_names = {"gate"};
        channel =
            fiskai::test::run_on(h.ioc, serve::queue_channel::open(*l.conn, *l.jsctx, h.ioc.get_executor(), o), 30s);
        serve::server_options sv;
        sv.workers = 1;
        server = std::make_unique<serve::server>(h.ioc.get_executor(), rt, sv);
        server->add(channel, serve::channel_options{true});
        finished = asio::co_spawn(h.ioc, server->run(), asio::use_future);
    }
};

}  // namespace

TEST_CASE("queue fault: a 3-node cluster loses the node a busy worker is connected to, every job completes once",
          "[serve][queue][nats][fault][cluster]") {
    const std::filesystem::path dir = [] {
        std::string pattern = (std::filesystem::temp_directory_path() / "fiskai-queue-cluster-XXXXXX").string();
        return std::filesystem::path(::mkdtemp(pattern.data()));
    }();
    struct cleanup {
        std::filesystem::path dir;
        ~cleanup() {
            std::error_code ec;
            std::filesystem::remove_all(dir, ec);
        }
    } cleanup_dir{dir};

    cluster c;
    admin op(c.urls());
    // The cluster elects a meta leader, then takes the replicated streams, bucket and consumer
    // (a create can be refused until every peer is known), then elects their leaders.
    REQUIRE(poll_until([&] { return op.meta_leader(); }, 90s));
    REQUIRE(poll_until([&] { return op.provision(); }, 90s));
    REQUIRE(poll_until([&] { return op.leaders(); }, 90s));

    const auto llm_log = (dir / "llm.log").string();
    const auto fake = fiskai::test::start_scripted_fake_llm(FISKAI_FAKE_LLM, dir, fault_script(), {"--log", llm_log});
    fiskai::config::config cfg;
    cfg.llm.model = "claude-test";
    std::filesystem::create_directories(dir / "unused");
    std::list<worker_link> links;
    fiskai::test::session_harness h(cfg, (dir / "unused").string(),
                                    fiskai::test::fake_model_provider(fake->port(), "anthropic", 1));
    // Goes before the io_context does (declared after it): a fetch still waiting on its thread
    // posts its result to that context when it returns, so the connections are closed (which
    // ends the wait) and every such thread is waited for (see world::~world).
    struct fetches_ended {
        std::list<worker_link>& links;
        ~fetches_ended() {
            for (auto& l : links) l.conn->close();
            js::wait_for_offloaded_threads(10s);
        }
    } fetches_end{links};
    auto g = std::make_shared<gate_state>();
    h.rt->tools.push_back(gate_tool(g));

    // Runs the workers' io_context until `done` holds or the deadline passes.
    auto until = [&](const std::function<bool()>& done, std::chrono::steady_clock::duration deadline) {
        const auto end = std::chrono::steady_clock::now() + deadline;
        while (!done()) {
            if (std::chrono::steady_clock::now() >= end) return false;
            if (h.ioc.stopped()) h.ioc.restart();
            for (int i = 0; i < 10; ++i) h.ioc.run_one_for(20ms);
        }
        return true;
    };

    // Two workers on different nodes, worker a on the node leading the work stream, so its
    // death also moves that leadership. nats.c picks a server of the list at random: each
    // dials until it lands where wanted.
    const auto work_leader = op.stream_leader("FISK_WORK");
    REQUIRE(!work_leader.empty());
    const auto dial_until = [&](const std::function<bool(const node*)>& wanted) {
        for (int i = 0; i < 100; ++i) {
            auto conn = conns::connection::dial_url(c.urls(), fiskai::test::js_test_connect_options());
            if (wanted(c.serving(*conn))) return conn;
        }
        return std::unique_ptr<conns::connection>();
    };
    auto a_conn = dial_until([&](const node* n) { return n && n->name == work_leader; });
    REQUIRE(a_conn);
    auto* a_node = c.serving(*a_conn);
    auto b_conn = dial_until([&](const node* n) { return n && n != a_node; });
    REQUIRE(b_conn);
    auto& a_link = links.emplace_back(std::move(a_conn));
    auto& b_link = links.emplace_back(std::move(b_conn));
    auto a = std::make_unique<cluster_worker>(h, a_link);
    auto b = std::make_unique<cluster_worker>(h, b_link);
    INFO("worker a on " << a_node->name << ", worker b on " << c.serving(*b_link.conn)->name);

    // Both busy: each (one slot) holds one job, its run in the gate tool.
    op.enqueue("C1", "GATE one");
    op.enqueue("C2", "GATE two");
    REQUIRE(until([&] { return g->entered == 2; }, 60s));
    CHECK(a->channel->in_flight() == 1);
    CHECK(b->channel->in_flight() == 1);

    // kill -9 the node worker a is connected to; a reconnects to another node.
    const std::string killed = a_node->name;
    a_node->broker->kill_now();
    REQUIRE(until(
        [&] {
            auto* now = c.serving(*a->l.conn);
            return a->l.conn->is_connected() && now && now->name != killed;
        },
        60s));
    // The replicated groups led from the dead node elect new leaders among the two left.
    REQUIRE(until([&] { return op.leaders(killed); }, 120s));
    CHECK(op.stream_leader("FISK_WORK") != work_leader);

    g->open = true;
    std::optional<std::string> one;
    std::optional<std::string> two;
    REQUIRE(until(
        [&] {
            if (!one) one = op.answer("C1");
            if (!two) two = op.answer("C2");
            return one && two;
        },
        120s));
    for (const auto* stored : {&*one, &*two}) {
        auto m = a2a::default_validator().check_as<a2a::task_result>(*stored);
        INFO("stored: " << *stored);
        REQUIRE(m.has_value());
        CHECK(m->text == "gate answer");
    }
    // Both jobs acked (the work queue empties), each delivered once and answered once (two
    // puts in the bucket's stream), no model step asked twice, each tool call run once.
    REQUIRE(until(
        [&] {
            auto s = op.state("FISK_WORK");
            return s && s->first == 0 && a->channel->in_flight() == 0 && b->channel->in_flight() == 0;
        },
        60s));
    CHECK(op.redelivered() == 0);
    auto answers = op.state("KV_FISK_TASKS");
    REQUIRE(answers);
    CHECK(answers->second == 2);
    CHECK(count_lines(llm_log, {R"("conversation":"gate")", R"("step":0)"}) == 2);
    CHECK(count_lines(llm_log, {R"("conversation":"gate")", R"("step":1)"}) == 2);
    CHECK(g->passed == 2);

    for (auto* w : {a.get(), b.get()}) w->server->drain();
    REQUIRE(until(
        [&] {
            return a->finished.wait_for(0s) == std::future_status::ready &&
                   b->finished.wait_for(0s) == std::future_status::ready;
        },
        60s));
    a->finished.get();
    b->finished.get();
}
