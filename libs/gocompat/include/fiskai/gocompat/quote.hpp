#pragma once
// Go's strconv.Quote, the `%q` verb: how Go error texts quote names and values.

#include <cstddef>
#include <string>
#include <string_view>

namespace fiskai::gocompat {

// Printable runes verbatim (non-ASCII included), `\"` and `\\`, the short escapes
// \a \b \f \n \r \t \v, \xNN for invalid bytes and other ASCII controls, \uNNNN or
// \UNNNNNNNN for other non-printable runes.
[[nodiscard]] std::string quote(std::string_view s);

// quote() of at most `limit` bytes of `s` (cut on a rune boundary), with `...` after the
// closing quote when cut: for echoing a peer's string without echoing a megabyte.
[[nodiscard]] std::string quote_bounded(std::string_view s, std::size_t limit = 128);

}  // namespace fiskai::gocompat
