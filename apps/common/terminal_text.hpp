#pragma once
// Text from peers (a worker's events and answers, a model's words, an agent card, a
// journal) on the operator's terminal: control characters are shown, never obeyed, so a
// peer cannot clear the screen, retitle the window, or hide a line behind a carriage return.

#include <cstddef>
#include <string>
#include <string_view>

namespace fiskai::app {

// `text` with line feeds and tabs kept, a carriage return before a line feed dropped, and
// every other control character shown in caret notation (ESC as `^[`, BEL as `^G`, DEL as
// `^?`); C1 controls (U+0080-U+009F) become U+FFFD.
[[nodiscard]] std::string terminal_safe(std::string_view text);

// `text` as one line of at most `max_runes` characters: every run of white space (line
// feeds and tabs included) becomes one space, leading and trailing space is dropped, other
// controls are shown as terminal_safe shows them, and a longer text is cut to end in `...`
// (counted in the bound). For summaries and table cells; a whole answer keeps its lines.
[[nodiscard]] std::string one_line(std::string_view text, std::size_t max_runes);

// `word` as one word for a POSIX shell, for commands printed to be pasted back (the continue
// hints): as is when it holds only characters no shell treats specially, else in single
// quotes (a quote inside as '\''). An empty word is ''.
[[nodiscard]] std::string shell_word(std::string_view word);

}  // namespace fiskai::app
