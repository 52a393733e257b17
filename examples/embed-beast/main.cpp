// Mounting fisk-ai's MCP endpoint inside your own Beast HTTP server.
//
// The server below has its own routes (`/` and `/health`) and hands requests for `/mcp`
// to fiskai::mcpserver::handle_http, which answers them, event streams included, on the
// same connection. The tools are plain C++ functions (fiskai::toolkit::make_function_tool);
// a fisk application's command tools would be served the same way.
//
//   embed-beast [port]        (port 0 or absent: a free port; the URL is printed)

#include <fiskai/mcpserver/http_handler.hpp>
#include <fiskai/mcpserver/server.hpp>
#include <fiskai/toolkit/function_tool.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/write.hpp>
#include <boost/json/parse.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace json = boost::json;
using asio::ip::tcp;
using namespace fiskai;

namespace {

toolkit::tool_list my_tools() {
    auto add = toolkit::make_function_tool({
        .name = "add",
        .description = "Add two integers",
        .tags = {"impact:ro"},
        .input_schema = json::parse(R"({"type":"object","additionalProperties":false,"required":["a","b"],
            "properties":{"a":{"type":"integer"},"b":{"type":"integer"}}})")
                            .as_object(),
        .exposed = toolkit::exposure{toolkit::surface::mcp},
        .confirm = toolkit::confirm_posture::not_required,
        .handler = [](const json::object& args, const toolkit::call_options&) -> asio::awaitable<toolkit::outcome> {
            co_return toolkit::outcome::from_json(
                json::object{{"sum", args.at("a").to_number<std::int64_t>() + args.at("b").to_number<std::int64_t>()}});
        },
    });
    return {add};
}

// Your own request loop: your routes, plus the MCP endpoint at /mcp.
asio::awaitable<void> serve_connection(tcp::socket socket, mcpserver::server& mcp) {
    beast::tcp_stream stream(std::move(socket));
    beast::flat_buffer buffer;
    for (;;) {
        http::request_parser<http::string_body> parser;
        parser.body_limit(1024 * 1024);
        stream.expires_after(std::chrono::minutes(2));
        auto [ec, n] = co_await http::async_read(stream, buffer, parser, asio::as_tuple(asio::use_awaitable));
        if (ec) break;
        stream.expires_never();
        auto req = parser.release();
        const auto target = std::string(req.target());
        if (target == "/mcp" || target.starts_with("/mcp?")) {
            if (!co_await mcpserver::handle_http(mcp, std::move(req), stream)) break;
            continue;
        }
        http::response<http::string_body> res{http::status::ok, req.version()};
        res.keep_alive(req.keep_alive());
        if (target == "/health") {
            res.set(http::field::content_type, "application/json");
            res.body() = fmt::format(R"({{"status":"ok","mcp_sessions":{}}})", mcp.session_count());
        } else if (target == "/") {
            res.set(http::field::content_type, "text/plain");
            res.body() = "hello from my own server; MCP lives at /mcp\n";
        } else {
            res.result(http::status::not_found);
            res.body() = "not found\n";
        }
        res.prepare_payload();
        auto [wec, wn] = co_await http::async_write(stream, res, asio::as_tuple(asio::use_awaitable));
        if (wec || !req.keep_alive()) break;
    }
    beast::error_code ignored;
    stream.socket().shutdown(tcp::socket::shutdown_send, ignored);
}

asio::awaitable<void> accept_loop(tcp::acceptor& acceptor, mcpserver::server& mcp) {
    // A failed accept (out of descriptors, say) leaves the connection queued, so retrying
    // at once would spin a core and giving up would stop the server: back off instead.
    asio::steady_timer backoff(acceptor.get_executor());
    std::chrono::milliseconds delay{5};
    for (;;) {
        auto [ec, socket] = co_await acceptor.async_accept(asio::as_tuple(asio::use_awaitable));
        if (ec == asio::error::operation_aborted || !acceptor.is_open()) co_return;
        if (ec) {
            backoff.expires_after(delay);
            co_await backoff.async_wait(asio::as_tuple(asio::use_awaitable));
            delay = std::min(delay * 2, std::chrono::milliseconds(1000));
            continue;
        }
        delay = std::chrono::milliseconds(5);
        asio::co_spawn(acceptor.get_executor(), serve_connection(std::move(socket), mcp), asio::detached);
    }
}

}  // namespace

int main(int argc, char** argv) {
    const auto port = static_cast<unsigned short>(argc > 1 ? std::atoi(argv[1]) : 0);
    asio::io_context ioc;
    mcpserver::server_options options;
    options.name = "embed-beast";
    options.require_loopback_host = true;             // we bind to loopback below
    options.log = fiskai::gocompat::stream_logger();  // text lines on stderr
    mcpserver::server mcp(ioc.get_executor(), options, my_tools());

    tcp::acceptor acceptor(ioc, {asio::ip::make_address("127.0.0.1"), port});
    fmt::print(stderr, "listening on http://127.0.0.1:{}/ (MCP at /mcp)\n", acceptor.local_endpoint().port());

    asio::signal_set signals(ioc, SIGINT, SIGTERM);
    signals.async_wait([&](auto, int) {
        mcp.shutdown();  // releases held-open MCP streams and cancels running calls
        acceptor.close();
        ioc.stop();
    });
    asio::co_spawn(ioc, accept_loop(acceptor, mcp), asio::detached);
    ioc.run();
    return 0;
}
