// The runstate JetStream backend against a real nats-server: the shared store contract,
// Go's bind checks and texts, two writers on one session, a lost publish ack adopted, a
// broker restart between appends, and the terminal written after a failed append.

#include <fiskai/runstate/jetstream_store.hpp>

#include "jetstream_layout.hpp"
#include "js_fixture.hpp"
#include "../runstate/store_contract.hpp"

#include <boost/asio/thread_pool.hpp>

#include <catch2/catch.hpp>

#include <filesystem>
#include <thread>

#include <unistd.h>

namespace asio = boost::asio;
namespace js = fiskai::jetstream;
namespace rs = fiskai::runstate;
using namespace std::chrono_literals;
using fiskai::test::js_fixture;
using fiskai::test::stream_spec;
using fiskai::test::runstate_contract::await;
using fiskai::test::runstate_contract::sample_meta;

namespace {

rs::context store_context(js_fixture& f) { return rs::context{f.pool.get_executor(), {}, f.connection.get()}; }

std::shared_ptr<rs::store> bind(js_fixture& f, const std::string& stream) {
    rs::jetstream_store_options o;
    o.stream = stream;
    return await(rs::bind_jetstream_store(o, store_context(f)));
}

// The startup text binding to `stream` fails with.
std::string bind_failure(js_fixture& f, const std::string& stream) {
    try {
        (void)bind(f, stream);
    } catch (const rs::startup_error& e) {
        return e.what();
    }
    return "bound";
}

std::string nonce_of(js_fixture& f, const std::string& stream, const std::string& meta_subject) {
    auto meta = await(f.js.last_message(stream, meta_subject));
    REQUIRE(meta.has_value());
    const auto id = meta->header("Nats-Msg-Id").value_or("");
    REQUIRE(id.size() == 34);
    CHECK(id.substr(32) == "-1");
    return id.substr(0, 32);
}

}  // namespace

TEST_CASE("jetstream journal layout: subjects, seq tokens, run ids and prefixes", "[runstate][jetstream][unit]") {
    namespace l = rs::js_layout;
    CHECK(l::meta_subject("fisk.sessions", "r1") == "fisk.sessions.r1._meta");
    CHECK(l::subject_for_seq("fisk.sessions", "r1", 1) == "fisk.sessions.r1._meta");
    CHECK(l::subject_for_seq("fisk.sessions", "r1", 12) == "fisk.sessions.r1.12");
    CHECK(l::run_wildcard("p", "r1") == "p.r1.>");
    CHECK(l::list_filter("p") == "p.*._meta");
    CHECK(l::parse_seq_token("p.r1._meta") == 1u);
    CHECK(l::parse_seq_token("p.r1.42") == 42u);
    CHECK(!l::parse_seq_token("p.r1.x42").has_value());
    CHECK(!l::parse_seq_token("p.r1.").has_value());
    CHECK(l::run_id_from_meta_subject("a.b", "a.b.run-1._meta") == "run-1");
    CHECK(!l::run_id_from_meta_subject("a.b", "a.c.run-1._meta").has_value());
    CHECK(!l::run_id_from_meta_subject("a.b", "a.b.run.1._meta").has_value());
    CHECK(std::get<std::string>(l::derive_prefix({"fisk.sessions.>"})) == "fisk.sessions");
    CHECK(std::get<std::string>(l::derive_prefix({"x", "deep.er.prefix.>"})) == "deep.er.prefix");
    CHECK(std::holds_alternative<l::prefix_error>(l::derive_prefix({">"})));
    CHECK(std::holds_alternative<l::prefix_error>(l::derive_prefix({"a..>"})));
    CHECK(std::get<l::prefix_error>(l::derive_prefix({">"})).text ==
          "wildcard subject \">\" has an empty prefix; it must be <prefix>.> with a non-empty prefix");
}

TEST_CASE("jetstream journal: the store contract", "[runstate][jetstream][nats]") {
    js_fixture f;
    int n = 0;
    fiskai::test::runstate_contract::run_store_contract([&] {
        // A fresh stream per store: its own name and prefix.
        const auto name = "SESSIONS_" + std::to_string(++n);
        f.add_stream({name, {"fisk.s" + std::to_string(n) + ".>"}});
        return bind(f, name);
    });
}

TEST_CASE("jetstream journal: a server without JetStream is named, with the fix", "[runstate][jetstream][nats]") {
    js_fixture f(fiskai::test::without_jetstream());
    CHECK(bind_failure(f, "FISK_SESSIONS") ==
          "jetstream session: cannot bind stream \"FISK_SESSIONS\": " + f.not_enabled_text());
}

TEST_CASE("jetstream journal: bind checks refuse what would lose or mutate a record, in Go's words",
          "[runstate][jetstream][nats]") {
    js_fixture f;
    CHECK(bind_failure(f, "FISK_SESSIONS") ==
          "jetstream session: stream \"FISK_SESSIONS\" does not exist; create it first, e.g. `nats stream add "
          "FISK_SESSIONS --subjects '<prefix>.>' --max-msgs-per-subject=1 --discard=new --discard-per-subject` "
          "(choose any single-token <prefix>)");
    // Nothing was provisioned.
    CHECK(await(f.js.get_stream_info("FISK_SESSIONS")).error().code == js::errc::not_found);

    f.add_stream({"LITERAL", {"only.literal"}});
    CHECK(bind_failure(f, "LITERAL") ==
          "jetstream session: stream \"LITERAL\" binds no wildcard subject; it must bind exactly one subject of the "
          "form <prefix>.> so runs can be stored under it");
    f.add_stream({"TWO", {"a.>", "b.>"}});
    CHECK(bind_failure(f, "TWO") ==
          "jetstream session: stream \"TWO\" binds 2 wildcard subjects (a.>, b.>); it must bind exactly one, of the "
          "form <prefix>.>, so the run prefix is unambiguous");
    f.add_stream({"STAR", {"s.*"}});
    CHECK(bind_failure(f, "STAR") ==
          "jetstream session: stream \"STAR\" wildcard subject \"s.*\" must end in a terminal '>' as <prefix>.>; a "
          "'*' wildcard does not bound the run and seq tokens");
    f.add_stream({"INNER", {"x.*.>"}});
    CHECK(bind_failure(f, "INNER") ==
          "jetstream session: stream \"INNER\" wildcard subject \"x.*.>\" must be a clean <prefix>.> with no other "
          "wildcard tokens");

    stream_spec many{"MANY", {"m.>"}};
    many.max_msgs_per_subject = 5;
    f.add_stream(many);
    CHECK(bind_failure(f, "MANY") ==
          "jetstream session: stream \"MANY\" has max messages per subject = 5; it must be 1 so each run record is "
          "write-once and immutable. Recreate or edit it with --max-msgs-per-subject=1");
    stream_spec old{"OLD", {"o.>"}};
    old.discard_new = false;
    old.discard_new_per_subject = false;
    f.add_stream(old);
    CHECK(bind_failure(f, "OLD") ==
          "jetstream session: stream \"OLD\" discard policy is DiscardOld, not DiscardNew; it must discard new writes "
          "at a full subject rather than dropping an existing record. Recreate or edit it with --discard=new");
    stream_spec per{"PER", {"p.>"}};
    per.discard_new_per_subject = false;
    f.add_stream(per);
    CHECK(bind_failure(f, "PER") ==
          "jetstream session: stream \"PER\" does not discard new per subject; it must so the per-subject limit "
          "rejects a re-publish of a record. Recreate or edit it with --discard-per-subject");
    stream_spec aging{"AGING", {"g.>"}};
    aging.max_age_ns = std::chrono::nanoseconds(1h).count();
    f.add_stream(aging);
    CHECK(bind_failure(f, "AGING") ==
          "jetstream session: stream \"AGING\" has a 1h0m0s max age; stored runs would silently expire. Recreate the "
          "stream without a max age for durable sessions");
    stream_spec tiny{"TINY", {"t.>"}};
    tiny.max_msg_size = 1024;
    f.add_stream(tiny);
    CHECK(bind_failure(f, "TINY") ==
          "jetstream session: stream \"TINY\" max message size is 1024 bytes, below the 4096 byte session record "
          "floor; a run record would fail to write. Recreate or edit it with --max-msg-size=-1 (unlimited) or at "
          "least 4096");

    // Literal subjects beside the one wildcard are the operator's and ignored.
    f.add_stream({"GOOD", {"ops.literal", "fisk.sessions.>"}});
    auto store = bind(f, "GOOD");
    CHECK(store->location() == "stream \"GOOD\"");
    auto j = await(store->create("r1", sample_meta()));
    REQUIRE(j.has_value());
    auto info = await(f.js.get_stream_info("GOOD", "fisk.sessions.>"));
    REQUIRE(info.has_value());
    CHECK(info->state.subjects == std::map<std::string, std::uint64_t>{{"fisk.sessions.r1._meta", 1}});

    rs::context no_nats{f.pool.get_executor(), {}, nullptr};
    rs::jetstream_store_options o;
    o.stream = "GOOD";
    CHECK_THROWS_WITH(await(rs::bind_jetstream_store(o, no_nats)),
                      "jetstream session: requires a NATS connection but none is configured; set nats_context in the "
                      "config to a context created with `nats context add`");
    o.stream.clear();
    CHECK_THROWS_WITH(await(rs::bind_jetstream_store(o, store_context(f))),
                      "jetstream session: options.stream is required (the JetStream stream name); the stream must "
                      "already exist");
    // Registered beside the file backend, needing NATS.
    CHECK(rs::needs_nats("jetstream"));
    CHECK(rs::backends() == std::vector<std::string>{"file", "jetstream"});
    CHECK(rs::make_store("jetstream", R"({"stream":"GOOD"})", store_context(f))->location() == "stream \"GOOD\"");
    // The registry's factory: strict options, then the same bind.
    CHECK(rs::make_jetstream_store(R"({"stream":"GOOD"})", store_context(f))->location() == "stream \"GOOD\"");
    CHECK_THROWS_AS(rs::make_jetstream_store(R"({"stream":"GOOD","extra":1})", store_context(f)), rs::startup_error);
    CHECK_THROWS_WITH(rs::make_jetstream_store(R"({"stream":7})", store_context(f)),
                      "invalid jetstream session options: \"stream\" must be a string (the JetStream stream name)");
}

TEST_CASE("jetstream journal: two writers on one session, the second is refused and nothing is overwritten",
          "[runstate][jetstream][nats]") {
    js_fixture f;
    f.add_stream({"SESSIONS", {"fisk.sessions.>"}});
    auto store = bind(f, "SESSIONS");
    auto first = await(store->create("shared", sample_meta()));
    REQUIRE(first.has_value());
    // Open takes no lock: both hold a journal at seq 1.
    auto second = await(store->open("shared"));
    REQUIRE(second.has_value());
    CHECK((*second)->last_seq() == 1);

    REQUIRE(await((*first)->append(2, fiskai::test::runstate_contract::assistant_text(2, 0, "first"))).has_value());
    auto refused = await((*second)->append(2, fiskai::test::runstate_contract::assistant_text(2, 0, "second")));
    REQUIRE(!refused.has_value());
    CHECK(refused.error().code == rs::errc::locked);
    CHECK(refused.error().message ==
          "run is already locked (by another process or a concurrent run of the same id): run \"shared\" on stream "
          "\"SESSIONS\" was advanced by another writer, so record 2 was safely rejected without overwriting anything; "
          "another process holds this run (inspect it with `nats stream subjects SESSIONS 'fisk.sessions.shared.>'`)");
    CHECK((*second)->last_seq() == 1);

    auto records = await(store->read("shared"));
    REQUIRE(records.has_value());
    REQUIRE(records->size() == 2);
    CHECK((*records)[1] == fiskai::test::runstate_contract::assistant_text(2, 0, "first"));

    // Two creators: the second finds the meta subject full.
    auto again = await(store->create("shared", sample_meta("other")));
    REQUIRE(!again.has_value());
    CHECK(again.error().code == rs::errc::exists);
}

TEST_CASE("jetstream journal: a record stored without its ack reaching us is adopted", "[runstate][jetstream][nats]") {
    js_fixture f;
    stream_spec spec{"SESSIONS", {"fisk.sessions.>"}};
    f.add_stream(spec);
    auto store = bind(f, "SESSIONS");
    auto j = await(store->create("lost", sample_meta()));
    REQUIRE(j.has_value());
    const auto nonce = nonce_of(f, "SESSIONS", "fisk.sessions.lost._meta");
    const auto rec = fiskai::test::runstate_contract::assistant_text(2, 0, "landed");

    // Our publish of record 2 lands, its ack is lost: simulated by publishing the very
    // bytes with our Nats-Msg-Id from outside.
    f.raw_publish("fisk.sessions.lost.2", rs::encode_record(rec), nonce + "-2");
    REQUIRE(await((*j)->append(2, rec)).has_value());
    CHECK((*j)->last_seq() == 2);

    auto records = await(store->read("lost"));
    REQUIRE(records.has_value());
    REQUIRE(records->size() == 2);
    CHECK((*records)[1] == rec);
    REQUIRE(await((*j)->append(3, fiskai::test::runstate_contract::terminal(3, rs::terminal_reason::completed)))
                .has_value());
}

TEST_CASE("jetstream journal: an earlier record of ours at the seq is counted, not taken for another one",
          "[runstate][jetstream][nats]") {
    js_fixture f;
    stream_spec spec{"SESSIONS", {"fisk.sessions.>"}};
    f.add_stream(spec);
    auto store = bind(f, "SESSIONS");
    auto j = await(store->create("moved", sample_meta()));
    REQUIRE(j.has_value());
    const auto nonce = nonce_of(f, "SESSIONS", "fisk.sessions.moved._meta");
    // Record 2 was published and stored, but its append reported a timeout (simulated from
    // outside, with our Nats-Msg-Id), so the caller writes its terminal at seq 2 instead.
    const auto landed = fiskai::test::runstate_contract::assistant_text(2, 0, "landed");
    f.raw_publish("fisk.sessions.moved.2", rs::encode_record(landed), nonce + "-2");

    auto terminal = await((*j)->append_next(rs::terminal_record{rs::terminal_reason::error, "appending timed out"}));
    REQUIRE(!terminal.has_value());
    CHECK(terminal.error().code == rs::errc::storage);
    CHECK(terminal.error().message ==
          "jetstream session: record 2 of run \"moved\" was already stored by an earlier append of this journal "
          "whose acknowledgement was lost, with other content; this record was not written (the next append "
          "follows the stored one)");
    CHECK((*j)->last_seq() == 2);

    // The terminal goes after the stored record, which is still there.
    REQUIRE(
        await((*j)->append_next(rs::terminal_record{rs::terminal_reason::error, "appending timed out"})).has_value());
    auto records = await(store->read("moved"));
    REQUIRE(records.has_value());
    REQUIRE(records->size() == 3);
    CHECK((*records)[1] == landed);
    auto state = await(store->load("moved"));
    REQUIRE(state.has_value());
    REQUIRE(state->terminal.has_value());
    CHECK(state->last_seq == 3);
}

TEST_CASE("jetstream journal: adoption by read-back when the duplicate window has passed",
          "[runstate][jetstream][nats]") {
    js_fixture f;
    f.add_stream({"SESSIONS", {"fisk.sessions.>"}});
    // A 100 ms duplicate window, so that a repeat is no longer caught by deduplication.
    {
        jsStreamConfig cfg;
        jsStreamConfig_Init(&cfg);
        cfg.Name = "SESSIONS";
        const char* subjects[] = {"fisk.sessions.>"};
        cfg.Subjects = subjects;
        cfg.SubjectsLen = 1;
        cfg.MaxMsgsPerSubject = 1;
        cfg.Discard = js_DiscardNew;
        cfg.DiscardNewPerSubject = true;
        cfg.Duplicates = std::chrono::nanoseconds(100ms).count();
        jsErrCode ec = static_cast<jsErrCode>(0);
        REQUIRE(js_UpdateStream(nullptr, f.raw_js(), &cfg, nullptr, &ec) == NATS_OK);
    }
    auto store = bind(f, "SESSIONS");
    auto j = await(store->create("late", sample_meta()));
    REQUIRE(j.has_value());
    const auto nonce = nonce_of(f, "SESSIONS", "fisk.sessions.late._meta");
    const auto rec = fiskai::test::runstate_contract::assistant_text(2, 0, "landed");
    f.raw_publish("fisk.sessions.late.2", rs::encode_record(rec), nonce + "-2");

    // Wait until the server no longer treats our id as a duplicate: a publish of it is then
    // refused at the full subject rather than acknowledged as a duplicate.
    bool refused_at_subject = false;
    for (int i = 0; i < 100 && !refused_at_subject; ++i) {
        js::publish_options po;
        po.msg_id = nonce + "-2";
        auto probe = await(f.js.publish("fisk.sessions.late.2", rs::encode_record(rec), {}, po));
        refused_at_subject = !probe.has_value() && probe.error().code == js::errc::api_error;
        if (!refused_at_subject) std::this_thread::sleep_for(50ms);  // the window is time-based
    }
    REQUIRE(refused_at_subject);
    REQUIRE(await((*j)->append(2, rec)).has_value());
    CHECK((*j)->last_seq() == 2);
    auto records = await((*j)->records());
    REQUIRE(records.has_value());
    CHECK(records->size() == 2);
}

TEST_CASE("jetstream journal: a failed append leaves the journal as it was, the terminal follows",
          "[runstate][jetstream][nats]") {
    js_fixture f;
    stream_spec spec{"SESSIONS", {"fisk.sessions.>"}};
    spec.max_msg_size = 4096;
    f.add_stream(spec);
    auto store = bind(f, "SESSIONS");
    auto j = await(store->create("big", sample_meta()));
    REQUIRE(j.has_value());
    auto too_big =
        await((*j)->append(2, fiskai::test::runstate_contract::assistant_text(2, 0, std::string(5000, 'x'))));
    REQUIRE(!too_big.has_value());
    CHECK(too_big.error().code == rs::errc::storage);
    CHECK(too_big.error().message.rfind("jetstream session: appending record 2 to run \"big\": ", 0) == 0);
    CHECK((*j)->last_seq() == 1);
    REQUIRE(await((*j)->append_next(rs::terminal_record{rs::terminal_reason::error, "record too large"})).has_value());
    CHECK((*j)->last_seq() == 2);
    auto state = await(store->load("big"));
    REQUIRE(state.has_value());
    REQUIRE(state->terminal.has_value());
    CHECK(state->terminal->reason == rs::terminal_reason::error);
}

TEST_CASE("jetstream journal: a broker restart between appends, the journal appends after reconnect",
          "[runstate][jetstream][nats][fault]") {
    namespace fs = std::filesystem;
    const fs::path dir = fs::temp_directory_path() / ("fiskai-js-restart-" + std::to_string(::getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir);
    fiskai::conns::broker_options bo;
    bo.store_dir = dir.string();
    auto broker = std::make_unique<fiskai::conns::embedded_broker>(bo);
    bo.port = broker->port();
    auto connection = fiskai::conns::connection::dial_url(broker->url(), fiskai::test::js_test_connect_options());
    asio::thread_pool pool(2);
    {
        jsCtx* raw = nullptr;
        REQUIRE(natsConnection_JetStream(&raw, connection->native_handle(), nullptr) == NATS_OK);
        jsStreamConfig cfg;
        jsStreamConfig_Init(&cfg);
        cfg.Name = "SESSIONS";
        const char* subjects[] = {"fisk.sessions.>"};
        cfg.Subjects = subjects;
        cfg.SubjectsLen = 1;
        cfg.MaxMsgsPerSubject = 1;
        cfg.Discard = js_DiscardNew;
        cfg.DiscardNewPerSubject = true;
        cfg.Storage = js_FileStorage;
        jsErrCode ec = static_cast<jsErrCode>(0);
        REQUIRE(js_AddStream(nullptr, raw, &cfg, nullptr, &ec) == NATS_OK);
        jsCtx_Destroy(raw);
    }
    rs::jetstream_store_options o;
    o.stream = "SESSIONS";
    auto store = await(rs::bind_jetstream_store(o, rs::context{pool.get_executor(), {}, connection.get()}));
    auto j = await(store->create("survivor", sample_meta()));
    REQUIRE(j.has_value());
    REQUIRE(await((*j)->append(2, fiskai::test::runstate_contract::assistant_tool_use(2, 0, "t1"))).has_value());

    broker->stop();
    REQUIRE(fiskai::test::wait_until([&] { return !connection->is_connected(); }, 10s));
    broker = std::make_unique<fiskai::conns::embedded_broker>(bo);
    REQUIRE(fiskai::test::wait_until([&] { return connection->is_connected(); }, 20s));

    REQUIRE(await((*j)->append(3, fiskai::test::runstate_contract::tool_result(3, "t1"))).has_value());
    REQUIRE(await((*j)->append(4, fiskai::test::runstate_contract::terminal(4, rs::terminal_reason::completed)))
                .has_value());
    auto state = await(store->load("survivor"));
    REQUIRE(state.has_value());
    CHECK(state->completed());
    CHECK(state->last_seq == 4);
    j->reset();
    store.reset();
    pool.join();
    connection->close();
    broker->stop();
    fs::remove_all(dir);
}

TEST_CASE("jetstream journal: a stored record that fails its schema is corrupt, naming the subject",
          "[runstate][jetstream][nats]") {
    js_fixture f;
    f.add_stream({"SESSIONS", {"fisk.sessions.>"}});
    auto store = bind(f, "SESSIONS");
    auto j = await(store->create("bad", sample_meta()));
    REQUIRE(j.has_value());
    f.raw_publish("fisk.sessions.bad.2", R"({"seq":2,"protocol":"io.choria.fisk-ai.v1.session.terminal"})");
    auto records = await(store->read("bad"));
    REQUIRE(!records.has_value());
    CHECK(records.error().code == rs::errc::corrupt);
    CHECK(records.error().message.rfind(R"(corrupt record sequence: run "bad" record "fisk.sessions.bad.2": )", 0) ==
          0);
    // An unreadable run is left out of the list rather than failing it.
    auto good = await(store->create("good", sample_meta()));
    REQUIRE(good.has_value());
    auto list = await(store->list());
    REQUIRE(list.has_value());
    REQUIRE(list->size() == 1);
    CHECK(list->front().run_id == "good");
    CHECK(list->front().updated.seconds.time_since_epoch().count() > 0);
}
