#include <fiskai/gocompat/utf8.hpp>

#include <catch2/catch.hpp>

#include <string>

using namespace fiskai::gocompat;

// Expected values: utf8.DecodeRuneInString, utf8.ValidString, strings.TrimSpace.
TEST_CASE("gocompat: decode_rune as utf8.DecodeRuneInString", "[gocompat][utf8]") {
    auto d = decode_rune("a");
    CHECK((d.rune == U'a' && d.size == 1 && d.valid));
    d = decode_rune("\u00e9");
    CHECK((d.rune == U'\u00e9' && d.size == 2 && d.valid));
    d = decode_rune("\u4e16");
    CHECK((d.rune == U'\u4e16' && d.size == 3 && d.valid));
    d = decode_rune("\U0001F600");
    CHECK((d.rune == U'\U0001F600' && d.size == 4 && d.valid));
    d = decode_rune("x\u00e9", 1);
    CHECK((d.rune == U'\u00e9' && d.size == 2));
    for (const std::string bad : {"\x80", "\xc0\x80", "\xc1\xbf", "\xe0\x80\x80", "\xed\xa0\x80", "\xf0\x80\x80\x80",
                                  "\xf4\x90\x80\x80", "\xf5\x80\x80\x80", "\xff", "\xc3", "\xe4\xb8"}) {
        INFO(bad);
        d = decode_rune(bad);
        CHECK((d.rune == rune_error && d.size == 1 && !d.valid));
    }
    d = decode_rune("", 0);
    CHECK((d.rune == rune_error && d.size == 0 && !d.valid));
}

TEST_CASE("gocompat: validity and repair, one U+FFFD per bad byte", "[gocompat][utf8]") {
    CHECK(is_valid_utf8(""));
    CHECK(is_valid_utf8("caf\u00e9 \U0001F600"));
    CHECK_FALSE(is_valid_utf8("a\xff"));
    CHECK_FALSE(is_valid_utf8("\xed\xa0\x80"));
    CHECK(to_valid_utf8("ok") == "ok");
    CHECK(to_valid_utf8("a\xff"
                        "b") ==
          "a\ufffd"
          "b");
    CHECK(to_valid_utf8("\xc0\xaf") == "\ufffd\ufffd");
    CHECK(to_valid_utf8("\xe4\xb8") == "\ufffd\ufffd");
    std::string out;
    append_utf8(out, U'\U0010FFFF');
    CHECK(out == "\U0010FFFF");
}

TEST_CASE("gocompat: trim_space as strings.TrimSpace", "[gocompat][utf8]") {
    CHECK(trim_space(" \t\n x y \r\v\f") == "x y");
    CHECK(trim_space("\u00a0\u3000x\u2028\u0085") == "x");
    CHECK(trim_space("\u200bx") == "\u200bx");  // zero-width space is not white space
    CHECK(trim_space("\xff ") == "\xff");
    CHECK(trim_space("   ").empty());
}

// Expected values: unicode.IsSpace.
TEST_CASE("gocompat: is_space as unicode.IsSpace", "[gocompat][utf8]") {
    for (const char32_t r : {U'\t', U'\n', U'\v', U'\f', U'\r', U' ', U'\u0085', U'\u00a0', U'\u1680', U'\u2000',
                             U'\u2005', U'\u200a', U'\u2028', U'\u2029', U'\u202f', U'\u205f', U'\u3000'}) {
        INFO(static_cast<unsigned>(r));
        CHECK(is_space(r));
    }
    // Zero-width space and BOM are not White_Space; controls other than \t..\r and NEL are not either.
    for (const char32_t r : {U'a', U'\0', U'\x1f', U'\x7f', U'\u200b', U'\ufeff', U'\u1fff', U'\u200c', U'\u2060',
                             U'\u3001', rune_error}) {
        INFO(static_cast<unsigned>(r));
        CHECK_FALSE(is_space(r));
    }
}

TEST_CASE("gocompat: utf8_prefix cuts at most the bound and never inside a character", "[gocompat][utf8]") {
    using fiskai::gocompat::utf8_prefix;
    CHECK(utf8_prefix("abc", 10) == "abc");
    CHECK(utf8_prefix("abc", 3) == "abc");
    CHECK(utf8_prefix("abc", 2) == "ab");
    CHECK(utf8_prefix("abc", 0).empty());
    // é is two bytes, → three: a cut inside either backs off to its start.
    CHECK(utf8_prefix("a\xc3\xa9", 2) == "a");
    CHECK(utf8_prefix("a\xc3\xa9", 3) == "a\xc3\xa9");
    CHECK(utf8_prefix("\xe2\x86\x92x", 1).empty());
    CHECK(utf8_prefix("\xe2\x86\x92x", 2).empty());
    CHECK(utf8_prefix("\xe2\x86\x92x", 3) == "\xe2\x86\x92");
}
