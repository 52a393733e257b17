#pragma once
// The OpenAI chat-completions wire format (llama.cpp server, vLLM, Ollama's /v1), free of
// I/O: a neutral request to the request body, a response body to the neutral response.

#include "fiskai/llm/types.hpp"

#include <boost/system/result.hpp>

#include <cstdint>
#include <string>
#include <string_view>

namespace fiskai::llm::openai {

// Explicit, else 8192 (thinking does not apply here).
[[nodiscard]] std::int64_t output_cap(const request& req);

// `{"model","messages","tools"?,"max_tokens","stream":false}`.
[[nodiscard]] std::string encode_request(const request& req);

// stop→end_turn, length→max_tokens, tool_calls/function_call→tool_use,
// content_filter→refusal, anything else verbatim.
[[nodiscard]] std::string map_finish_reason(std::string_view finish_reason);

// The response body decoded; the error is the whole failure text (`openai: ...`).
[[nodiscard]] boost::system::result<response, std::string> decode_response(std::string_view body);

// `openai: HTTP <status>: <error.message>`.
[[nodiscard]] std::string status_error_text(int status, std::string_view body);

}  // namespace fiskai::llm::openai
