#pragma once
// Text from peers (a worker's events and answers, a model's words, an agent card, a
// journal) on the operator's terminal: control characters are shown, never obeyed, so a
// peer cannot clear the screen, retitle the window, or hide a line behind a carriage return.

#include <string>
#include <string_view>

namespace fiskai::app {

// `text` with line feeds and tabs kept, a carriage return before a line feed dropped, and
// every other control character shown in caret notation (ESC as `^[`, BEL as `^G`, DEL as
// `^?`); C1 controls (U+0080-U+009F) become U+FFFD.
[[nodiscard]] std::string terminal_safe(std::string_view text);

}  // namespace fiskai::app
