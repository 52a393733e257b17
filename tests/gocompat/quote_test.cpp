#include <fiskai/gocompat/quote.hpp>

#include <catch2/catch.hpp>

#include <string>

using fiskai::gocompat::quote;
using fiskai::gocompat::quote_bounded;

// Expected bytes: what fmt.Sprintf("%q", s) writes.
TEST_CASE("gocompat: quote is strconv.Quote", "[gocompat][quote]") {
    CHECK(quote("plain") == R"("plain")");
    CHECK(quote("") == R"("")");
    CHECK(quote("<a>&b") == R"("<a>&b")");  // no HTML escaping, unlike encoding/json
    CHECK(quote("a\"b\\c") == R"("a\"b\\c")");
    CHECK(quote("\a\b\f\n\r\t\v") == R"("\a\b\f\n\r\t\v")");
    CHECK(quote(std::string("\x00\x1b", 2)) == R"("\x00\x1b")");
    CHECK(quote("\x7f") == R"("\x7f")");
    CHECK(quote("caf\u00e9 \U0001F600 \u4e16") == "\"caf\u00e9 \U0001F600 \u4e16\"");
}

TEST_CASE("gocompat: quote escapes non-printable runes and invalid bytes", "[gocompat][quote]") {
    CHECK(quote("a\xff"
                "b") == R"("a\xffb")");
    CHECK(quote("\xc3") == R"("\xc3")");
    CHECK(quote("\xed\xa0\x80") == R"("\xed\xa0\x80")");
    CHECK(quote("\u0085") == R"("\u0085")");  // C1 control
    CHECK(quote("\u00a0") == R"("\u00a0")");  // no-break space
    CHECK(quote("\u00ad") == R"("\u00ad")");  // soft hyphen
    CHECK(quote("\u200b") == R"("\u200b")");  // zero-width space
    CHECK(quote("\u2028") == R"("\u2028")");
    CHECK(quote("\u202e") == R"("\u202e")");  // right-to-left override
    CHECK(quote("\u3000") == R"("\u3000")");
    CHECK(quote("\ufeff") == R"("\ufeff")");
    CHECK(quote("\ue000") == R"("\ue000")");  // private use
    CHECK(quote("\U000F0000") == R"("\U000f0000")");
    CHECK(quote("\U000E0041") == R"("\U000e0041")");  // tag
    CHECK(quote("\ufffd") == "\"\ufffd\"");           // the replacement character prints
}

TEST_CASE("gocompat: quote_bounded cuts on a rune boundary", "[gocompat][quote]") {
    CHECK(quote_bounded("abc", 3) == R"("abc")");
    CHECK(quote_bounded("abcdef", 3) == R"("abc"...)");
    CHECK(quote_bounded("a\u00e9", 2) == R"("a"...)");
    CHECK(quote_bounded(std::string(1000, 'x')).size() == 128 + 2 + 3);
}
