#pragma once
// Codes for the failures of fiskai::conns, so a caller can tell them apart without reading
// the text: a context that is missing or malformed, a server that refused or did not
// answer, a broker that would not start. Every exception the library throws carries one
// (code()); the message stays the full text to show. The category is a Boost.System one,
// so a code converts to std::error_code as well.

#include <boost/system/error_code.hpp>

#include <stdexcept>
#include <string>
#include <type_traits>

namespace fiskai::conns {

enum class errc {
    // Finding and reading a context.
    invalid_context_name = 1,  // empty, or with `..`, `/` or `\`
    context_not_found,         // no file for the named context
    no_context_directory,      // neither XDG_CONFIG_HOME nor a home directory is known
    unreadable_file,           // a context, credentials or nkey file that cannot be read
    malformed_context,         // not a JSON object, a field of the wrong type, a bad nkey seed
    unsupported_setting,       // tls_first, socks_proxy, nsc or op:// credentials
    // Dialling.
    connection_refused,  // no server at any of the context's URLs accepted a connection
    timed_out,           // a server accepted but the handshake did not finish in time
    not_authorized,      // the server refused the credentials
    tls_failed,          // the TLS handshake or the certificates failed
    invalid_setting,     // nats.c refused a setting (a credentials file it cannot load...)
    connect_failed,      // any other dial failure
    // The embedded broker.
    broker_not_installed,  // the nats-server executable is missing or not executable
    broker_failed,         // it could not be started, or did not accept connections in time
};

[[nodiscard]] const boost::system::error_category& conns_category() noexcept;
[[nodiscard]] boost::system::error_code make_error_code(errc e) noexcept;

// The base of the library's exceptions: what() is the message to show, code() the errc.
class error : public std::runtime_error {
public:
    error(errc code, const std::string& message) : std::runtime_error(message), code_(make_error_code(code)) {}
    [[nodiscard]] boost::system::error_code code() const noexcept { return code_; }

private:
    boost::system::error_code code_;
};

}  // namespace fiskai::conns

template <>
struct boost::system::is_error_code_enum<fiskai::conns::errc> : std::true_type {};
template <>
struct std::is_error_code_enum<fiskai::conns::errc> : std::true_type {};
