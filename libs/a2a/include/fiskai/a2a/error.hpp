#pragma once
// How the a2a library reports expected, input-driven failures: a code to branch on and
// the full text to show, worded like the Go original's wrapped errors.

#include <boost/system/error_code.hpp>
#include <boost/system/result.hpp>

#include <string>
#include <string_view>
#include <type_traits>

namespace fiskai::a2a {

enum class errc {
    // The body is over max_message_size. Checked before anything is parsed.
    too_large = 1,
    // The body is not JSON (or is nested deeper than the decoder allows).
    invalid_json,
    // `protocol` is missing or names no message this version knows.
    unknown_protocol,
    // The body does not validate against the schema its protocol id selects.
    schema_violation,
    // A field's value cannot be carried by its type: a time that is not RFC 3339, a
    // sequence that is not an integer literal, an integer out of range.
    invalid_field,
    // A valid message of another type than the path carries.
    protocol_mismatch,
    // A block with no `type`, or a known `type` whose content does not decode.
    unknown_block_type,
    // A message that cannot be encoded (an event with no block) or raw JSON that is not JSON.
    invalid_message,
    // Nobody answered: no responder for the agent, or the deadline passed.
    agent_unavailable,
    // The peer answered with a service error (a 400 or 500 with no message) instead of a reply.
    error_reply,
    // The transport could not carry the request for another reason (closed, cancelled).
    transport_failure,
};

[[nodiscard]] const boost::system::error_category& a2a_category() noexcept;
[[nodiscard]] boost::system::error_code make_error_code(errc e) noexcept;

// A failure: `code` to branch on, `message` to show. `message` starts with the code's
// own text (`unknown protocol: "nope"`), and callers that add context prefix it
// (`invalid outgoing request: ...`), as Go's error wrapping does.
struct error {
    boost::system::error_code code;
    std::string message;
    // The transport's finer code, when it has one (for NATS, a2a_nats::errc: no_responders
    // or timed_out under agent_unavailable); empty otherwise. Not part of the message.
    boost::system::error_code cause;

    friend bool operator==(const error&, const error&) = default;
};

// `<code text>: <detail>`, or the code text alone when detail is empty.
[[nodiscard]] error make_error(errc e, std::string_view detail = {});

// The same error with `context: ` in front of its message; the code is kept.
[[nodiscard]] error wrap(error e, std::string_view context);

// result<T>::value() on an error throws boost::system::system_error(code, message).
[[noreturn]] void throw_exception_from_error(const error& e, const boost::source_location& loc);

template <class T>
using result = boost::system::result<T, error>;

}  // namespace fiskai::a2a

template <>
struct boost::system::is_error_code_enum<fiskai::a2a::errc> : std::true_type {};
