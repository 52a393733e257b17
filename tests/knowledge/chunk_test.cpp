// Chunking, titles and query quoting: pure functions, no I/O.
#include <fiskai/knowledge/chunk.hpp>

#include <fiskai/gocompat/utf8.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <string>

using namespace fiskai::knowledge;

TEST_CASE("headings build breadcrumbs and start new chunks", "[knowledge][chunk]") {
    const auto chunks = chunk_document("intro text\n\n# A\n\nalpha\n\n## B\n\nbeta\n\n# C\n\ngamma\n");
    REQUIRE(chunks.size() == 4);
    CHECK(chunks[0] == chunk{"", "intro text"});
    CHECK(chunks[1] == chunk{"A", "A\n\nalpha"});
    CHECK(chunks[2] == chunk{"A > B", "A > B\n\nbeta"});
    CHECK(chunks[3] == chunk{"C", "C\n\ngamma"});
}

TEST_CASE("a fenced block stays whole even past the size limit, a long paragraph is split", "[knowledge][chunk]") {
    std::string code = "```\n";
    for (int i = 0; i < 200; ++i) code += "line of code number " + std::to_string(i) + "\n";
    code += "```\n";
    const auto fenced = chunk_document("# Code\n\n" + code);
    REQUIRE(fenced.size() == 1);
    CHECK(fenced[0].content.size() > max_chunk_bytes);
    CHECK(fenced[0].content.find("line of code number 199") != std::string::npos);

    const std::string para(4000, 'x');
    const auto split = chunk_document(para);
    REQUIRE(split.size() == 4);
    CHECK(split[0].content.size() == target_chunk_bytes);
    CHECK(split[3].content.size() == 4000 - 3 * target_chunk_bytes);

    // A split never cuts a character: each piece stays valid UTF-8 and nothing is lost.
    std::string accented = "a";
    for (int i = 0; i < 800; ++i) accented += "\xc3\xa9";  // é
    const auto runes = chunk_document(accented);
    REQUIRE(runes.size() == 2);
    CHECK(runes[0].content.size() == target_chunk_bytes - 1);
    CHECK(runes[0].content + runes[1].content == accented);
    for (const auto& c : runes) CHECK(fiskai::gocompat::is_valid_utf8(c.content));

    const auto rn = chunk_document("# T\r\n\r\nbody\r\n");
    REQUIRE(rn.size() == 1);
    CHECK(rn[0].content == "T\n\nbody");
    CHECK(chunk_document("").empty());
    CHECK(chunk_document("\n\n  \n").empty());
}

TEST_CASE("a heading inside a fence is code, not a section", "[knowledge][chunk]") {
    const auto chunks = chunk_document("# Real\n\n```sh\n# not a heading\n```\n");
    REQUIRE(chunks.size() == 1);
    CHECK(chunks[0].heading_path == "Real");
    CHECK(document_title("```\n# fake\n```\n# Real title\n") == "Real title");
    CHECK(document_title("no heading here") == "");
    CHECK(document_title("####### seven is not a heading\n## two") == "two");
}

TEST_CASE("front matter gives the title and is not indexed", "[knowledge][chunk]") {
    const auto split = split_front_matter("---\ntitle: Stream basics\ntags: [a]\n---\n# Heading\n\nbody\n");
    CHECK(split.title == "Stream basics");
    CHECK(split.body == "# Heading\n\nbody\n");
    CHECK(title_of("---\ntitle: From front matter\n---\n# Heading\n") == "From front matter");
    CHECK(title_of("---\nauthor: x\n---\n# Heading\n") == "Heading");
    // Not YAML, or never closed: the whole text is the body.
    CHECK(split_front_matter("---\n: : [\n---\nbody").body == "---\n: : [\n---\nbody");
    CHECK(split_front_matter("---\ntitle: x\nbody").title.empty());
}

TEST_CASE("user text is quoted so FTS syntax characters are never syntax", "[knowledge][fts]") {
    CHECK(fts_query("stream-info") == R"("stream" OR "info")");
    CHECK(fts_query("ack OR") == R"("ack" OR "OR")");
    CHECK(fts_query("c++").empty());  // one-rune terms are dropped: nothing searchable is left
    CHECK(fts_query("\"").empty());
    CHECK(fts_query("").empty());
    CHECK(fts_query("NEAR(a b) AND \"x* ^col:y") == R"("NEAR" OR "AND" OR "col")");
    CHECK(fts_query("Größe straße 東京") == R"("Größe" OR "straße" OR "東京")");
    CHECK(fts_query("bad \xff\xfe bytes") == R"("bad" OR "bytes")");
    // An encoded surrogate is not a rune: it separates terms, whatever the locale says.
    CHECK(fts_query("ab\xed\xa0\x80"
                    "cd") == R"("ab" OR "cd")");

    std::string big;
    for (int i = 0; i < 2000; ++i) big += "word" + std::to_string(i) + " ";
    REQUIRE(big.size() > 10 * 1024);
    const auto q = fts_query(big);
    CHECK(std::count(q.begin(), q.end(), '"') == 80);  // clamped to 40 terms
}
