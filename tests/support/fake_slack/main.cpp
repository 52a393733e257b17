// fiskai-fake-slack: Slack's Web API and Socket Mode on loopback for tests (serve.md §8.6).
// The message store, envelope and click builders and block limits are in slack_state.cpp;
// this file is the Beast HTTP + WebSocket server around them and the control API.

#include "slack_state.hpp"

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/websocket.hpp>
#include <boost/json.hpp>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <sys/prctl.h>
#include <unistd.h>

#include <csignal>
#include <deque>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace websocket = beast::websocket;
namespace json = boost::json;
using asio::ip::tcp;
using clock_type = std::chrono::steady_clock;
using namespace fiskai::fake_slack;

namespace {

constexpr auto as_tuple_awaitable = asio::as_tuple(asio::use_awaitable);

struct server;

// One Socket Mode connection: writes are queued (Beast allows one write at a time).
struct ws_session : std::enable_shared_from_this<ws_session> {
    websocket::stream<beast::tcp_stream> ws;
    std::deque<std::string> outbox;
    asio::steady_timer wake;
    bool closing = false;
    int held_fd = -1;  // silence: a dup of the socket so it stays open with nobody reading

    explicit ws_session(beast::tcp_stream stream)
        : ws(std::move(stream)), wake(ws.get_executor(), clock_type::time_point::max()) {}
    ~ws_session() {
        if (held_fd >= 0) ::close(held_fd);
    }
    [[nodiscard]] bool usable() const { return !closing && held_fd < 0 && ws.is_open(); }
    void send(std::string text) {
        outbox.push_back(std::move(text));
        wake.cancel();
    }
};

struct envelope_entry {
    json::object envelope;
    bool acked = false;
    bool sent = false;
    int resends = 0;
    clock_type::time_point last_sent{};
};

struct server {
    slack_state state;
    unsigned short port = 0;
    std::chrono::milliseconds resend_after{3000};
    int max_resends = 3;
    int drop_acks = 0;
    std::uint64_t tickets = 0;
    std::shared_ptr<ws_session> current;
    std::vector<std::string> order;  // envelope ids in delivery order
    std::map<std::string, envelope_entry> envelopes;
    json::array acks;
    int connections = 0;
    std::vector<std::shared_ptr<ws_session>> silenced;  // kept so their sockets stay open

    void send_envelope(envelope_entry& entry) {
        if (!current || !current->usable()) return;
        entry.sent = true;
        entry.last_sent = clock_type::now();
        current->send(json::serialize(entry.envelope));
    }
    void deliver(json::object envelope) {
        const std::string id(envelope.at("envelope_id").as_string());
        order.push_back(id);
        auto& entry = envelopes[id];
        entry.envelope = std::move(envelope);
        send_envelope(entry);
    }
    // Unacked envelopes are re-sent with retry_attempt + 1, as Slack does (on a faster schedule).
    void resend_due() {
        const auto now = clock_type::now();
        for (const auto& id : order) {
            auto& entry = envelopes[id];
            if (entry.acked || entry.resends >= max_resends) continue;
            if (entry.sent && now - entry.last_sent < resend_after) continue;
            if (!current || !current->usable()) continue;
            if (entry.sent) {
                ++entry.resends;
                entry.envelope["retry_attempt"] = entry.resends;
                entry.envelope["retry_reason"] = "timeout";
            }
            send_envelope(entry);
        }
    }
    void record_ack(const json::object& message) {
        const auto* id = message.if_contains("envelope_id");
        if (id == nullptr || !id->is_string()) return;
        if (drop_acks > 0) {
            --drop_acks;
            return;
        }
        auto it = envelopes.find(std::string(id->get_string()));
        if (it == envelopes.end()) return;
        it->second.acked = true;
        acks.push_back(json::object{{"envelope_id", *id}, {"retry_attempt", it->second.envelope.at("retry_attempt")}});
    }
};

http::response<http::string_body> make_response(const http::request<http::string_body>& req, int status,
                                                std::string body) {
    http::response<http::string_body> res{static_cast<http::status>(status), req.version()};
    res.set(http::field::server, "fiskai-fake-slack");
    res.set(http::field::content_type, "application/json; charset=utf-8");
    res.keep_alive(req.keep_alive());
    res.body() = std::move(body);
    res.prepare_payload();
    return res;
}

std::string form_decode(std::string_view s) {
    std::string out;
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (s[i] == '+') {
            out += ' ';
        } else if (s[i] == '%' && i + 2 < s.size()) {
            out += static_cast<char>(std::stoi(std::string(s.substr(i + 1, 2)), nullptr, 16));
            i += 2;
        } else {
            out += s[i];
        }
    }
    return out;
}

void parse_form(std::string_view text, json::object& into) {
    while (!text.empty()) {
        const auto amp = text.find('&');
        const auto pair = text.substr(0, amp);
        const auto eq = pair.find('=');
        if (!pair.empty())
            into[form_decode(pair.substr(0, eq))] =
                eq == std::string_view::npos ? "" : form_decode(pair.substr(eq + 1));
        if (amp == std::string_view::npos) break;
        text.remove_prefix(amp + 1);
    }
}

// Amendment 18: write methods read a JSON body; read methods read form or query arguments only.
json::object web_arguments(std::string_view method, const http::request<http::string_body>& req) {
    json::object args;
    const auto target = std::string_view(req.target());
    if (const auto q = target.find('?'); q != std::string_view::npos) parse_form(target.substr(q + 1), args);
    const auto type = std::string(req[http::field::content_type]);
    const bool write_method = method == "chat.postMessage" || method == "chat.update";
    if (type.starts_with("application/json")) {
        if (!write_method) return args;
        boost::system::error_code ec;
        auto body = json::parse(req.body(), ec);
        if (!ec && body.is_object())
            for (auto& [k, v] : body.as_object()) args[k] = v;
    } else if (type.starts_with("application/x-www-form-urlencoded")) {
        parse_form(req.body(), args);
        // Slack accepts blocks as a JSON string in a form.
        if (auto* blocks = args.if_contains("blocks"); blocks != nullptr && blocks->is_string()) {
            boost::system::error_code ec;
            auto parsed = json::parse(blocks->get_string(), ec);
            if (!ec) *blocks = parsed;
        }
    }
    return args;
}

json::object parse_control(const std::string& body, std::string& error) {
    boost::system::error_code ec;
    auto value = json::parse(body.empty() ? std::string("{}") : body, ec);
    if (ec || !value.is_object()) {
        error = "body must be a JSON object";
        return {};
    }
    return value.as_object();
}

asio::awaitable<void> ws_writer(std::shared_ptr<ws_session> session) {
    for (;;) {
        // A closing session still writes what is queued (the disconnect message) first.
        while (!session->outbox.empty() && session->held_fd < 0 && session->ws.is_open()) {
            auto text = std::move(session->outbox.front());
            session->outbox.pop_front();
            session->ws.text(true);
            auto [ec, n] = co_await session->ws.async_write(asio::buffer(text), as_tuple_awaitable);
            if (ec) co_return;
        }
        if (session->closing) {
            co_await session->ws.async_close(websocket::close_code::normal, as_tuple_awaitable);
            co_return;
        }
        if (session->held_fd >= 0 || !session->ws.is_open()) co_return;
        co_await session->wake.async_wait(as_tuple_awaitable);
    }
}

asio::awaitable<void> ws_reader(std::shared_ptr<ws_session> session, server& srv) {
    beast::flat_buffer buffer;
    for (;;) {
        auto [ec, n] = co_await session->ws.async_read(buffer, as_tuple_awaitable);
        if (ec) break;
        boost::system::error_code parse_ec;
        auto value = json::parse(beast::buffers_to_string(buffer.data()), parse_ec);
        buffer.consume(buffer.size());
        if (!parse_ec && value.is_object()) srv.record_ack(value.as_object());
    }
    session->wake.cancel();
    if (srv.current == session) srv.current.reset();
}

asio::awaitable<void> accept_socket(beast::tcp_stream stream, http::request<http::string_body> req, server& srv) {
    auto session = std::make_shared<ws_session>(std::move(stream));
    beast::get_lowest_layer(session->ws).expires_never();
    session->ws.set_option(websocket::stream_base::timeout::suggested(beast::role_type::server));
    auto [ec] = co_await session->ws.async_accept(req, as_tuple_awaitable);
    if (ec) co_return;
    ++srv.connections;
    // A newer connection takes over delivery, as Slack spreads envelopes over live links.
    srv.current = session;
    session->send(json::serialize(json::object{
        {"type", "hello"},
        {"num_connections", 1},
        {"debug_info",
         json::object{{"host", "fake-slack"}, {"build_number", 1}, {"approximate_connection_time", 18060}}},
        {"connection_info", json::object{{"app_id", "A1"}}}}));
    for (const auto& id : srv.order) {
        auto& entry = srv.envelopes[id];
        if (!entry.acked && entry.resends < srv.max_resends) srv.send_envelope(entry);
    }
    auto executor = co_await asio::this_coro::executor;
    asio::co_spawn(executor, ws_writer(session), asio::detached);
    co_await ws_reader(session, srv);
}

asio::awaitable<void> serve_connection(tcp::socket socket, std::shared_ptr<server> srv_ptr) {
    auto& srv = *srv_ptr;
    beast::tcp_stream stream(std::move(socket));
    beast::flat_buffer buffer;
    for (;;) {
        http::request_parser<http::string_body> parser;
        parser.body_limit(std::size_t{16} << 20);
        auto [read_ec, read_n] = co_await http::async_read(stream, buffer, parser, as_tuple_awaitable);
        if (read_ec) co_return;
        auto req = parser.release();
        const std::string target(req.target().substr(0, req.target().find('?')));
        if (target == "/link" && websocket::is_upgrade(req)) {
            co_await accept_socket(std::move(stream), std::move(req), srv);
            co_return;
        }
        std::optional<http::response<http::string_body>> res;
        std::string error;
        if (target.starts_with("/api/")) {
            const auto method = target.substr(5);
            std::string token;
            const auto auth = std::string(req[http::field::authorization]);
            if (auth.starts_with("Bearer ")) token = auth.substr(7);
            auto args = web_arguments(method, req);
            if (token.empty()) {
                if (auto* t = args.if_contains("token"); t != nullptr && t->is_string()) token = t->get_string();
            }
            const auto url = fmt::format("ws://127.0.0.1:{}/link?ticket={}", srv.port, ++srv.tickets);
            auto reply = srv.state.call(method, token, args, url);
            res = make_response(req, reply.status, json::serialize(reply.body));
            if (reply.retry_after) res->set(http::field::retry_after, std::to_string(*reply.retry_after));
        } else if (target == "/_fake/event" || target == "/_fake/click") {
            auto control = parse_control(req.body(), error);
            json::object envelope;
            if (error.empty())
                envelope = target == "/_fake/event" ? srv.state.event_envelope(control, error)
                                                    : srv.state.click_envelope(control, error);
            if (!error.empty()) {
                res = make_response(req, 400, json::serialize(json::object{{"ok", false}, {"error", error}}));
            } else {
                json::object reply{{"ok", true}, {"envelope_id", envelope.at("envelope_id")}};
                const auto& payload = envelope.at("payload").as_object();
                if (auto* id = payload.if_contains("event_id")) reply["event_id"] = *id;
                if (auto* event = payload.if_contains("event")) reply["ts"] = event->at("ts");
                // repeat: the same event again in new envelopes (Slack's duplicates keep the event_id).
                const auto* repeat = control.if_contains("repeat");
                const auto copies = repeat != nullptr && repeat->is_int64() ? repeat->get_int64() : 0;
                auto copy = envelope;
                srv.deliver(std::move(envelope));
                for (std::int64_t i = 0; i < copies; ++i) {
                    copy["envelope_id"] = srv.state.next_envelope_id();
                    srv.deliver(copy);
                }
                res = make_response(req, 200, json::serialize(reply));
            }
        } else if (target == "/_fake/disconnect" || target == "/_fake/silence") {
            auto control = parse_control(req.body(), error);
            auto session = srv.current;
            if (!session) {
                res = make_response(req, 409, R"({"ok":false,"error":"no socket connected"})");
            } else {
                srv.current.reset();
                if (target == "/_fake/silence") {
                    // Keep the TCP connection open with nobody behind it: no pongs, no FIN.
                    session->held_fd = ::dup(beast::get_lowest_layer(session->ws).socket().native_handle());
                    srv.silenced.push_back(session);
                    boost::system::error_code ignored;
                    beast::get_lowest_layer(session->ws).socket().close(ignored);
                } else {
                    const auto* reason = control.if_contains("reason");
                    if (reason != nullptr && reason->is_string()) {
                        session->send(
                            json::serialize(json::object{{"type", "disconnect"},
                                                         {"reason", *reason},
                                                         {"debug_info", json::object{{"host", "fake-slack"}}}}));
                        session->closing = true;
                        session->wake.cancel();
                    } else {
                        boost::system::error_code ignored;
                        beast::get_lowest_layer(session->ws).socket().close(ignored);
                    }
                }
                res = make_response(req, 200, R"({"ok":true})");
            }
        } else if (target == "/_fake/raw") {
            // The body as one text frame on the current socket, verbatim: no envelope kept, no
            // resend. For frames Slack never sends (hostile tests).
            if (!srv.current) {
                res = make_response(req, 409, R"({"ok":false,"error":"no socket connected"})");
            } else {
                srv.current->send(req.body());
                res = make_response(req, 200, R"({"ok":true})");
            }
        } else if (target == "/_fake/rate_limit") {
            auto control = parse_control(req.body(), error);
            const auto* m = control.if_contains("method");
            if (!error.empty() || m == nullptr || !m->is_string()) {
                res = make_response(req, 400, R"({"ok":false,"error":"method is required"})");
            } else {
                const auto* count = control.if_contains("count");
                const auto* after = control.if_contains("retry_after");
                srv.state.rate_limit(std::string(m->get_string()),
                                     count && count->is_int64() ? static_cast<int>(count->get_int64()) : 1,
                                     after && after->is_int64() ? static_cast<int>(after->get_int64()) : 1);
                res = make_response(req, 200, R"({"ok":true})");
            }
        } else if (target == "/_fake/drop_acks") {
            auto control = parse_control(req.body(), error);
            const auto* count = control.if_contains("count");
            srv.drop_acks = count && count->is_int64() ? static_cast<int>(count->get_int64()) : 1;
            res = make_response(req, 200, R"({"ok":true})");
        } else if (target == "/_fake/messages") {
            // ?thread_ts=<ts>: only that thread's posts and edits (tests that poll one thread of many).
            json::object query;
            if (const auto q = std::string_view(req.target()).find('?'); q != std::string_view::npos)
                parse_form(std::string_view(req.target()).substr(q + 1), query);
            json::array messages = srv.state.log();
            if (const auto* thread = query.if_contains("thread_ts"); thread != nullptr && thread->is_string()) {
                json::array only;
                for (auto& m : messages)
                    if (const auto* t = m.as_object().if_contains("thread_ts"); t != nullptr && *t == *thread)
                        only.push_back(std::move(m));
                messages = std::move(only);
            }
            res = make_response(req, 200, json::serialize(json::object{{"messages", std::move(messages)}}));
        } else if (target == "/_fake/acks") {
            res = make_response(
                req, 200,
                json::serialize(json::object{
                    {"acks", srv.acks}, {"connections", srv.connections}, {"connected", srv.current != nullptr}}));
        } else {
            res =
                make_response(req, 404, json::serialize(json::object{{"ok", false}, {"error", "no route " + target}}));
        }
        const bool keep_alive = res->keep_alive();
        auto [write_ec, write_n] = co_await http::async_write(stream, *res, as_tuple_awaitable);
        if (write_ec || !keep_alive) break;
    }
    beast::error_code ignored;
    stream.socket().shutdown(tcp::socket::shutdown_send, ignored);
}

asio::awaitable<void> accept_loop(tcp::acceptor& acceptor, std::shared_ptr<server> srv) {
    for (;;) {
        auto [ec, socket] = co_await acceptor.async_accept(as_tuple_awaitable);
        if (ec) {
            if (ec == asio::error::operation_aborted) co_return;
            continue;
        }
        socket.set_option(tcp::no_delay(true), ec);
        asio::co_spawn(acceptor.get_executor(), serve_connection(std::move(socket), srv), asio::detached);
    }
}

asio::awaitable<void> resend_loop(std::shared_ptr<server> srv) {
    asio::steady_timer timer(co_await asio::this_coro::executor);
    for (;;) {
        timer.expires_after(std::chrono::milliseconds(50));
        auto [ec] = co_await timer.async_wait(as_tuple_awaitable);
        if (ec) co_return;
        srv->resend_due();
    }
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{
        "Slack's Web API (POST /api/<method>) and Socket Mode (/link) on 127.0.0.1 for tests, with a control API "
        "under /_fake/ (event, click, raw, disconnect, silence, rate_limit, drop_acks, messages, acks).",
        "fiskai-fake-slack"};
    int port = 0;
    int resend_ms = 3000;
    bool exit_with_parent = false;
    auto srv = std::make_shared<server>();
    app.add_option("--port", port, "TCP port on 127.0.0.1 (0 picks a free one)")->check(CLI::Range(0, 65535));
    app.add_option("--resend-ms", resend_ms, "re-send an unacked envelope after this many milliseconds (Slack: 3000)")
        ->check(CLI::Range(10, 600000));
    app.add_option("--bot-token", srv->state.bot_token, "the accepted bot token");
    app.add_option("--app-token", srv->state.app_token, "the accepted app-level token");
    app.add_flag("--exit-with-parent", exit_with_parent, "exit when the process that started this one dies");
    CLI11_PARSE(app, argc, argv);
    if (exit_with_parent) {
        ::prctl(PR_SET_PDEATHSIG, SIGTERM);
        if (::getppid() == 1) return 0;
    }
    srv->resend_after = std::chrono::milliseconds(resend_ms);

    asio::io_context ioc{1};
    tcp::acceptor acceptor(ioc);
    try {
        const tcp::endpoint where(asio::ip::make_address("127.0.0.1"), static_cast<unsigned short>(port));
        acceptor.open(where.protocol());
        acceptor.set_option(asio::socket_base::reuse_address(true));
        acceptor.bind(where);
        acceptor.listen();
    } catch (const boost::system::system_error& e) {
        std::cerr << fmt::format("fiskai-fake-slack: listen on 127.0.0.1:{}: {}\n", port, e.code().message());
        return 2;
    }
    srv->port = acceptor.local_endpoint().port();
    std::cout << "fake-slack listening on 127.0.0.1:" << srv->port << std::endl;

    asio::signal_set signals(ioc, SIGINT, SIGTERM);
    signals.async_wait([&](const boost::system::error_code&, int) { ioc.stop(); });
    asio::co_spawn(ioc, accept_loop(acceptor, srv), asio::detached);
    asio::co_spawn(ioc, resend_loop(srv), asio::detached);
    ioc.run();
    // Sessions hold timers: they go before the io_context that owns the timer service.
    srv->silenced.clear();
    srv->current.reset();
    return 0;
}
