#pragma once
// How libs/jetstream reports a failed call: a code to branch on, JetStream's own API error
// code when the server sent one (10071 wrong last sequence, 10059 stream not found...),
// and nats.c's text to show.

#include <boost/system/error_code.hpp>
#include <boost/system/result.hpp>

#include <string>
#include <type_traits>

namespace fiskai::jetstream {

enum class errc {
    not_found = 1,      // no such stream, consumer, bucket, key or message
    api_error,          // the JetStream API refused the request (see error::err_code)
    timed_out,          // no answer within the call's timeout
    no_responders,      // nobody answers the JetStream API (JetStream is not enabled)
    connection_closed,  // the connection is closed
    invalid_argument,   // nats.c refused an argument (an invalid subject, key or bucket name)
    cancelled,          // the subscription or watcher was released
    failed,             // any other failure of nats.c
};

[[nodiscard]] const boost::system::error_category& jetstream_category() noexcept;
[[nodiscard]] boost::system::error_code make_error_code(errc e) noexcept;

// JetStream API error codes the suite branches on.
inline constexpr int api_consumer_not_found = 10014;
inline constexpr int api_no_message_found = 10037;
inline constexpr int api_message_exceeds_maximum = 10054;
inline constexpr int api_stream_not_found = 10059;
inline constexpr int api_wrong_last_sequence = 10071;
inline constexpr int api_max_consumers_on_subject = 10100;

struct error {
    errc code = errc::failed;
    int err_code = 0;     // JetStream API error code, 0 when the server sent none
    std::string message;  // nats.c's text (for an API error, the server's description)

    friend bool operator==(const error&, const error&) = default;
};

// result<T>::value() on an error throws boost::system::system_error(code, message).
[[noreturn]] void throw_exception_from_error(const error& e, const boost::source_location& loc);

template <class T>
using result = boost::system::result<T, error>;

}  // namespace fiskai::jetstream

template <>
struct boost::system::is_error_code_enum<fiskai::jetstream::errc> : std::true_type {};
