#include <fiskai/a2a_nats/peer_client.hpp>
#include <fiskai/a2a_nats/transport.hpp>

namespace fiskai::a2a_nats {
namespace {

// Declared in the order they must be built, so they are destroyed client first and
// connection last.
struct peer_link {
    conns::provider nats;
    std::unique_ptr<nats_transport> transport;
    std::unique_ptr<a2a::client> client;
};

}  // namespace

std::shared_ptr<a2a::client> connect_peer_client(boost::asio::any_io_executor executor, peer_client_options options) {
    auto link = std::make_shared<peer_link>();
    conns::connect_options co;
    co.name = conns::connection_name(options.identity);
    co.executor = executor;
    co.log = options.log;
    link->nats = conns::provider::dial(options.context, options.identity, std::move(co));
    link->transport =
        std::make_unique<nats_transport>(link->nats, executor, transport_options{options.timeout, options.log});
    link->client =
        std::make_unique<a2a::client>(*link->transport, a2a::client_options{options.identity, options.timeout});
    // The client's owner is the whole link.
    return std::shared_ptr<a2a::client>(link, link->client.get());
}

}  // namespace fiskai::a2a_nats
