// Fuzz target over the MCP request path: raw HTTP bytes in, through Beast's parser and
// handle_http on an in-memory test stream, against a server with a quick tool, a gated
// tool and a progress-reporting one. Nothing may crash, leak, invoke undefined behaviour
// or hang (every input must finish with the io_context out of work within 5 s).
//
// The bytes `SID` in an input are replaced with the id of a session the target opened and
// initialized at start, so mutations reach the session paths (calls, GET streams, resume,
// cancel, DELETE) and not only the refusals.
//
// Built twice (cmake/FiskaiFuzz.cmake): with the shared driver in tests/support, and under
// clang's libFuzzer; fuzz_http.dict holds the fragments both splice in.

#include <fiskai/mcpserver/server.hpp>
#include <fiskai/mcpserver/test_stream.hpp>
#include <fiskai/toolkit/function_tool.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>

namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace json = boost::json;
using namespace fiskai;
constexpr auto tuple_awaitable = asio::as_tuple(asio::use_awaitable);

toolkit::tool_ptr tool(std::string name, toolkit::confirm_posture confirm, toolkit::function_handler h) {
    return toolkit::make_function_tool(
        {.name = std::move(name),
         .description = "a fuzz target tool",
         .input_schema =
             json::object{{"type", "object"}, {"properties", json::object{{"n", json::object{{"type", "integer"}}}}}},
         .exposed = toolkit::exposure{toolkit::surface::mcp},
         .confirm = confirm,
         .handler = std::move(h)});
}

mcpserver::server_options fuzz_options() {
    mcpserver::server_options o;
    // Short waits, so no input holds the io_context: keepalives find a closed peer at
    // once and an approval nobody answers times out.
    o.keepalive_interval = std::chrono::milliseconds(1);
    o.elicitation_timeout = std::chrono::milliseconds(2);
    o.call_timeout = std::chrono::milliseconds(50);
    o.progress_interval = std::chrono::milliseconds(1);
    o.max_sessions = 64;
    return o;
}

toolkit::tool_list fuzz_tools() {
    const auto ok = [](const json::object& args, const toolkit::call_options& o) -> asio::awaitable<toolkit::outcome> {
        if (o.on_progress) o.on_progress({.progress = 1, .total = 2.0, .message = "half"});
        if (o.on_log) o.on_log("info", "working");
        co_return toolkit::outcome::from_json(json::object{{"args", args}});
    };
    return {tool("quick", toolkit::confirm_posture::not_required, ok),
            tool("gated", toolkit::confirm_posture::required, ok),
            tool("thrower", toolkit::confirm_posture::not_required,
                 [](const json::object&, const toolkit::call_options&) -> asio::awaitable<toolkit::outcome> {
                     throw std::runtime_error("thrown on purpose");
                     co_return toolkit::outcome::failure("unreachable");
                 })};
}

asio::awaitable<void> serve(mcpserver::server& srv, beast::test::stream& s) {
    beast::flat_buffer buffer;
    for (;;) {
        http::request_parser<http::string_body> parser;
        parser.body_limit(srv.options().max_body_bytes);
        parser.header_limit(16 * 1024);
        auto [ec, n] = co_await http::async_read(s, buffer, parser, tuple_awaitable);
        if (ec) break;
        if (!co_await mcpserver::handle_http(srv, parser.release(), s)) break;
    }
    s.close();
}

struct target {
    asio::io_context ioc;
    mcpserver::server srv{ioc.get_executor(), fuzz_options(), fuzz_tools()};
    std::string session;

    target() { open_session(); }

    // Opens and initializes one session the inputs can name as SID.
    void open_session() {
        const std::string init =
            R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25",)"
            R"("capabilities":{"elicitation":{}},"clientInfo":{"name":"fuzz","version":"1"}}})";
        const auto answer = exchange(
            "POST /mcp HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
            "Accept: application/json, text/event-stream\r\nContent-Length: " +
            std::to_string(init.size()) + "\r\n\r\n" + init);
        const auto at = answer.find("Mcp-Session-Id: ");
        if (at == std::string::npos) {
            std::fprintf(stderr, "fuzz_http: initialize failed:\n%s\n", answer.c_str());
            std::abort();
        }
        session = answer.substr(at + 16, 32);
        const std::string done = R"({"jsonrpc":"2.0","method":"notifications/initialized"})";
        exchange(
            "POST /mcp HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nMcp-Session-Id: " + session +
            "\r\nAccept: application/json, text/event-stream\r\nContent-Length: " + std::to_string(done.size()) +
            "\r\n\r\n" + done);
    }

    // An input may have ended the session (DELETE): open another for the next one.
    void ensure_session() {
        if (!srv.has_session(session)) open_session();
    }

    // Sends the bytes on a fresh connection whose client then hangs up; returns what the
    // server wrote. Aborts when the server does not finish.
    std::string exchange(const std::string& bytes) {
        beast::test::stream client(ioc.get_executor());
        // A test stream keeps accepting writes for a client that hung up, where a socket
        // would fail; failing the server's end after a bounded number of operations ends
        // held-open event streams (and tests the error paths of every read and write).
        beast::test::fail_count failures(200);
        beast::test::stream server_end(ioc, failures);
        client.connect(server_end);
        server_end.append(bytes);
        client.close();  // the server reads the bytes, then end of stream
        asio::co_spawn(ioc, serve(srv, server_end), asio::detached);
        ioc.restart();
        ioc.run_for(std::chrono::seconds(5));
        if (!ioc.stopped()) {
            std::fprintf(stderr, "fuzz_http: the server did not finish an input within 5 s\n");
            std::abort();
        }
        return std::string(client.str());
    }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static target t;
    std::string input(reinterpret_cast<const char*>(data), size);
    t.ensure_session();
    for (auto at = input.find("SID"); at != std::string::npos; at = input.find("SID", at + t.session.size())) {
        input.replace(at, 3, t.session);
    }
    const auto answer = t.exchange(input);
    // FISKAI_FUZZ_ECHO=1 prints each answer, to check what a seed reaches.
    static const bool echo = std::getenv("FISKAI_FUZZ_ECHO") != nullptr;
    if (echo) std::fprintf(stderr, "---- answer ----\n%s\n", answer.c_str());
    return 0;
}
