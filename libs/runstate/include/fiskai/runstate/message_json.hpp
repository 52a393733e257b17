#pragma once
// The neutral message JSON as the Go original stores it in the journal: each content
// block an object with exactly one key (`text`, `thinking`, `tool_use`, `tool_result`,
// `provider`), Go's encoding/json bytes (raw `input`/`raw` compacted with HTML escaping,
// the thinking signature as standard base64).

#include <fiskai/llm/types.hpp>
#include <fiskai/runstate/error.hpp>

#include <boost/json/fwd.hpp>

#include <string>

namespace fiskai::runstate {

void append_message_json(std::string& out, const llm::message& m);
void append_tool_result_json(std::string& out, const llm::tool_result_block& r);

// errc::corrupt naming the bad field on anything that is not a stored neutral message.
[[nodiscard]] result<llm::message> message_from_json(const boost::json::value& v);
[[nodiscard]] result<llm::tool_result_block> tool_result_from_json(const boost::json::value& v);

}  // namespace fiskai::runstate
