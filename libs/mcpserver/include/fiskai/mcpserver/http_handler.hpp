#pragma once
// Mount the MCP endpoint in your own Beast server: read a request on your connection,
// and when its target is your MCP path, hand it here. The handler writes the response
// (JSON, 202, an error, or a server-sent event stream that stays open while the call
// runs) on your stream and tells you whether the connection may be reused.

#include <fiskai/mcpserver/server.hpp>

#include <boost/asio/awaitable.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>

namespace fiskai::mcpserver {

using http_request = boost::beast::http::request<boost::beast::http::string_body>;

// Returns true when the connection can carry another request (keep-alive), false when
// it must be closed. Never throws for anything a client sends.
//
// Generic over the stream; the library is built for boost::beast::tcp_stream (declared
// here) and boost::beast::test::stream (declared in test_stream.hpp, for tests and
// fuzzing). Another stream type links only if you instantiate it yourself.
template <typename Stream>
boost::asio::awaitable<bool> handle_http(server& srv, http_request request, Stream& stream);

extern template boost::asio::awaitable<bool> handle_http<boost::beast::tcp_stream>(server&, http_request,
                                                                                   boost::beast::tcp_stream&);

}  // namespace fiskai::mcpserver
