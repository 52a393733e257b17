#pragma once
// An a2a client over NATS that owns everything under it: the connection (dialled from a
// NATS context), the transport and the client. What an agent needs to call its peers,
// without an application layer: remote tools hold it and the connection closes when the
// last of them goes.

#include <fiskai/a2a/client.hpp>
#include <fiskai/conns/connection.hpp>

#include <boost/asio/any_io_executor.hpp>

#include <chrono>
#include <memory>
#include <string>

namespace fiskai::a2a_nats {

struct peer_client_options {
    // NATS context to dial; empty: the NATS CLI's selected context, else the default URL.
    std::string context;
    // This agent's identity: the sender of every request and the connection's name.
    std::string identity;
    // How long a call waits for its reply unless it says otherwise.
    std::chrono::steady_clock::duration timeout = std::chrono::seconds(30);
    // Connection events (lost, restored) are logged here, on the executor.
    gocompat::logger log;
};

// Dials and builds the client. The returned pointer owns the connection and transport
// too. Throws conns::context_error or conns::connect_error naming the context.
[[nodiscard]] std::shared_ptr<a2a::client> connect_peer_client(boost::asio::any_io_executor executor,
                                                               peer_client_options options);

}  // namespace fiskai::a2a_nats
