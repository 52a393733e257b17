#pragma once
// A NATS server as far as connecting goes, on a loopback port, for what nats-server cannot be
// made to do: choose the nonce each connection is greeted with, or greet and then go silent.
// It records each connection's nonce and CONNECT.

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/json.hpp>
#include <fmt/format.h>

#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace fiskai::test {

namespace asio = boost::asio;
namespace json = boost::json;

// Each connection gets INFO with the next nonce; a CONNECT without a signature (when a nonce
// was sent) is refused as nats-server refuses it ("Authorization Violation"); a PING is
// answered unless the server is silent.
class fake_nats_server {
public:
    struct connection_seen {
        std::string nonce;
        std::optional<json::object> connect;
    };

    // `nonces` (one a connection, the last one again after the others; none: no nonce and
    // no auth_required); `answer`: false to go silent after INFO, as a stopped server would.
    explicit fake_nats_server(std::vector<std::string> nonces, bool answer = true)
        : nonces_(std::move(nonces)), answer_(answer) {
        acceptor_.open(asio::ip::tcp::v4());
        acceptor_.bind({asio::ip::make_address("127.0.0.1"), 0});
        acceptor_.listen();
        asio::co_spawn(ioc_, accept(), asio::detached);
        thread_ = std::thread([this] { ioc_.run(); });
    }
    ~fake_nats_server() {
        ioc_.stop();
        thread_.join();
    }

    std::string url() const { return fmt::format("nats://127.0.0.1:{}", acceptor_.local_endpoint().port()); }

    std::vector<connection_seen> seen() {
        std::lock_guard lock(mu_);
        return seen_;
    }

private:
    asio::awaitable<void> accept() {
        for (std::size_t i = 0;; ++i) {
            auto socket = co_await acceptor_.async_accept(asio::use_awaitable);
            const auto nonce = i < nonces_.size() ? nonces_[i] : nonces_.empty() ? "" : nonces_.back();
            std::size_t index = 0;
            {
                std::lock_guard lock(mu_);
                index = seen_.size();
                seen_.push_back({nonce, std::nullopt});
            }
            asio::co_spawn(ioc_, serve(std::move(socket), nonce, index), asio::detached);
        }
    }

    asio::awaitable<void> serve(asio::ip::tcp::socket socket, std::string nonce, std::size_t index) {
        try {
            json::object info{{"server_id", "FAKE"},
                              {"version", "2.9.10"},
                              {"proto", 1},
                              {"headers", true},
                              {"max_payload", 1048576}};
            if (!nonce.empty()) {
                info["auth_required"] = true;
                info["nonce"] = nonce;
            }
            co_await asio::async_write(socket, asio::buffer("INFO " + json::serialize(info) + "\r\n"),
                                       asio::use_awaitable);
            std::string buffer;
            for (;;) {
                const auto n =
                    co_await asio::async_read_until(socket, asio::dynamic_buffer(buffer), "\r\n", asio::use_awaitable);
                const std::string line = buffer.substr(0, n - 2);
                buffer.erase(0, n);
                if (line.rfind("CONNECT ", 0) == 0) {
                    auto connect = json::parse(line.substr(8)).as_object();
                    {
                        std::lock_guard lock(mu_);
                        seen_[index].connect = connect;
                    }
                    if (!nonce.empty() && !connect.contains("sig")) {
                        co_await asio::async_write(socket,
                                                   asio::buffer(std::string("-ERR 'Authorization Violation'\r\n")),
                                                   asio::use_awaitable);
                        co_return;
                    }
                } else if (line == "PING" && answer_) {
                    co_await asio::async_write(socket, asio::buffer(std::string("PONG\r\n")), asio::use_awaitable);
                }
            }
        } catch (const std::exception&) {
            // The client went: nothing more to see.
        }
    }

    std::vector<std::string> nonces_;
    bool answer_ = true;
    asio::io_context ioc_;
    asio::ip::tcp::acceptor acceptor_{ioc_};
    std::mutex mu_;
    std::vector<connection_seen> seen_;
    std::thread thread_;
};

}  // namespace fiskai::test
