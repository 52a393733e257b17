// knowledge_search and knowledge_enumerate as tools: Go's contract for search (schema,
// result shape, top_k, the injected-token cap, the soft states), paging and cursors for
// enumerate, and the call trace.
#include "knowledge_support.hpp"

#include <fiskai/gocompat/json.hpp>
#include <fiskai/knowledge/builtins.hpp>

#include <boost/json.hpp>

#include <catch2/catch.hpp>

using namespace fiskai;
using namespace fiskai::knowledge;
namespace asio = boost::asio;
namespace json = boost::json;

namespace {

struct fixture {
    test::temp_dir t;
    asio::io_context ioc;
    std::shared_ptr<store> reader;
    toolkit::tool_list tools;

    explicit fixture(int distractors = 20, int max_tokens = default_max_injected_tokens, bool build = true) {
        store_options o;
        o.directory = (t.path / "index").string();
        o.max_injected_tokens = max_tokens;
        if (build) {
            const auto root = test::make_corpus(t, distractors);
            auto w = store::open_writer(ioc.get_executor(), o);
            REQUIRE(w);
            REQUIRE(test::run_on(ioc, (*w)->index({root.string()}, {})));
        }
        auto r = store::open(ioc.get_executor(), o);
        REQUIRE(r);
        reader = *r;
        for (auto& spec : knowledge_tool_specs(reader)) tools.push_back(toolkit::make_function_tool(std::move(spec)));
    }

    toolkit::outcome call(std::size_t which, const std::string& args) {
        return test::run_on(ioc, tools.at(which)->call(json::parse(args), toolkit::call_options{}));
    }
    json::object call_json(std::size_t which, const std::string& args) {
        auto o = call(which, args);
        if (o.is_error()) FAIL(o.error_message());
        REQUIRE(o.json() != nullptr);
        return o.json()->as_object();
    }
};

}  // namespace

TEST_CASE("knowledge_search: Go's name, schema and exposure", "[knowledge][builtins]") {
    const auto specs = knowledge_tool_specs(nullptr);
    REQUIRE(specs.size() == 2);
    CHECK(specs[0].name == "knowledge_search");
    CHECK(
        gocompat::to_json(specs[0].input_schema) ==
        R"({"type":"object","properties":{"query":{"type":"string","description":"The natural-language search query describing what you are looking for."},"top_k":{"type":"integer","description":"Optional maximum number of sections to return; defaults to the configured value and is capped at 20."}},"required":["query"]})");
    CHECK(specs[0].description.starts_with("Search the operator's local knowledge base"));
    CHECK(specs[1].name == "knowledge_enumerate");
    for (const auto& s : specs) {
        CHECK(s.exposed->on(toolkit::surface::mcp));
        CHECK(s.exposed->on(toolkit::surface::agent));
        CHECK_FALSE(s.exposed->on(toolkit::surface::a2a));
        CHECK(*s.confirm == toolkit::confirm_posture::not_required);
    }
    CHECK(knowledge_system_note().starts_with("You have a searchable knowledge base"));
}

TEST_CASE("knowledge_search without a store fails in band", "[knowledge][builtins]") {
    asio::io_context ioc;
    auto tool = toolkit::make_function_tool(std::move(knowledge_tool_specs(nullptr)[0]));
    auto out = test::run_on(ioc, tool->call(json::parse(R"({"query":"x"})"), {}));
    CHECK(out.is_error());
    CHECK(out.error_message() == "knowledge store is not configured");
}

TEST_CASE("knowledge_search returns Go's result shape", "[knowledge][builtins]") {
    fixture f;
    const auto out = f.call(0, R"({"query":"certificate renewal"})");
    REQUIRE_FALSE(out.is_error());
    const auto text = gocompat::to_json(*out.json());
    CHECK(text.starts_with(
        R"({"tier":"tier: lexical (FTS5) - no embeddings configured","status":"ok","results":[{"citation":")"));
    const auto& results = out.json()->as_object().at("results").as_array();
    REQUIRE(results.size() == 2);  // both sections that mention either word
    CHECK(std::string(results[0].at("citation").as_string()).ends_with("known/tls.md#0"));
    CHECK(results[0].at("section").as_string() == "TLS certificates > Renewal");

    CHECK(f.call_json(0, R"({"query":"stream service message"})").at("results").as_array().size() == 5);
    CHECK(f.call_json(0, R"({"query":"stream","top_k":2})").at("results").as_array().size() == 2);
    CHECK(f.call_json(0, R"({"query":"stream service message","top_k":99})").at("results").as_array().size() == 20);

    const auto empty = f.call_json(0, R"({"query":""})");
    CHECK(empty.at("status") == "index_empty");
    CHECK(empty.at("note") == "the knowledge index is empty or the query had no searchable terms");
    CHECK(empty.at("results").as_array().empty());

    const auto bad = f.call(0, R"({"top_k":3})");
    CHECK(bad.is_error());
    const auto wrong_type = f.call(0, R"({"query":"x","top_k":"many"})");
    CHECK(wrong_type.is_error());
}

TEST_CASE("knowledge_search keeps hits within the injected-token budget, the first always", "[knowledge][builtins]") {
    fixture f(20, 1);  // 4 characters of budget
    const auto out = f.call_json(0, R"({"query":"stream service message","top_k":10})");
    CHECK(out.at("results").as_array().size() == 1);
    fixture g(20, 300);  // 1200 characters
    const auto some = g.call_json(0, R"({"query":"stream service message","top_k":20})");
    std::size_t total = 0;
    for (const auto& r : some.at("results").as_array()) total += r.at("content").as_string().size();
    CHECK(some.at("results").as_array().size() < 20);
    CHECK((total <= 1200 || some.at("results").as_array().size() == 1));
}

TEST_CASE("knowledge_search before the index is built", "[knowledge][builtins]") {
    fixture f(0, default_max_injected_tokens, false);
    const auto out = f.call(0, R"({"query":"anything"})");
    REQUIRE_FALSE(out.is_error());
    CHECK(
        gocompat::to_json(*out.json()) ==
        R"({"tier":"tier: lexical (FTS5) - no embeddings configured","status":"index_not_built","note":"the knowledge index has not been built yet; run: fisk-ai knowledge index","results":[]})");
    const auto listing = f.call_json(1, "{}");
    CHECK(listing.at("status") == "index_not_built");
}

TEST_CASE("knowledge_enumerate pages through every document once", "[knowledge][builtins]") {
    fixture f(30);
    std::vector<std::string> seen;
    std::string cursor;
    int pages = 0;
    for (;;) {
        json::object args{{"limit", 7}};
        if (!cursor.empty()) args["cursor"] = cursor;
        const auto page = f.call_json(1, json::serialize(args));
        ++pages;
        CHECK(page.at("status") == "ok");
        for (const auto& d : page.at("documents").as_array()) {
            seen.emplace_back(d.at("path").as_string());
            CHECK(d.at("chunks").as_int64() >= 1);
        }
        if (!page.contains("next_cursor")) break;
        cursor = std::string(page.at("next_cursor").as_string());
        REQUIRE(pages < 20);
    }
    CHECK(pages == 7);  // 43 documents, 7 a page
    CHECK(seen.size() == 43);
    CHECK(std::is_sorted(seen.begin(), seen.end()));
    CHECK(std::adjacent_find(seen.begin(), seen.end()) == seen.end());

    const auto first = f.call_json(1, "{}");
    const auto& docs = first.at("documents").as_array();
    CHECK(docs.size() == 43);
    bool titled = false;
    for (const auto& d : docs) {
        if (std::string(d.at("path").as_string()).ends_with("known/streams.md")) {
            CHECK(d.at("title") == "JetStream stream basics");
            titled = true;
        }
    }
    CHECK(titled);
    CHECK_FALSE(first.contains("next_cursor"));
}

TEST_CASE("knowledge_enumerate refuses a cursor it never issued", "[knowledge][builtins]") {
    fixture f(0);
    for (const std::string& forged :
         std::vector<std::string>{"abc", "6b6e6f776e2f612e6d64.0000000000000000000000000000000", "zz.zz", ".",
                                  issue_cursor("docs/known/a.md") + "0"}) {
        INFO(forged);
        json::object args{{"cursor", forged}};
        const auto out = f.call(1, json::serialize(args));
        REQUIRE(out.is_error());
        CHECK(out.error_message().starts_with("invalid knowledge_enumerate input: cursor \""));
        CHECK(out.error_message().ends_with("omit cursor to start from the first page"));
    }
    const auto real = issue_cursor("docs/known/a.md");
    CHECK(redeem_cursor(real) == std::optional<std::string>("docs/known/a.md"));
}

TEST_CASE("the call trace names the query and top_k", "[knowledge][builtins]") {
    fixture f(0, default_max_injected_tokens, false);
    CHECK(f.tools[0]->describe_call(json::parse(R"({"query":"stream info"})")) == R"(knowledge_search("stream info"))");
    CHECK(f.tools[0]->describe_call(json::parse(R"({"query":"a\u001b[31mb\nc","top_k":3})")) ==
          R"(knowledge_search("ab c", top_k=3))");
    const std::string long_query(300, 'q');
    const auto trace = f.tools[0]->describe_call(json::value(json::object{{"query", long_query}}));
    CHECK(trace == "knowledge_search(\"" + std::string(200, 'q') + "…\")");
    CHECK(f.tools[1]->describe_call(json::object{}) == "knowledge_enumerate");
}
