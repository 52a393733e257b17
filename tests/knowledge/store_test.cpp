// The index against real SQLite files: ranking on a generated corpus with known answers,
// quoting, incremental re-index, the lock and the bad inputs.
#include "knowledge_support.hpp"

#include <fiskai/knowledge/store.hpp>

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <filesystem>

#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace fiskai;
using namespace fiskai::knowledge;
namespace asio = boost::asio;

namespace {

store_options lexical_options(const test::temp_dir& t) {
    store_options o;
    o.directory = (t.path / "index").string();
    return o;
}

std::shared_ptr<store> writer(asio::io_context& ioc, const test::temp_dir& t) {
    auto s = store::open_writer(ioc.get_executor(), lexical_options(t));
    REQUIRE(s);
    return *s;
}

std::shared_ptr<store> reader(asio::io_context& ioc, const test::temp_dir& t) {
    auto s = store::open(ioc.get_executor(), lexical_options(t));
    REQUIRE(s);
    return *s;
}

index_stats index_all(asio::io_context& ioc, const std::shared_ptr<store>& s, std::vector<std::string> roots,
                      index_options o = {}) {
    auto r = test::run_on(ioc, s->index(std::move(roots), std::move(o)));
    if (!r) FAIL(r.error().message);
    return *r;
}

search_result find(asio::io_context& ioc, const std::shared_ptr<store>& s, const std::string& q, int k = 0) {
    auto r = test::run_on(ioc, s->search(q, k));
    if (!r) FAIL(r.error().message);
    return *r;
}

struct known_query {
    std::string query;
    std::string expected;  // file name under known/
};

}  // namespace

TEST_CASE("lexical tier: top-3 hit rate on the known-answer queries", "[knowledge][store]") {
    test::temp_dir t;
    asio::io_context ioc;
    const auto root = test::make_corpus(t, 300);
    auto w = writer(ioc, t);
    const auto stats = index_all(ioc, w, {root.string()});
    CHECK(stats.files == 313);
    CHECK(stats.added == 313);
    CHECK(stats.first_build);
    w.reset();

    const std::vector<known_query> queries{
        {"how do I create a stream with file storage", "streams.md"},
        {"work-queue retention removes acknowledged messages", "streams.md"},
        {"stream-info output sequence", "streams.md"},
        {"pull consumer batches backpressure", "consumers.md"},
        {"message redelivered after AckWait", "consumers.md"},
        {"rotate API keys laptop lost", "rotation.md"},
        {"revoke the old NKey seed", "rotation.md"},
        {"restore database from nightly snapshot", "backups.md"},
        {"certificate renewal before expiry", "tls.md"},
        {"clients pin the intermediate CA", "tls.md"},
        {"HTTP 429 Retry-After backoff", "ratelimits.md"},
        {"canary bakes for one hour", "deploy.md"},
        {"rollback when error budget burns", "deploy.md"},
        {"structured JSON log fields trace_id", "logging.md"},
        {"escalate to the secondary when the primary does not acknowledge", "oncall.md"},
        {"backwards compatible schema migration drop column", "migrations.md"},
        {"purge the edge cache after editing content", "caching.txt"},
        {"feature flag rollout percentage delete", "flags.md"},
        {"GCC 12 coroutine temporaries co_await", "cpp.md"},
        {"severity one status page", "oncall.md"},
    };
    auto r = reader(ioc, t);
    int top3 = 0;
    std::string misses;
    for (const auto& q : queries) {
        const auto res = find(ioc, r, q.query);
        REQUIRE(res.status == search_status::ok);
        bool hit = false;
        for (std::size_t i = 0; i < std::min<std::size_t>(3, res.hits.size()); ++i) {
            if (res.hits[i].path.ends_with("known/" + q.expected)) hit = true;
        }
        if (hit) {
            ++top3;
        } else {
            misses += fmt::format("\n  {:?} -> {}", q.query, res.hits.empty() ? "nothing" : res.hits[0].citation);
        }
    }
    const double rate = static_cast<double>(top3) / static_cast<double>(queries.size());
    INFO("top-3 hit rate " << rate << misses);
    CHECK(rate >= 0.9);
}

TEST_CASE("citations name the walked path and ordinal, and resolve back", "[knowledge][store]") {
    test::temp_dir t;
    asio::io_context ioc;
    const auto root = test::make_corpus(t, 0);
    auto w = writer(ioc, t);
    index_all(ioc, w, {root.string()});
    const auto res = find(ioc, w, "retention policies", 1);
    REQUIRE(res.hits.size() == 1);
    const auto expected_path = (root / "known" / "streams.md").lexically_normal().generic_string();
    CHECK(res.hits[0].citation == expected_path + "#1");
    CHECK(res.hits[0].heading_path == "Streams > Retention policies");

    const auto parsed = parse_citation(res.hits[0].citation);
    REQUIRE(parsed);
    const auto text = test::run_on(ioc, w->chunk(parsed->first, parsed->second));
    REQUIRE(text);
    CHECK(text->content.starts_with("Streams > Retention policies\n\nLimits retention"));
    const auto missing = test::run_on(ioc, w->chunk(parsed->first, 99));
    REQUIRE_FALSE(missing);
    CHECK(missing.error().code == errc::not_found);

    CHECK(parse_citation("docs/a.md").error().message ==
          R"(citation "docs/a.md" is missing the '#<ordinal>' suffix; expected <relpath>#<ordinal>)");
    CHECK(parse_citation("docs/a.md#x").error().message ==
          R"(citation "docs/a.md#x" is malformed; expected <relpath>#<ordinal>, e.g. docs/design.md#3)");
    CHECK(parse_citation("#3").error().code == errc::bad_input);
}

TEST_CASE("FTS syntax in a query is never a syntax error", "[knowledge][store][fts]") {
    test::temp_dir t;
    asio::io_context ioc;
    const auto root = test::make_corpus(t, 20);
    auto w = writer(ioc, t);
    index_all(ioc, w, {root.string()});

    auto info = find(ioc, w, "stream-info");
    REQUIRE(info.status == search_status::ok);
    REQUIRE_FALSE(info.hits.empty());

    auto ack = find(ioc, w, "ack OR");
    REQUIRE(ack.status == search_status::ok);
    REQUIRE_FALSE(ack.hits.empty());
    CHECK(ack.hits[0].path.ends_with("consumers.md"));

    auto cpp = find(ioc, w, "c++ toolchain");
    REQUIRE(cpp.status == search_status::ok);
    CHECK(cpp.hits[0].path.ends_with("cpp.md"));

    for (const std::string& q : std::vector<std::string>{"\"", "c++", "", "   ", "*", "(", "a:b"}) {
        INFO(q);
        const auto r = find(ioc, w, q);
        CHECK(r.status == search_status::index_empty);
        CHECK(r.hits.empty());
    }
    CHECK(find(ioc, w, "x:streams").status == search_status::ok);
    CHECK(find(ioc, w, "NEAR(retention").status == search_status::ok);

    std::string big;
    while (big.size() < 10 * 1024) big += "retention consumer \"quote\" (paren) OR AND NOT * ";
    const auto large = find(ioc, w, big);
    CHECK(large.status == search_status::ok);
    CHECK_FALSE(large.hits.empty());
}

TEST_CASE("top_k defaults to 5 and is capped at 20", "[knowledge][store]") {
    test::temp_dir t;
    asio::io_context ioc;
    const auto root = test::make_corpus(t, 100);
    auto w = writer(ioc, t);
    index_all(ioc, w, {root.string()});
    CHECK(find(ioc, w, "stream service message").hits.size() == 5);
    CHECK(find(ioc, w, "stream service message", 2).hits.size() == 2);
    CHECK(find(ioc, w, "stream service message", 500).hits.size() == 20);
}

TEST_CASE("re-index: unchanged files are skipped, an edit is re-ingested, a removal reconciled", "[knowledge][store]") {
    test::temp_dir t;
    asio::io_context ioc;
    const auto root = test::make_corpus(t, 10);
    auto w = writer(ioc, t);
    index_options reconcile;
    reconcile.reconcile = true;
    const auto first = index_all(ioc, w, {root.string()}, reconcile);
    CHECK(first.added == 23);

    const auto again = index_all(ioc, w, {root.string()}, reconcile);
    CHECK(again.added == 0);
    CHECK(again.updated == 0);
    CHECK(again.skipped == 23);
    CHECK(again.chunks == first.chunks);
    CHECK_FALSE(again.first_build);

    // Same bytes, new mtime: read, hashed, found unchanged.
    const auto logging = root / "known" / "logging.md";
    struct timespec times[2] = {{1, 0}, {1, 0}};
    REQUIRE(::utimensat(AT_FDCWD, logging.c_str(), times, 0) == 0);
    CHECK(index_all(ioc, w, {root.string()}, reconcile).skipped == 23);

    // An edit that shrinks the file leaves no ghost chunks.
    t.write("docs/known/logging.md", "# Logging conventions\n\nEverything now goes to the zanzibar collector.\n");
    const auto edited = index_all(ioc, w, {root.string()}, reconcile);
    CHECK(edited.updated == 1);
    CHECK(edited.skipped == 22);
    auto hit = find(ioc, w, "zanzibar");
    REQUIRE(hit.hits.size() == 1);
    CHECK(hit.hits[0].path.ends_with("logging.md"));
    for (const auto& h : find(ioc, w, "trace_id").hits) CHECK_FALSE(h.path.ends_with("logging.md"));

    std::filesystem::remove(root / "known" / "flags.md");
    const auto removed = index_all(ioc, w, {root.string()}, reconcile);
    CHECK(removed.removed == 1);
    for (const auto& h : find(ioc, w, "feature flag rollout").hits) CHECK_FALSE(h.path.ends_with("flags.md"));

    // A walk of a sub-path never removes the rest.
    const auto sub = index_all(ioc, w, {(root / "known").string()});
    CHECK(sub.removed == 0);
    auto page = test::run_on(ioc, w->enumerate("", 1000));
    REQUIRE(page);
    CHECK(page->documents.size() == 22);
}

TEST_CASE("a walk that cannot read a directory fails the run and removes nothing", "[knowledge][store]") {
    test::temp_dir t;
    asio::io_context ioc;
    std::string deep = "docs";
    for (int i = 0; i < 12; ++i) deep += fmt::format("/d{}", i);
    t.write("docs/top.md", "# Top\n\nThe ledger keeps the quarterly totals.\n");
    t.write(deep + "/deep.md", "# Deep\n\nThe marmalade rota lives here.\n");
    const auto root = (t.path / "docs").string();
    auto w = writer(ioc, t);
    index_options reconcile;
    reconcile.reconcile = true;
    CHECK(index_all(ioc, w, {root}, reconcile).added == 2);

    {
        // Room for the descriptors open now and three more: the walk's directory handles run
        // out a few levels down (EMFILE), the way an unreadable directory stops it.
        std::size_t open_now = 0;
        for ([[maybe_unused]] const auto& fd : std::filesystem::directory_iterator("/proc/self/fd")) ++open_now;
        rlimit saved{};
        REQUIRE(::getrlimit(RLIMIT_NOFILE, &saved) == 0);
        rlimit tight = saved;
        tight.rlim_cur = open_now + 3;
        REQUIRE(::setrlimit(RLIMIT_NOFILE, &tight) == 0);
        auto cut = test::run_on(ioc, w->index({root}, reconcile));
        ::setrlimit(RLIMIT_NOFILE, &saved);
        REQUIRE_FALSE(cut.has_value());
        CHECK_THAT(cut.error().message, Catch::Matchers::Contains("walking knowledge path") &&
                                            Catch::Matchers::Contains("Too many open files"));
    }

    // Nothing was reconciled away: the deep document is still found, and a whole walk
    // finds both unchanged.
    auto hit = find(ioc, w, "marmalade");
    REQUIRE(hit.hits.size() == 1);
    CHECK(hit.hits[0].path.ends_with("deep.md"));
    const auto whole = index_all(ioc, w, {root}, reconcile);
    CHECK(whole.skipped == 2);
    CHECK(whole.removed == 0);
}

TEST_CASE("one writer at a time, the lock goes with the store", "[knowledge][store]") {
    test::temp_dir t;
    asio::io_context ioc;
    auto first = writer(ioc, t);
    auto second = store::open_writer(ioc.get_executor(), lexical_options(t));
    REQUIRE_FALSE(second);
    CHECK(second.error().code == errc::locked);
    CHECK(second.error().message == "another knowledge index is already running");
    first.reset();
    CHECK(store::open_writer(ioc.get_executor(), lexical_options(t)));
}

TEST_CASE("bad inputs: missing path, binary, non-UTF-8, unreadable and oversized files", "[knowledge][store]") {
    test::temp_dir t;
    asio::io_context ioc;
    auto w = writer(ioc, t);

    auto missing = test::run_on(ioc, w->index({(t.path / "nope").string()}, {}));
    REQUIRE_FALSE(missing);
    CHECK(missing.error().code == errc::bad_input);
    CHECK(missing.error().message.find("nope\" does not exist") != std::string::npos);

    t.write("docs/good.md", "# Good\n\nplain words here\n");
    t.write("docs/binary.md", std::string("# Bin\n\0\x01\x02", 9));
    t.write("docs/latin1.txt", "caf\xe9 au lait\n");
    t.write("docs/big.md", std::string(max_index_file_bytes + 1, 'a'));
    t.write("docs/ignored.pdf", "not indexed by extension");
    t.write("docs/.hidden/secret.md", "# Secret\n");
    const auto locked = t.write("docs/locked.md", "# Locked\n\nunreadable\n");
    REQUIRE(::chmod(locked.c_str(), 0) == 0);
    const bool root_user = ::geteuid() == 0;

    std::vector<std::string> notes;
    index_options o;
    o.progress = [&](const std::string& n) { notes.push_back(n); };
    auto stats = test::run_on(ioc, w->index({(t.path / "docs").string()}, o));
    REQUIRE(stats);
    CHECK(stats->added == (root_user ? 2 : 1));
    std::string all;
    for (const auto& n : notes) all += n + "\n";
    INFO(all);
    CHECK(all.find("skipping binary file") != std::string::npos);
    CHECK(all.find("skipping non-UTF-8 file") != std::string::npos);
    CHECK(all.find("skipping oversized file") != std::string::npos);
    if (!root_user) CHECK(all.find("skipping unreadable file") != std::string::npos);
    CHECK(all.find("secret") == std::string::npos);
    ::chmod(locked.c_str(), 0600);
}

TEST_CASE("a store without an index reports not built, and an empty one index_empty", "[knowledge][store]") {
    test::temp_dir t;
    asio::io_context ioc;
    auto r = reader(ioc, t);
    CHECK_FALSE(r->built());
    CHECK(find(ioc, r, "anything").status == search_status::index_not_built);
    CHECK(test::run_on(ioc, r->tier_line()).value() == "tier: lexical (FTS5) - no embeddings configured");
    const auto doctor = test::run_on(ioc, r->doctor({(t.path / "missing").string()}));
    REQUIRE(doctor);
    CHECK(doctor->checks[0].name == "Store present");
    CHECK_FALSE(doctor->checks[0].ok);
    CHECK_FALSE(doctor->has_fatal());

    {
        auto w = writer(ioc, t);
        t.write("empty/blank.md", "\n\n");
        index_all(ioc, w, {(t.path / "empty").string()});
    }
    auto r2 = reader(ioc, t);
    CHECK(r2->built());
    CHECK(find(ioc, r2, "anything").status == search_status::index_empty);
    const auto doctor2 = test::run_on(ioc, r2->doctor({}));
    REQUIRE(doctor2);
    for (const auto& c : doctor2->checks) {
        INFO(c.name << ": " << c.detail);
        CHECK(c.ok);
    }
}
