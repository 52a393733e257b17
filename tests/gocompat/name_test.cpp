#include <fiskai/gocompat/name.hpp>

#include <catch2/catch.hpp>

#include <string>
#include <vector>

using fiskai::gocompat::is_valid_name;

TEST_CASE("gocompat: is_valid_name is ^[a-zA-Z0-9_-]+$", "[gocompat][name]") {
    CHECK(is_valid_name("agent_1-prod"));
    CHECK(is_valid_name("A"));
    CHECK(is_valid_name("-"));
    CHECK(is_valid_name("_"));
    for (const std::string& bad :
         std::vector<std::string>{"", "a.b", "a b", "a/b", "caf\u00e9", "a*", "a>", std::string("a\0b", 3), "a\n"}) {
        INFO(bad);
        CHECK_FALSE(is_valid_name(bad));
    }
}

TEST_CASE("gocompat: is_valid_name bounds the length when asked", "[gocompat][name]") {
    CHECK(is_valid_name(std::string(128, 'a'), 128));
    CHECK_FALSE(is_valid_name(std::string(129, 'a'), 128));
    CHECK(is_valid_name(std::string(100000, 'a')));
}
