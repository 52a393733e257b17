#pragma once
// The Anthropic Messages wire format, free of I/O: a neutral request to the request body
// (the bytes the Go original's SDK writes: field order, Go string escaping), a response
// body to the neutral response, and an error body to the failure text.

#include "fiskai/llm/types.hpp"

#include <boost/system/result.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace fiskai::llm::anthropic {

// The output cap a request is sent with: explicit, else 16384 with thinking, else 8192.
[[nodiscard]] std::int64_t output_cap(const request& req);

// The request body: `{"max_tokens","messages","model","cache_control"?,"system","thinking"?,"tools"}`.
[[nodiscard]] std::string encode_request(const request& req);

// One tool definition as the API's custom tool (schema rendered: type object, optional
// properties annotated, other keys forwarded).
[[nodiscard]] std::string encode_tool(const tool_def& tool);

// One neutral block in wire form.
[[nodiscard]] std::string encode_block(const content_block& block);

// The response body decoded; the error is the whole failure text (`anthropic: ...`).
[[nodiscard]] boost::system::result<response, std::string> decode_response(std::string_view body);

// One response content block (a JSON object's text) decoded.
[[nodiscard]] boost::system::result<content_block, std::string> decode_block(std::string_view block_json);

// `anthropic: HTTP <status> <error.type>: <error.message> (request <request-id>)`; a body
// that is not the API's error shape is quoted (bounded) instead.
[[nodiscard]] std::string status_error_text(int status, std::string_view body,
                                            std::optional<std::string_view> request_id);

}  // namespace fiskai::llm::anthropic
