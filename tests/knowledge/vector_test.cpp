// The vector tier against a fake OpenAI-compatible embeddings server: a real Beast
// listener on loopback whose vectors are a deterministic bag of hashed words. Hybrid
// ranking, the tier lines, dimension drift, the endpoint down and answering garbage.
#include "knowledge_support.hpp"

#include <fiskai/config/config.hpp>
#include <fiskai/knowledge/builtins.hpp>
#include <fiskai/knowledge/embedder.hpp>

#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/json.hpp>

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <atomic>
#include <cctype>
#include <thread>

using namespace fiskai;
using namespace fiskai::knowledge;
namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace json = boost::json;

namespace {

enum class mode { ok, garbage, error_in_body, status_500 };

// One connection at a time, `Connection: close` on every answer so no client pools it.
class fake_embeddings {
public:
    fake_embeddings() : acceptor_(ioc_, {asio::ip::make_address("127.0.0.1"), 0}) {
        thread_ = std::thread([this] { serve(); });
    }
    ~fake_embeddings() { stop(); }

    void stop() {
        if (stopped_.exchange(true)) return;
        // Wake the blocking accept with a connection of our own.
        asio::io_context wake;
        asio::ip::tcp::socket s(wake);
        boost::system::error_code ec;
        s.connect(acceptor_.local_endpoint(), ec);
        thread_.join();
        acceptor_.close(ec);
    }

    [[nodiscard]] std::string url() const {
        return fmt::format("http://127.0.0.1:{}/v1", acceptor_.local_endpoint().port());
    }

    std::atomic<int> dim{16};
    std::atomic<mode> answer{mode::ok};
    std::atomic<int> requests{0};

    static std::vector<float> embed(std::string_view text, int dim) {
        std::vector<float> v(static_cast<std::size_t>(dim), 0.0f);
        std::string word;
        auto flush = [&] {
            if (word.size() >= 3) v[std::hash<std::string>{}(word) % v.size()] += 1.0f;
            word.clear();
        };
        for (const char c : text) {
            if (std::isalnum(static_cast<unsigned char>(c)) != 0) {
                word += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
            } else {
                flush();
            }
        }
        flush();
        v[0] += 0.01f;  // never the zero vector
        return v;
    }

private:
    void serve() {
        while (!stopped_) {
            asio::ip::tcp::socket sock(ioc_);
            boost::system::error_code ec;
            acceptor_.accept(sock, ec);
            if (ec || stopped_) return;
            beast::flat_buffer buf;
            http::request<http::string_body> req;
            http::read(sock, buf, req, ec);
            if (ec) continue;
            ++requests;
            http::response<http::string_body> res{http::status::ok, 11};
            res.set(http::field::content_type, "application/json");
            res.keep_alive(false);
            switch (answer.load()) {
                case mode::garbage: res.body() = "<html>not json"; break;
                case mode::error_in_body: res.body() = R"({"error":{"message":"model not loaded"}})"; break;
                case mode::status_500:
                    res.result(http::status::internal_server_error);
                    res.body() = "boom";
                    break;
                case mode::ok: {
                    const auto body = json::parse(req.body()).as_object();
                    json::array data;
                    const auto& inputs = body.at("input").as_array();
                    // Out of order on purpose: placement is by index.
                    for (std::size_t i = inputs.size(); i-- > 0;) {
                        json::array vec;
                        for (const float f : embed(inputs[i].as_string(), dim.load())) vec.push_back(f);
                        data.push_back(json::object{{"index", i}, {"embedding", std::move(vec)}});
                    }
                    res.body() = json::serialize(json::object{{"data", std::move(data)}});
                    break;
                }
            }
            res.prepare_payload();
            http::write(sock, res, ec);
            sock.shutdown(asio::ip::tcp::socket::shutdown_both, ec);
        }
    }

    asio::io_context ioc_;
    asio::ip::tcp::acceptor acceptor_;
    std::atomic<bool> stopped_{false};
    std::thread thread_;
};

config::embeddings_settings settings_for(const std::string& url) {
    config::embeddings_settings s;
    s.base_url = url;
    s.model = "fake-embed";
    s.timeout = std::chrono::seconds(5);
    return s;
}

store_options hybrid_options(asio::io_context& ioc, const test::temp_dir& t, const std::string& url) {
    store_options o;
    o.directory = (t.path / "index").string();
    o.embeddings = make_openai_embedder(ioc.get_executor(), settings_for(url), "");
    return o;
}

std::shared_ptr<store> build(asio::io_context& ioc, const test::temp_dir& t, const std::string& url, int distractors) {
    const auto root = test::make_corpus(t, distractors);
    auto w = store::open_writer(ioc.get_executor(), hybrid_options(ioc, t, url));
    REQUIRE(w);
    auto stats = test::run_on(ioc, (*w)->index({root.string()}, {}));
    if (!stats) FAIL(stats.error().message);
    CHECK(stats->embeddings == stats->chunks);
    return *w;
}

}  // namespace

TEST_CASE("hybrid tier: vectors fused with BM25, Go's tier line", "[knowledge][vector]") {
    fake_embeddings fake;
    test::temp_dir t;
    asio::io_context ioc;
    build(ioc, t, fake.url(), 40).reset();

    auto r = store::open(ioc.get_executor(), hybrid_options(ioc, t, fake.url()));
    REQUIRE(r);
    CHECK(test::run_on(ioc, (*r)->tier_line()).value() ==
          "tier: hybrid (FTS5 + vectors, RRF) - model=fake-embed dim=16");
    const auto res = test::run_on(ioc, (*r)->search("canary rollback error budget", 3));
    REQUIRE(res);
    CHECK_FALSE(res->degraded);
    REQUIRE_FALSE(res->hits.empty());
    CHECK(res->hits[0].path.ends_with("known/deploy.md"));

    const auto stats = test::run_on(ioc, (*r)->stats());
    REQUIRE(stats);
    CHECK(stats->vectors == stats->chunks);
    CHECK(stats->meta.model == "fake-embed");
    CHECK(stats->meta.dimension == 16);
    CHECK(stats->meta.normalized);
}

TEST_CASE("the endpoint down: lexical fallback with the degraded tier line", "[knowledge][vector]") {
    fake_embeddings fake;
    test::temp_dir t;
    asio::io_context ioc;
    const auto url = fake.url();
    build(ioc, t, url, 10).reset();
    fake.stop();

    auto r = store::open(ioc.get_executor(), hybrid_options(ioc, t, url));
    REQUIRE(r);
    std::vector<toolkit::tool_ptr> tools;
    for (auto& s : knowledge_tool_specs(*r)) tools.push_back(toolkit::make_function_tool(std::move(s)));
    const auto out = test::run_on(ioc, tools[0]->call(json::parse(R"({"query":"certificate renewal"})"), {}));
    REQUIRE_FALSE(out.is_error());
    const auto& o = out.json()->as_object();
    const std::string tier(o.at("tier").as_string());
    INFO(tier);
    CHECK(tier.starts_with(
        "tier: hybrid -> DEGRADED to lexical (embeddings unreachable: contacting embeddings server at " + url + ": "));
    CHECK(o.at("status") == "ok");
    CHECK(o.at("note") == "the embeddings server was unreachable, so this query used the lexical tier only");
    REQUIRE_FALSE(o.at("results").as_array().empty());
    CHECK(std::string(o.at("results").as_array()[0].at("citation").as_string()).ends_with("known/tls.md#0"));
}

TEST_CASE("garbage from the endpoint degrades a search and fails an index clearly", "[knowledge][vector]") {
    fake_embeddings fake;
    test::temp_dir t;
    asio::io_context ioc;
    build(ioc, t, fake.url(), 0).reset();

    for (const auto& [m, expected] : {std::pair{mode::garbage, "decoding embeddings response: "},
                                      std::pair{mode::error_in_body, "reported: model not loaded"},
                                      std::pair{mode::status_500, "returned 500: boom"}}) {
        fake.answer = m;
        auto r = store::open(ioc.get_executor(), hybrid_options(ioc, t, fake.url()));
        REQUIRE(r);
        const auto res = test::run_on(ioc, (*r)->search("stream retention", 3));
        REQUIRE(res);
        INFO(res->degrade_reason);
        CHECK(res->degraded);
        CHECK(res->degrade_reason.find(expected) != std::string::npos);
        CHECK_FALSE(res->hits.empty());
    }

    fake.answer = mode::garbage;
    test::temp_dir t2;
    const auto root = test::make_corpus(t2, 0);
    auto w = store::open_writer(ioc.get_executor(), hybrid_options(ioc, t2, fake.url()));
    REQUIRE(w);
    const auto failed = test::run_on(ioc, (*w)->index({root.string()}, {}));
    REQUIRE_FALSE(failed);
    CHECK(failed.error().message.starts_with("probing embedding dimension: decoding embeddings response: "));
}

TEST_CASE("dimension drift is refused with Go's text, a reindex takes the new dimension", "[knowledge][vector]") {
    fake_embeddings fake;
    test::temp_dir t;
    asio::io_context ioc;
    build(ioc, t, fake.url(), 0).reset();
    fake.dim = 24;

    auto r = store::open(ioc.get_executor(), hybrid_options(ioc, t, fake.url()));
    REQUIRE(r);
    const auto res = test::run_on(ioc, (*r)->search("stream retention", 3));
    REQUIRE_FALSE(res);
    CHECK(res.error().code == errc::dimension_mismatch);
    CHECK(res.error().message ==
          "embedding dimension does not match the index: model \"fake-embed\" now emits dimension 24 but the index "
          "was built at 16; run 'fisk-ai knowledge index --reindex'");
    r->reset();

    auto w = store::open_writer(ioc.get_executor(), hybrid_options(ioc, t, fake.url()));
    REQUIRE(w);
    const auto refused = test::run_on(ioc, (*w)->index({(t.path / "docs").string()}, {}));
    REQUIRE_FALSE(refused);
    CHECK(refused.error().message ==
          "knowledge index was built with a different embedding configuration: manifest built with model=fake-embed "
          "dim=16; config requests model=fake-embed dim=24 - run 'fisk-ai knowledge index --reindex'");
    index_options again;
    again.reindex = true;
    REQUIRE(test::run_on(ioc, (*w)->index({(t.path / "docs").string()}, again)));
    w->reset();
    auto r2 = store::open(ioc.get_executor(), hybrid_options(ioc, t, fake.url()));
    REQUIRE(r2);
    CHECK(test::run_on(ioc, (*r2)->tier_line()).value() ==
          "tier: hybrid (FTS5 + vectors, RRF) - model=fake-embed dim=24");
    CHECK(test::run_on(ioc, (*r2)->search("stream retention", 3)));
}

TEST_CASE("a model swapped behind a running process is refused, not searched or stored in silence",
          "[knowledge][vector]") {
    fake_embeddings fake;
    test::temp_dir t;
    asio::io_context ioc;
    // One writer for the whole test, as a served agent keeps its store: the dimension it
    // probed once is cached, so only the vectors themselves can show the swap.
    auto w = build(ioc, t, fake.url(), 0);
    REQUIRE(test::run_on(ioc, w->search("stream retention", 3)));
    const auto vectors_before = test::run_on(ioc, w->stats()).value().vectors;
    fake.dim = 24;

    const auto res = test::run_on(ioc, w->search("stream retention", 3));
    REQUIRE_FALSE(res);
    CHECK(res.error().code == errc::dimension_mismatch);
    CHECK(res.error().message ==
          "embedding dimension does not match the index: model \"fake-embed\" now emits dimension 24 but the index "
          "was built at 16; run 'fisk-ai knowledge index --reindex'");

    const auto changed = t.path / "docs" / "known" / "changed.md";
    std::ofstream(changed) << "# Changed\n\nA note on stream retention written after the swap.\n";
    const auto refused = test::run_on(ioc, w->index({(t.path / "docs").string()}, {}));
    REQUIRE_FALSE(refused);
    CHECK(refused.error().code == errc::dimension_mismatch);
    CHECK(refused.error().message.starts_with("indexing "));
    CHECK(refused.error().message.ends_with(
        ": embedding dimension does not match the index: model \"fake-embed\" now emits dimension 24 but the index "
        "was built at 16; run 'fisk-ai knowledge index --reindex'"));
    // Nothing of the other length was stored.
    CHECK(test::run_on(ioc, w->stats()).value().vectors == vectors_before);
}

TEST_CASE("a lexical index is refused when the config asks for vectors", "[knowledge][vector]") {
    fake_embeddings fake;
    test::temp_dir t;
    asio::io_context ioc;
    {
        store_options lexical;
        lexical.directory = (t.path / "index").string();
        auto w = store::open_writer(ioc.get_executor(), lexical);
        REQUIRE(w);
        REQUIRE(test::run_on(ioc, (*w)->index({test::make_corpus(t, 0).string()}, {})));
    }
    auto r = store::open(ioc.get_executor(), hybrid_options(ioc, t, fake.url()));
    REQUIRE_FALSE(r);
    CHECK(r.error().code == errc::meta_mismatch);
    CHECK(r.error().message ==
          "knowledge index was built with a different embedding configuration: config requests embeddings "
          "model=\"fake-embed\" but the index was built lexical-only; run 'fisk-ai knowledge index --reindex'");
}

TEST_CASE("the embeddings block is validated without contacting the server", "[knowledge][vector]") {
    asio::io_context ioc;
    auto cfg_with = [](std::string url, std::string model) {
        config::config c;
        c.harness.knowledge.enabled = true;
        c.harness.knowledge.embeddings = config::embeddings_settings{};
        c.harness.knowledge.embeddings->base_url = std::move(url);
        c.harness.knowledge.embeddings->model = std::move(model);
        return c;
    };
    auto message = [&](const config::config& c) {
        try {
            (void)embedder_from_config(ioc.get_executor(), c);
        } catch (const std::exception& e) {
            return std::string(e.what());
        }
        return std::string();
    };
    CHECK(message(cfg_with("", "m")) ==
          "knowledge.embeddings.base_url is required when the embeddings block is present");
    CHECK(message(cfg_with("http://127.0.0.1:1", " ")) ==
          "knowledge.embeddings.model is required when the embeddings block is present");
    CHECK(message(cfg_with("http://example.com/v1", "m")).find("knowledge.embeddings.base_url") != std::string::npos);
    CHECK(message(cfg_with("http://127.0.0.1:1/v1", "m")).empty());
    config::config off;
    CHECK(embedder_from_config(ioc.get_executor(), off) == nullptr);
}
