#include <fiskai/toolkit/output_capture.hpp>

#include <catch2/catch.hpp>

using namespace fiskai::toolkit;

TEST_CASE("output within the cap is kept verbatim", "[capture]") {
    output_capture c(capture_mode::head_and_tail, 16);
    c.write("0123456789");
    c.write("abcdef");
    CHECK(c.total() == 16);
    CHECK_FALSE(c.exceeded());
    CHECK(c.result() == "0123456789abcdef");
}

TEST_CASE("output over the cap keeps head and tail around the marker", "[capture]") {
    output_capture c(capture_mode::head_and_tail, 16);
    for (char ch = 'a'; ch <= 'z'; ++ch) c.write(std::string(1, ch));
    CHECK(c.exceeded());
    CHECK(c.total() == 26);
    CHECK(c.result() == std::string("abcdefgh") + std::string(truncation_marker) + "stuvwxyz");
}

TEST_CASE("a single write larger than the tail replaces it", "[capture]") {
    output_capture c(capture_mode::head_and_tail, 16);
    c.write("xx");
    c.write(std::string(30, 'm') + "12345678");
    CHECK(c.result() == "xxmmmmmm" + std::string(truncation_marker) + "12345678");
}

TEST_CASE("the real cap gives 65562 bytes when exceeded", "[capture]") {
    output_capture c(capture_mode::head_and_tail, max_tool_output_bytes);
    std::string chunk(1000, 'q');
    for (int i = 0; i < 200; ++i) c.write(chunk);
    CHECK(c.result().size() == 65536 + truncation_marker.size());
    CHECK(c.result().size() == 65562);
}

TEST_CASE("head-only capture counts what it drops", "[capture]") {
    output_capture c(capture_mode::head_only, 4);
    c.write("abcdefgh");
    CHECK(c.exceeded());
    CHECK(c.total() == 8);
    CHECK(c.result() == "abcd");
}
