#include "nats_commands.hpp"

#include "app_support.hpp"

namespace fiskai::a2a::app {

gocompat::logger stderr_logger() { return fiskai::app::process_logger(); }

conns::connect_options connection_options(std::string_view identity, boost::asio::any_io_executor executor) {
    conns::connect_options o;
    o.name = conns::connection_name(identity);
    o.executor = std::move(executor);
    o.log = stderr_logger();
    o.shared_delivery = true;  // every callback of the libraries it runs copies and posts
    return o;
}

}  // namespace fiskai::a2a::app
