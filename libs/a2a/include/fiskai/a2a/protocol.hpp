#pragma once
// The fixed facts of fisk-ai's agent-to-agent protocol, version 1: protocol ids, the
// size cap, the schema base URL and the name patterns. Everything here is wire-visible
// and shared with the Go original.

#include <array>
#include <cstddef>
#include <string_view>

namespace fiskai::a2a {

namespace protocols {

// The namespace an agent card advertises in `protocols`.
inline constexpr std::string_view v1 = "io.choria.fisk-ai.v1";

// The two live request-reply exchanges.
inline constexpr std::string_view discovery_request = "io.choria.fisk-ai.v1.discovery.request";
inline constexpr std::string_view discovery_reply = "io.choria.fisk-ai.v1.discovery.reply";
inline constexpr std::string_view tool_request = "io.choria.fisk-ai.v1.tool.request";
inline constexpr std::string_view tool_reply = "io.choria.fisk-ai.v1.tool.reply";

// The task flow: defined, schema'd and carried by the codec, not yet by a transport.
inline constexpr std::string_view task_request = "io.choria.fisk-ai.v1.request";
inline constexpr std::string_view task_event = "io.choria.fisk-ai.v1.event";
inline constexpr std::string_view task_result = "io.choria.fisk-ai.v1.result";
inline constexpr std::string_view task_error = "io.choria.fisk-ai.v1.error";
inline constexpr std::string_view task_cancel = "io.choria.fisk-ai.v1.cancel";
inline constexpr std::string_view task_ack = "io.choria.fisk-ai.v1.ack";
// The task flow's questions to the caller's human, the answers, and liveness.
inline constexpr std::string_view task_question = "io.choria.fisk-ai.v1.question";
inline constexpr std::string_view task_answer = "io.choria.fisk-ai.v1.answer";
inline constexpr std::string_view task_keepalive = "io.choria.fisk-ai.v1.keepalive";

// Every protocol id, in the order of the `message` variant.
inline constexpr std::array<std::string_view, 13> all = {
    discovery_request, discovery_reply, tool_request, tool_reply,    task_request, task_event,     task_result,
    task_error,        task_cancel,     task_ack,     task_question, task_answer,  task_keepalive,
};

}  // namespace protocols

// A body of exactly this many bytes is accepted; one more is refused, before any parse.
inline constexpr std::size_t max_message_size = 768 * 1024;

// Schema `$id`s are this base, a slash and the file name (`tool.request.json`).
inline constexpr std::string_view schema_base_url = "https://choria.io/schemas/io.choria.fisk-ai.v1";

// Identities (and served tool names) are single NATS subject tokens: letters, digits,
// `_` and `-`. The schemas bound an identity to 128 characters and a request id (which
// forms part of subjects too) to 64.
inline constexpr std::size_t max_identity_length = 128;
inline constexpr std::size_t max_request_id_length = 64;

// `^[a-zA-Z0-9_-]{1,max}$`, full match (a trailing newline does not match).
[[nodiscard]] bool is_valid_identity(std::string_view name) noexcept;
[[nodiscard]] bool is_valid_request_id(std::string_view id) noexcept;

// Whether `id` names one of the ten messages above.
[[nodiscard]] bool is_known_protocol(std::string_view id) noexcept;

}  // namespace fiskai::a2a
