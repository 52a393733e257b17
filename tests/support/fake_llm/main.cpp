// fiskai-fake-llm: a scripted LLM server on loopback speaking the Anthropic Messages and
// the OpenAI chat-completions wire formats, for tests, benchmarks and demos. The logic
// (script, matching, rendering) is in script.cpp; this file is the Beast server around it.

#include "script.hpp"

#include <boost/asio.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <boost/json.hpp>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <sys/prctl.h>

#include <cctype>
#include <csignal>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace json = boost::json;
using asio::ip::tcp;
using namespace fiskai::fake_llm;

namespace {

constexpr auto as_tuple_awaitable = asio::as_tuple(asio::use_awaitable);

struct server_state {
    engine script_engine;
    std::string log_text;  // every request, one JSON line each
    std::ofstream log_file;
};

std::string lower(std::string_view s) {
    std::string out(s);
    for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

void log_request(server_state& state, std::string_view target, const http::request<http::string_body>& req,
                 const action& act) {
    json::object headers;
    for (const auto& field : req) headers[lower(field.name_string())] = std::string(field.value());
    boost::system::error_code ec;
    json::value body = json::parse(req.body(), ec);
    if (ec) body = req.body();
    json::object line{{"endpoint", target},
                      {"headers", std::move(headers)},
                      {"body", std::move(body)},
                      {"conversation", act.conversation ? json::value(*act.conversation) : json::value(nullptr)},
                      {"step", act.step},
                      {"attempt", act.attempt}};
    std::string text = json::serialize(line);
    text += '\n';
    state.log_text += text;
    if (state.log_file.is_open()) {
        state.log_file << text;
        state.log_file.flush();
    }
}

http::response<http::string_body> make_response(const http::request<http::string_body>& req, int status,
                                                std::string body, std::string_view content_type = "application/json") {
    http::response<http::string_body> res{static_cast<http::status>(status), req.version()};
    res.set(http::field::server, "fiskai-fake-llm");
    res.set(http::field::content_type, content_type);
    res.keep_alive(req.keep_alive());
    res.body() = std::move(body);
    res.prepare_payload();
    return res;
}

// Waits until the client gives up on a hung request (it closes the connection).
template <class Stream>
asio::awaitable<void> wait_for_close(Stream& stream) {
    std::array<char, 512> scratch{};
    for (;;) {
        auto [ec, n] = co_await stream.async_read_some(asio::buffer(scratch), as_tuple_awaitable);
        if (ec) co_return;
    }
}

template <class Stream>
asio::awaitable<void> serve_connection(Stream& stream, server_state& state) {
    beast::flat_buffer buffer;
    for (;;) {
        http::request_parser<http::string_body> parser;
        parser.body_limit(std::size_t{64} << 20);
        auto [read_ec, read_n] = co_await http::async_read(stream, buffer, parser, as_tuple_awaitable);
        if (read_ec) co_return;
        auto req = parser.release();
        std::string target(req.target().substr(0, req.target().find('?')));

        std::optional<http::response<http::string_body>> res;
        if (target == "/_fake/requests" && req.method() == http::verb::get) {
            res = make_response(req, 200, state.log_text, "application/x-ndjson");
        } else if (target == "/_fake/script" && req.method() == http::verb::post) {
            auto parsed = parse_script(req.body());
            if (parsed) {
                state.script_engine.replace(std::move(*parsed));
                res = make_response(req, 200, R"({"ok":true})");
            } else {
                res = make_response(req, 400, error_body(endpoint::anthropic, "invalid_request_error", parsed.error()));
            }
        } else if (target.ends_with("/v1/messages") || target.ends_with("/chat/completions")) {
            const auto where = target.ends_with("/v1/messages") ? endpoint::anthropic : endpoint::openai;
            if (req.method() != http::verb::post) {
                res = make_response(req, 405, error_body(where, "invalid_request_error", "fake-llm: use POST"));
            } else {
                action act = state.script_engine.handle(where, req.body());
                log_request(state, target, req, act);
                if (act.what == action::kind::hang) {
                    co_await wait_for_close(stream);
                    co_return;
                }
                if (act.what == action::kind::close) {
                    beast::get_lowest_layer(stream).socket().close();
                    co_return;
                }
                if (act.delay_ms > 0) {
                    asio::steady_timer timer(co_await asio::this_coro::executor,
                                             std::chrono::milliseconds(act.delay_ms));
                    co_await timer.async_wait(as_tuple_awaitable);
                }
                res = make_response(req, act.status, std::move(act.body));
                for (const auto& [name, value] : act.headers) res->set(name, value);
            }
        } else {
            res = make_response(
                req, 404,
                error_body(endpoint::anthropic, "not_found_error",
                           fmt::format("fake-llm: no route for {} {}", std::string(req.method_string()), target)));
        }
        const bool keep_alive = res->keep_alive();
        auto [write_ec, write_n] = co_await http::async_write(stream, *res, as_tuple_awaitable);
        if (write_ec || !keep_alive) break;
    }
    beast::error_code ignored;
    beast::get_lowest_layer(stream).socket().shutdown(tcp::socket::shutdown_send, ignored);
}

asio::awaitable<void> plain_session(tcp::socket socket, std::shared_ptr<server_state> state) {
    beast::tcp_stream stream(std::move(socket));
    co_await serve_connection(stream, *state);
}

asio::awaitable<void> tls_session(tcp::socket socket, asio::ssl::context& tls, std::shared_ptr<server_state> state) {
    beast::ssl_stream<beast::tcp_stream> stream(beast::tcp_stream(std::move(socket)), tls);
    auto [ec] = co_await stream.async_handshake(asio::ssl::stream_base::server, as_tuple_awaitable);
    if (ec) co_return;  // a client that refused our certificate
    co_await serve_connection(stream, *state);
}

asio::awaitable<void> accept_loop(tcp::acceptor& acceptor, asio::ssl::context* tls,
                                  std::shared_ptr<server_state> state) {
    for (;;) {
        auto [ec, socket] = co_await acceptor.async_accept(as_tuple_awaitable);
        if (ec) {
            if (ec == asio::error::operation_aborted) co_return;
            continue;
        }
        socket.set_option(tcp::no_delay(true), ec);
        auto executor = acceptor.get_executor();
        if (tls != nullptr) {
            asio::co_spawn(executor, tls_session(std::move(socket), *tls, state), asio::detached);
        } else {
            asio::co_spawn(executor, plain_session(std::move(socket), state), asio::detached);
        }
    }
}

std::optional<std::string> read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return std::nullopt;
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{
        "A scripted LLM server on 127.0.0.1 speaking the Anthropic Messages (POST /v1/messages) and OpenAI "
        "chat-completions (POST /v1/chat/completions) wire formats. GET /_fake/requests returns the request "
        "log (JSON lines); POST /_fake/script swaps the script.",
        "fiskai-fake-llm"};
    std::string script_path;
    std::string log_path;
    int port = 0;
    std::vector<std::string> tls_files;
    bool exit_with_parent = false;
    app.add_option("--script", script_path, "script file (JSON): conversations, steps, faults")
        ->check(CLI::ExistingFile);
    app.add_option("--port", port, "TCP port on 127.0.0.1 (0 picks a free one)")->check(CLI::Range(0, 65535));
    app.add_option("--log", log_path, "append every request to this file as one JSON line");
    app.add_option("--tls", tls_files, "serve HTTPS with this certificate (PEM chain) and key")
        ->expected(2)
        ->type_name("CERT KEY");
    app.add_flag("--exit-with-parent", exit_with_parent,
                 "exit when the process that started this one dies (tests: no server outlives a crashed test)");
    CLI11_PARSE(app, argc, argv);
    if (exit_with_parent) {
        ::prctl(PR_SET_PDEATHSIG, SIGTERM);
        if (::getppid() == 1) return 0;
    }

    auto state = std::make_shared<server_state>();
    if (!script_path.empty()) {
        auto text = read_file(script_path);
        if (!text) {
            std::cerr << fmt::format("fiskai-fake-llm: cannot read script {}\n", script_path);
            return 2;
        }
        auto parsed = parse_script(*text);
        if (!parsed) {
            std::cerr << fmt::format("fiskai-fake-llm: script {}: {}\n", script_path, parsed.error());
            return 2;
        }
        state->script_engine.replace(std::move(*parsed));
    }
    if (!log_path.empty()) {
        state->log_file.open(log_path, std::ios::app);
        if (!state->log_file) {
            std::cerr << fmt::format("fiskai-fake-llm: cannot open log {}\n", log_path);
            return 2;
        }
    }

    asio::io_context ioc{1};
    asio::ssl::context tls{asio::ssl::context::tls_server};
    if (!tls_files.empty()) {
        boost::system::error_code ec;
        tls.use_certificate_chain_file(tls_files[0], ec);
        if (!ec) tls.use_private_key_file(tls_files[1], asio::ssl::context::pem, ec);
        if (ec) {
            std::cerr << fmt::format("fiskai-fake-llm: --tls {} {}: {}\n", tls_files[0], tls_files[1], ec.message());
            return 2;
        }
    }
    tcp::acceptor acceptor(ioc);
    try {
        const tcp::endpoint where(asio::ip::make_address("127.0.0.1"), static_cast<unsigned short>(port));
        acceptor.open(where.protocol());
        acceptor.set_option(asio::socket_base::reuse_address(true));
        acceptor.bind(where);
        acceptor.listen();
    } catch (const boost::system::system_error& e) {
        std::cerr << fmt::format("fiskai-fake-llm: listen on 127.0.0.1:{}: {}\n", port, e.code().message());
        return 2;
    }
    std::cout << "fake-llm listening on 127.0.0.1:" << acceptor.local_endpoint().port() << std::endl;

    asio::signal_set signals(ioc, SIGINT, SIGTERM);
    signals.async_wait([&](const boost::system::error_code&, int) { ioc.stop(); });
    asio::co_spawn(ioc, accept_loop(acceptor, tls_files.empty() ? nullptr : &tls, state), asio::detached);
    ioc.run();
    return 0;
}
