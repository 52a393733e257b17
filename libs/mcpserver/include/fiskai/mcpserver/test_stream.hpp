#pragma once
// handle_http over Beast's in-memory test stream, so the whole HTTP path (sessions, event
// streams, resumption, cancellation) can be driven without sockets, in tests and fuzzers.

#include <fiskai/mcpserver/http_handler.hpp>

#include <boost/beast/_experimental/test/stream.hpp>

namespace fiskai::mcpserver {

extern template boost::asio::awaitable<bool> handle_http<boost::beast::test::stream>(server&, http_request,
                                                                                     boost::beast::test::stream&);

}  // namespace fiskai::mcpserver
