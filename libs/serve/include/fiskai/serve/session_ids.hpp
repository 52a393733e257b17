#pragma once
// Session ids are derived, never taken from a caller (serve.md §5.6): a session id is
// logged and returned to callers, so knowing one must not let anybody choose the bytes the
// store sees. Each channel hashes its own inputs behind its own prefix so no two channels
// can collide: `<tag>-` + the first 40 hex digits of sha256(prefix 0x00 part1 0x00 part2 …).

#include <initializer_list>
#include <string>
#include <string_view>

namespace fiskai::serve {

[[nodiscard]] std::string derive_session_id(std::string_view tag, std::string_view prefix,
                                            std::initializer_list<std::string_view> parts);

// `a2a-…` from the worker's identity, the sender's name and the task id.
[[nodiscard]] std::string a2a_session_id(std::string_view identity, std::string_view sender, std::string_view task);
// `q-…` from the worker's identity and the task id.
[[nodiscard]] std::string queue_session_id(std::string_view identity, std::string_view task);
// `slack-…` from the identity, team, channel and thread ts.
[[nodiscard]] std::string slack_session_id(std::string_view identity, std::string_view team, std::string_view channel,
                                           std::string_view thread_ts);

}  // namespace fiskai::serve
