#pragma once
// Helpers shared by the runstate sources.

#include <fiskai/runstate/error.hpp>
#include <fiskai/runstate/store.hpp>

#include <boost/json/fwd.hpp>

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

namespace fiskai::runstate::detail {

// A backing-store failure whose whole text is `message` (`writing record: No space left
// on device`), as Go's wrapped OS errors read.
[[nodiscard]] error storage_error(std::string message);

// `<what>: <strerror(err)>`.
[[nodiscard]] error system_error(std::string_view what, int err);

// Go's json.Compact with HTML escaping, as json.Marshal writes a json.RawMessage: the
// text without insignificant whitespace, `<`, `>`, `&`, U+2028 and U+2029 escaped, the
// rest verbatim. Returns false (out untouched past its size) when `raw` is not JSON.
bool append_compact_raw(std::string& out, std::string_view raw);

// Checks a parsed record document against the schema its protocol selects; the index of
// the protocol (0 meta .. 4 terminal) or errc::corrupt naming the failure.
[[nodiscard]] result<std::size_t> validate_record(const boost::json::value& doc);

// Standard base64 with padding (Go's []byte JSON form).
[[nodiscard]] std::string base64_encode(std::string_view bytes);
[[nodiscard]] bool base64_decode(std::string_view text, std::string& out);

// The registry's factory for the file backend: options {directory}.
[[nodiscard]] std::shared_ptr<store> file_store_factory(std::string_view options_json, const context& ctx);

}  // namespace fiskai::runstate::detail
