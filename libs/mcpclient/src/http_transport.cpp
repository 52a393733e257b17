// The streamable HTTP transport: one POST per message, answered with JSON or an SSE
// stream; the session id and protocol version headers after initialize; DELETE on close.

#include "transport.hpp"

#include <fiskai/gocompat/quote.hpp>
#include <fiskai/mcpclient/protocol.hpp>
#include <fiskai/net/http_client.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/json/serialize.hpp>
#include <fmt/format.h>

#include <cstdlib>

namespace fiskai::mcpclient {
namespace {

namespace asio = boost::asio;
namespace json = boost::json;

bool starts_with_media(std::optional<std::string_view> content_type, std::string_view media) {
    if (!content_type) return false;
    auto v = *content_type;
    while (!v.empty() && v.front() == ' ') v.remove_prefix(1);
    if (v.size() < media.size()) return false;
    for (std::size_t i = 0; i < media.size(); ++i) {
        if (std::tolower(static_cast<unsigned char>(v[i])) != media[i]) return false;
    }
    return v.size() == media.size() || v[media.size()] == ';' || v[media.size()] == ' ';
}

class http_transport final : public transport, public std::enable_shared_from_this<http_transport> {
public:
    http_transport(asio::any_io_executor ex, std::string server, std::string url, net::header_list extra,
                   gocompat::logger log)
        : server_(std::move(server)), url_(std::move(url)), extra_(std::move(extra)), log_(std::move(log)), http_(ex) {}

    asio::awaitable<rpc_result> request(json::object message, std::int64_t id, clock::time_point deadline) override {
        if (dead_) co_return rpc_failure{rpc_failure::kind::dead, *dead_};
        const bool initializing = message.contains("method") && message.at("method") == "initialize";
        auto opened = co_await http_.open_stream(make_post(json::serialize(message)), deadline);
        if (!opened) co_return failure_of(opened.error());
        auto& stream = *opened;
        if (stream.status() == 404 && !session_id_.empty() && !initializing) {
            co_return rpc_failure{rpc_failure::kind::session_expired, "the server no longer knows the session"};
        }
        if (stream.status() / 100 != 2) co_return co_await status_failure(stream, deadline);
        if (auto sid = stream.header("mcp-session-id"); sid && initializing) session_id_ = std::string(*sid);

        if (starts_with_media(stream.header("content-type"), "text/event-stream")) {
            for (;;) {
                auto event = co_await stream.next_event(deadline);
                if (!event) co_return failure_of(event.error());
                if (!*event) {
                    co_return rpc_failure{rpc_failure::kind::failed, "the event stream ended without the answer"};
                }
                if ((*event)->data.empty()) continue;
                auto in = classify((*event)->data);
                if (auto answer = co_await take(in, id)) co_return std::move(*answer);
            }
        }
        if (!starts_with_media(stream.header("content-type"), "application/json")) {
            co_return rpc_failure{rpc_failure::kind::failed,
                                  fmt::format("the answer has content type {}, not application/json or "
                                              "text/event-stream",
                                              gocompat::quote(stream.header("content-type").value_or("")))};
        }
        std::string body;
        for (;;) {
            auto piece = co_await stream.read_some(deadline);
            if (!piece) co_return failure_of(piece.error());
            if (!*piece) break;
            body += **piece;
            if (body.size() > message_cap) {
                stream.close();
                co_return rpc_failure{rpc_failure::kind::failed,
                                      fmt::format("the JSON answer is over {} bytes", message_cap)};
            }
        }
        auto in = classify(body);
        if (auto answer = co_await take(in, id)) co_return std::move(*answer);
        co_return rpc_failure{rpc_failure::kind::failed, "the JSON answer is not the response to the request"};
    }

    asio::awaitable<std::optional<rpc_failure>> notify(json::object message, clock::time_point deadline) override {
        if (dead_) co_return rpc_failure{rpc_failure::kind::dead, *dead_};
        auto sent = co_await http_.send(make_post(json::serialize(message)), deadline);
        if (!sent) co_return failure_of(sent.error());
        if (sent->status == 404 && !session_id_.empty()) {
            co_return rpc_failure{rpc_failure::kind::session_expired, "the server no longer knows the session"};
        }
        if (sent->status / 100 != 2) {
            co_return rpc_failure{rpc_failure::kind::failed, fmt::format("HTTP {}", sent->status)};
        }
        co_return std::nullopt;
    }

    void post_notification(json::object message) override {
        if (dead_) return;
        auto self = shared_from_this();
        auto deadline = clock::now() + std::chrono::seconds(10);
        asio::co_spawn(http_.get_executor(), self->notify_owned(self, std::move(message), deadline), asio::detached);
    }

    void set_protocol_version(std::string version) override { protocol_version_ = std::move(version); }
    void reset_session() override {
        session_id_.clear();
        protocol_version_.clear();
    }

    asio::awaitable<void> close() override {
        if (closed_) co_return;
        closed_ = true;
        if (!dead_) dead_ = "the session was closed";
        if (!session_id_.empty()) {
            net::http_request del;
            del.method = "DELETE";
            del.url = url_;
            del.headers = common_headers();
            // 405 (the server keeps sessions itself) and errors are all fine: we are leaving.
            auto r = co_await http_.send(std::move(del), clock::now() + std::chrono::seconds(5));
            if (!r)
                log_.debug("mcp client: DELETE of the session failed",
                           {{"server", server_}, {"error", r.error().message}});
        }
        http_.close_idle();
    }

    std::optional<std::string> dead() const override { return dead_; }
    const char* name() const noexcept override { return "http"; }

    void fail(std::string why) override {
        if (dead_) return;
        dead_ = why;
        if (on_death) on_death(why);
    }

private:
    asio::awaitable<void> notify_owned(std::shared_ptr<http_transport>, json::object message,
                                       clock::time_point deadline) {
        co_await notify(std::move(message), deadline);
    }

    net::header_list common_headers() const {
        net::header_list h = extra_;
        if (!session_id_.empty()) h.emplace_back("Mcp-Session-Id", session_id_);
        if (!protocol_version_.empty()) h.emplace_back("MCP-Protocol-Version", protocol_version_);
        return h;
    }

    net::http_request make_post(std::string body) const {
        net::http_request r;
        r.method = "POST";
        r.url = url_;
        r.headers = common_headers();
        r.headers.emplace_back("Content-Type", "application/json");
        r.headers.emplace_back("Accept", "application/json, text/event-stream");
        r.body = std::move(body);
        return r;
    }

    // What one message on the answer stream means: our answer, or something to handle on the way.
    asio::awaitable<std::optional<json::value>> take(incoming& in, std::int64_t id) {
        switch (in.what) {
            case incoming::kind::response:
                if (in.id == id) co_return std::move(in.message);
                log_.debug("mcp client: an answer to another request", {{"server", server_}});
                break;
            case incoming::kind::request: {
                log_.debug("mcp client: refusing a server request", {{"server", server_}, {"method", in.method}});
                auto sent =
                    co_await http_.send(make_post(json::serialize(in.reply)), clock::now() + std::chrono::seconds(10));
                if (!sent) log_.debug("mcp client: the refusal was not delivered", {{"server", server_}});
                break;
            }
            case incoming::kind::notification:
                log_.debug("mcp client: notification ignored", {{"server", server_}, {"method", in.method}});
                break;
            case incoming::kind::invalid:
                if (malformed_.admit(log_, server_)) {
                    log_.warn("mcp client: a message that is not JSON-RPC",
                              {{"server", server_}, {"error", in.problem}});
                }
                break;
        }
        co_return std::nullopt;
    }

    asio::awaitable<rpc_failure> status_failure(net::response_stream& stream, clock::time_point deadline) {
        std::string body;
        while (body.size() < 512) {
            auto piece = co_await stream.read_some(deadline);
            if (!piece || !*piece) break;
            body += **piece;
        }
        if (body.size() > 200) body = body.substr(0, 200) + "...";
        co_return rpc_failure{rpc_failure::kind::failed, body.empty()
                                                             ? fmt::format("HTTP {}", stream.status())
                                                             : fmt::format("HTTP {}: {}", stream.status(), body)};
    }

    static rpc_failure failure_of(const net::http_error& e) {
        switch (e.what) {
            case net::http_error::kind::timeout: return {rpc_failure::kind::timeout, e.message};
            case net::http_error::kind::cancelled: return {rpc_failure::kind::cancelled, e.message};
            default: return {rpc_failure::kind::failed, e.message};
        }
    }

    std::string server_;
    std::string url_;
    net::header_list extra_;
    gocompat::logger log_;
    malformed_messages malformed_;
    net::http_client http_;
    std::string session_id_;
    std::string protocol_version_;
    std::optional<std::string> dead_;
    bool closed_ = false;
};

}  // namespace

boost::system::result<std::shared_ptr<transport>, std::string> start_http(asio::any_io_executor ex,
                                                                          const config::mcp_server& server,
                                                                          gocompat::logger log) {
    net::header_list headers;
    for (const auto& [header, variable] : server.headers_env) {
        const char* value = std::getenv(variable.c_str());
        if (value == nullptr) {
            return fmt::format(
                "mcp server {}: header {} needs the environment variable {}, which is not set; set it "
                "or remove mcp_servers.headers_env.{}",
                gocompat::quote(server.name), header, variable, header);
        }
        headers.emplace_back(header, value);
    }
    return std::shared_ptr<transport>(
        std::make_shared<http_transport>(ex, server.name, server.url, std::move(headers), std::move(log)));
}

}  // namespace fiskai::mcpclient
