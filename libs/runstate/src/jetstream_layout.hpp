#pragma once
// Private to the runstate JetStream backend and its tests, free of I/O: the subject
// layout, the prefix rule and the stream checks, with Go's texts.

#include <fiskai/jetstream/context.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace fiskai::runstate::js_layout {

inline constexpr std::string_view meta_token = "_meta";
// Below this a stream cannot hold even a small record (Go's recordFloorBytes).
inline constexpr std::int64_t record_floor_bytes = 4096;

struct prefix_error {
    std::string text;  // follows `stream "<s>" `
};

// The run prefix from the stream's subjects: exactly one wildcard subject, a clean
// `<prefix>.>`; literal subjects are ignored.
[[nodiscard]] std::variant<std::string, prefix_error> derive_prefix(const std::vector<std::string>& subjects);

// The first setting that would lose, expire or mutate a record, as Go's full text.
[[nodiscard]] std::optional<std::string> check_stream_config(const jetstream::stream_config& config,
                                                             std::string_view stream);

// `jetstream session: stream "<s>" does not exist; create it first, e.g. ...`
[[nodiscard]] std::string missing_stream_text(std::string_view stream);

[[nodiscard]] std::string meta_subject(std::string_view prefix, std::string_view id);
[[nodiscard]] std::string run_wildcard(std::string_view prefix, std::string_view id);
[[nodiscard]] std::string subject_for_seq(std::string_view prefix, std::string_view id, std::uint64_t seq);
[[nodiscard]] std::string list_filter(std::string_view prefix);
// The record seq a subject's last token names (`_meta` is 1); none when it is neither.
[[nodiscard]] std::optional<std::uint64_t> parse_seq_token(std::string_view subject);
// The run id of `<prefix>.<id>._meta`; none for another subject or an invalid id.
[[nodiscard]] std::optional<std::string> run_id_from_meta_subject(std::string_view prefix, std::string_view subject);

}  // namespace fiskai::runstate::js_layout
