#pragma once
// URLs the HTTP and WebSocket clients dial, and the policy on which of them a
// configuration may name. Both are free of I/O.

#include <boost/system/result.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace fiskai::net {

// An absolute http, https, ws or wss URL split into what a connection needs.
struct parsed_url {
    std::string scheme;      // lower case: http, https, ws or wss
    std::string host;        // a name, or an IP address without the IPv6 brackets
    std::uint16_t port = 0;  // the explicit port, else the scheme's default
    std::string target;      // path and query as sent in the request line; "/" when empty
    bool tls = false;        // https or wss
    bool host_is_ip = false;
    bool has_userinfo = false;

    // host:port as messages name it ([::1]:443 for IPv6).
    [[nodiscard]] std::string authority() const;
    // scheme://host:port: one keep-alive pool per origin.
    [[nodiscard]] std::string origin() const;
};

// Parses an absolute URL whose scheme is one of `schemes` (e.g. {"http", "https"}).
// The error is a sentence naming the bad part, without the URL itself.
[[nodiscard]] boost::system::result<parsed_url, std::string> parse_url(std::string_view url,
                                                                       std::string_view schemes = "http https");

// True for localhost, 127.0.0.0/8 and ::1: hosts whose traffic never leaves the machine.
[[nodiscard]] bool is_loopback_host(std::string_view host);

// The URL policy of every configured endpoint: https, or http only to a loopback host
// unless `insecure_http`; never user information. Returns the refusal text naming `key`
// (e.g. `llm.base_url`), or nothing when the URL is acceptable. A password in the URL is
// shown as `xxxxx` so the text can be logged.
[[nodiscard]] std::optional<std::string> check_url(std::string_view url, std::string_view key, bool insecure_http);

}  // namespace fiskai::net
