// Key rules, write validation, capacity and the value format (agent-llm-state.md §6, 60-62).
#include <fiskai/memory/store.hpp>

#include <catch2/catch.hpp>

#include <string>
#include <vector>

namespace mem = fiskai::memory;

TEST_CASE("memory keys: charset, empty, slash, spaces, dots and length", "[memory][keys]") {
    for (const char* ok : {"build", "build.notes", "a=b", "x_y-z", "A9", "a.b.c"})
        CHECK(mem::validate_key(ok).has_value());
    CHECK(mem::validate_key(std::string(200, 'k')).has_value());
    const std::vector<std::pair<std::string, std::string>> bad{
        {"", "memory key must not be empty"},
        {std::string(201, 'k'), "memory key is too long: at most 200 characters"},
        {"a/b",
         R"(memory key "a/b" is invalid: use only letters, digits and '.', '_', '=' or '-' (no slashes or spaces))"},
        {"a b",
         R"(memory key "a b" is invalid: use only letters, digits and '.', '_', '=' or '-' (no slashes or spaces))"},
        {"caf\xc3\xa9",
         R"(memory key "café" is invalid: use only letters, digits and '.', '_', '=' or '-' (no slashes or spaces))"},
        {".hidden", R"(memory key ".hidden" is invalid: it must not start or end with '.')"},
        {"trailing.", R"(memory key "trailing." is invalid: it must not start or end with '.')"},
        {"a..b", R"(memory key "a..b" is invalid: it must not contain '..')"},
    };
    for (const auto& [key, message] : bad) {
        INFO(key);
        auto r = mem::validate_key(key);
        REQUIRE(!r.has_value());
        CHECK(r.error().code == mem::errc::invalid_key);
        CHECK(r.error().message == message);
    }
}

TEST_CASE("memory writes: description to one line, empty refused, size limit, key first, capacity", "[memory][write]") {
    CHECK(mem::validate_write("k", "  line one\n\tline\x01two  \x7f end ", "").value() == "line one line two end");
    CHECK(mem::validate_write("k",
                              "a\xe2\x80\x83"
                              "b",
                              "")
              .value() == "a b");  // U+2003 is a space to Go
    const auto long_desc = mem::validate_write("k", std::string(600, 'd'), "").value();
    CHECK(long_desc.size() == 500);
    auto empty = mem::validate_write("k", " \n\t ", "c");
    REQUIRE(!empty);
    CHECK(empty.error().message == "a memory description must not be empty");
    auto big = mem::validate_write("k", "d", std::string(65537, 'c'));
    REQUIRE(!big);
    CHECK(big.error().message == "memory content is too large: 65537 bytes, limit is 65536");
    CHECK(mem::validate_write("k", "d", std::string(65536, 'c')).has_value());
    // The key is checked before anything else.
    CHECK(mem::validate_write("a/b", "", std::string(70000, 'c')).error().code == mem::errc::invalid_key);
    CHECK(mem::check_capacity(1023).has_value());
    auto full = mem::check_capacity(1024);
    REQUIRE(!full);
    CHECK(full.error().code == mem::errc::full);
    CHECK(full.error().message ==
          "memory is full: 1024 entries, limit is 1024; delete an entry before creating another");
}

TEST_CASE("frontmatter round trips", "[memory][frontmatter]") {
    SECTION("simple") {
        const auto v = mem::serialize("how the build works", "run make\n");
        CHECK(v == "---\ndescription: how the build works\n---\n\nrun make\n");
        CHECK(mem::parse(v) == mem::entry{"how the build works", "run make\n"});
    }
    SECTION("a body with --- lines survives") {
        const std::string body = "intro\n---\nmore\n---\n";
        CHECK(mem::parse(mem::serialize("d", body)) == mem::entry{"d", body});
    }
    SECTION("YAML-significant descriptions are quoted and read back") {
        for (std::string d : {"key: value", "- dash", "#hash", "yes", "123", "1e3", "\"quoted\"", "it's", "a #b", "[x]",
                              "tab\tinside", "caf\xc3\xa9 \xe2\x80\x94 ok", "null", "~", "ends:"}) {
            INFO(d);
            const auto v = mem::serialize(d, "body");
            CHECK(mem::parse(v) == mem::entry{d, "body"});
        }
        CHECK(mem::serialize("key: value", "") == "---\ndescription: \"key: value\"\n---\n\n");
    }
    SECTION("empty content") {
        CHECK(mem::parse(mem::serialize("d", "")) == mem::entry{"d", ""});
        CHECK(mem::parse("---\ndescription: d\n---") == mem::entry{"d", ""});
    }
    SECTION("headerless, unterminated or unparsable headers read as body") {
        CHECK(mem::parse("just text") == mem::entry{"", "just text"});
        CHECK(mem::parse("---\ndescription: d\nno end") == mem::entry{"", "---\ndescription: d\nno end"});
        CHECK(mem::parse("---\ndescription: [unclosed\n---\nbody") ==
              mem::entry{"", "---\ndescription: [unclosed\n---\nbody"});
        CHECK(mem::parse("---\n- a list\n---\nbody") == mem::entry{"", "---\n- a list\n---\nbody"});
        // One leading newline of the body is stripped, not more.
        CHECK(mem::parse("---\ndescription: d\n---\n\n\nbody") == mem::entry{"d", "\nbody"});
    }
}
