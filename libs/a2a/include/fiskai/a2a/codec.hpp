#pragma once
// Encoding and decoding. Encoding writes exactly the bytes the Go original writes:
// struct-order keys (block keys sorted), zero values omitted where Go omits them,
// HTML-safe escapes, U+2028/U+2029 escaped, invalid UTF-8 as \ufffd, raw JSON compacted.
// Decoding accepts any valid JSON (whitespace, key order, escapes); unknown properties
// are discarded. Neither consults a schema: the arrival pipeline that does is in
// validator.hpp.

#include <fiskai/a2a/blocks.hpp>
#include <fiskai/a2a/error.hpp>
#include <fiskai/a2a/messages.hpp>

#include <string>
#include <string_view>

namespace fiskai::a2a {

// Fails only with errc::invalid_message, for an event whose block is empty.
[[nodiscard]] result<std::string> encode(const message& m);

// One block as the event's `block` value: the content fields and `type`, keys sorted.
[[nodiscard]] result<std::string> encode(const block& b);

// Size cap, JSON, `protocol` lookup, typed decode. Unknown properties are discarded; a
// missing field is its zero value. Errors: too_large, invalid_json, unknown_protocol,
// invalid_field (a wrong JSON type, a bad time, an out-of-range integer), and for an event
// unknown_block_type (a block without a string `type`).
[[nodiscard]] result<message> decode(std::string_view body);

// One block. A block whose `type` is not known decodes into unknown_block.
[[nodiscard]] result<block> decode_block(std::string_view json);

// The body's top-level `request` string, read as decode() reads JSON (the size cap, unpaired
// surrogate escapes as U+FFFD) but with no protocol lookup or typed decode: what names the task
// of a body that is not a valid message. Empty when the body is no JSON object, or its
// `request` is absent or not a string.
[[nodiscard]] std::string request_named_by(std::string_view body);

}  // namespace fiskai::a2a
