// Peer text on the operator's terminal: control characters shown, never obeyed, and the
// one-line form the summaries and tables use.

#include "terminal_text.hpp"

#include <catch2/catch.hpp>

#include <string>

using fiskai::app::one_line;
using fiskai::app::shell_word;
using fiskai::app::terminal_safe;

TEST_CASE("terminal_safe shows controls in caret notation and keeps lines", "[terminal_text]") {
    CHECK(terminal_safe("plain text") == "plain text");
    CHECK(terminal_safe("a\nb\tc") == "a\nb\tc");
    CHECK(terminal_safe("line\r\nnext") == "line\nnext");
    CHECK(terminal_safe("hide\rover") == "hide^Mover");
    CHECK(terminal_safe("\x1b]0;title\x07") == "^[]0;title^G");
    CHECK(terminal_safe(std::string("nul\0here", 8)) == "nul^@here");
    CHECK(terminal_safe("del\x7f") == "del^?");
    // C1 controls (CSI as U+009B) become the replacement character; other text is kept.
    CHECK(terminal_safe("a\xc2\x9b"
                        "31mb") ==
          "a\xef\xbf\xbd"
          "31mb");
    CHECK(terminal_safe("caf\xc3\xa9 \xe2\x86\x92") == "caf\xc3\xa9 \xe2\x86\x92");
}

TEST_CASE("one_line folds white space and bounds the text, ellipsis included", "[terminal_text]") {
    CHECK(one_line("  several\n\n words\tand  spaces  ", 80) == "several words and spaces");
    CHECK(one_line("", 10).empty());
    CHECK(one_line(" \n\t ", 10).empty());
    CHECK(one_line("exactly10!", 10) == "exactly10!");
    CHECK(one_line("eleven runes", 10) == "eleven ...");
    CHECK(one_line("abcdef", 3) == "...");
    CHECK(one_line("abcdef", 2) == "..");
    CHECK(one_line("abcdef", 0).empty());
    // Runes, not bytes: each é is two bytes and counts once.
    CHECK(one_line("\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9", 5) == "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9");
    CHECK(one_line("\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9", 5) == "\xc3\xa9\xc3\xa9...");
    // Unicode spaces fold too (NBSP, the line separator).
    CHECK(one_line("a\xc2\xa0\xe2\x80\xa8"
                   "b",
                   10) == "a b");
    // A carriage return is white space here, so it cannot hide the start of the line.
    CHECK(one_line("hidden\rshown", 20) == "hidden shown");
    CHECK(one_line("\x1b[2Jcleared", 20) == "^[[2Jcleared");
}

TEST_CASE("one_line reads only what it can show of a very long text", "[terminal_text]") {
    const std::string huge(8 * 1024 * 1024, 'x');
    const auto shown = one_line(huge, 48);
    CHECK(shown.size() == 48);
    CHECK(shown.substr(45) == "...");
}

TEST_CASE("shell_word keeps plain words and single-quotes the rest, so a printed command pastes back",
          "[terminal_text]") {
    CHECK(shell_word("local") == "local");
    CHECK(shell_word("/etc/fisk-ai/serve.yaml") == "/etc/fisk-ai/serve.yaml");
    CHECK(shell_word("my config.yaml") == "'my config.yaml'");
    CHECK(shell_word("it's") == "'it'\\''s'");
    CHECK(shell_word("$(rm -rf ~)") == "'$(rm -rf ~)'");
    CHECK(shell_word("") == "''");
}
