#pragma once
// The first steps of the arrival pipeline, shared by decode() and the validator: the size
// cap, the JSON parse into a tree, the protocol lookup and the typed decode of the tree.
// Internal to the library.

#include <fiskai/a2a/error.hpp>
#include <fiskai/a2a/messages.hpp>
#include <fiskai/a2a/types.hpp>

#include <boost/json/monotonic_resource.hpp>
#include <boost/json/value.hpp>

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace fiskai::a2a::detail {

// Builds a raw_json from text already known to be compact, valid JSON.
struct raw_json_access {
    static raw_json make(std::string compact_text) { return raw_json(std::move(compact_text)); }
};

// A body parsed into a tree. The tree's memory lives in `storage` and is released at
// once, without walking the tree, so no nesting depth reaches the destructor's stack.
// `doc` is bound to `storage` from the start: assigning the parsed tree to a value on
// another storage would copy it, node by node, onto the heap.
struct parsed_body {
    std::string_view text;  // the bytes as received: raw values are cut from here
    std::optional<std::string> repaired;
    boost::json::monotonic_resource storage;
    boost::json::value doc = boost::json::value(boost::json::storage_ptr(&storage));
};

// The size cap (nothing is read before it), then the JSON parse.
[[nodiscard]] result<void> parse_body(std::string_view body, parsed_body& out);

// The index in protocols::all of the body's `protocol`; unknown_protocol otherwise.
[[nodiscard]] result<std::size_t> protocol_index(const boost::json::value& doc);

// The typed decode of an object whose protocol is protocols::all[index].
[[nodiscard]] result<message> decode_document(const boost::json::object& doc, std::string_view text, std::size_t index);

// The typed decode of one block (`text` is the block's own JSON text).
[[nodiscard]] result<block> decode_block_document(const boost::json::object& doc, std::string_view text);

}  // namespace fiskai::a2a::detail
