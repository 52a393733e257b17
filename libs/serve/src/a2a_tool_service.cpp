#include <fiskai/a2a_nats/micro.hpp>
#include <fiskai/a2a_nats/transport.hpp>
#include <fiskai/serve/a2a_tool_service.hpp>
#include <fiskai/serve/banner.hpp>

#include <stdexcept>
#include <utility>

namespace fiskai::serve {

namespace asio = boost::asio;

struct a2a_tool_service::impl {
    std::string identity;
    // The transport first: the server's intakes and the micro service borrow it.
    a2a_nats::nats_transport transport;
    std::shared_ptr<a2a_nats::micro::service> micro;
    a2a::server server;

    impl(conns::connection& nats, asio::any_io_executor ex, toolkit::tool_list tools, a2a::server_options o)
        : identity(o.identity),
          transport(nats, ex, {.log = o.log}),
          micro(transport.open_service(o.identity)),
          server(ex, std::move(tools), std::move(o)) {}
};

a2a_tool_service::a2a_tool_service(conns::connection& nats, asio::any_io_executor executor, toolkit::tool_list tools,
                                   a2a::server_options options)
    : impl_(std::make_unique<impl>(nats, std::move(executor), std::move(tools), std::move(options))) {
    if (impl_->server.exposed().empty()) {
        throw std::runtime_error("no tools available to serve over a2a; all were filtered or confirmation-gated");
    }
}

a2a_tool_service::~a2a_tool_service() = default;

asio::awaitable<void> a2a_tool_service::run() { co_await impl_->server.serve(impl_->transport); }

void a2a_tool_service::stop() { impl_->server.stop(); }

void a2a_tool_service::cancel() { impl_->server.cancel(); }

std::shared_ptr<a2a_nats::micro::service> a2a_tool_service::micro_service() const { return impl_->micro; }

std::size_t a2a_tool_service::tools() const noexcept { return impl_->server.exposed().size(); }

std::string a2a_tool_service::description() const { return a2a_tools_service_line(impl_->identity, tools()); }

}  // namespace fiskai::serve
