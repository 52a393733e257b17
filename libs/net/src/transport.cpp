#include "transport.hpp"

#include <fiskai/gocompat/duration.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/host_name_verification.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/error.hpp>
#include <fmt/format.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include <stdexcept>

namespace fiskai::net::detail {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace ssl = asio::ssl;
using tcp = asio::ip::tcp;
using namespace asio::experimental::awaitable_operators;
constexpr auto use_tuple = asio::as_tuple(asio::use_awaitable);

std::shared_ptr<ssl::context> make_tls_context(const std::string& ca_file) {
    auto context = std::make_shared<ssl::context>(ssl::context::tls_client);
    context->set_default_verify_paths();
    if (!ca_file.empty()) {
        boost::system::error_code ec;
        context->load_verify_file(ca_file, ec);
        if (ec) {
            throw std::runtime_error(fmt::format(
                "CA file \"{}\" could not be loaded ({}); give a PEM file of CA certificates", ca_file, ec.message()));
        }
    }
    context->set_verify_mode(ssl::verify_peer);
    return context;
}

tls_context_source::tls_context_source(std::string ca_file) : ca_file_(std::move(ca_file)) {
    if (!ca_file_.empty()) context_ = make_tls_context(ca_file_);
}

http_result<std::shared_ptr<ssl::context>> tls_context_source::get() {
    const std::lock_guard lock(mutex_);
    if (!context_) {
        try {
            context_ = make_tls_context(ca_file_);
        } catch (const std::exception& e) {
            return http_error{http_error::kind::tls, fmt::format("setting up TLS: {}", e.what())};
        }
    }
    return context_;
}

bool tls_context_source::built() {
    const std::lock_guard lock(mutex_);
    return context_ != nullptr;
}

void transport::close() {
    boost::system::error_code ignored;
    auto& socket = lowest().socket();
    socket.shutdown(tcp::socket::shutdown_both, ignored);
    socket.close(ignored);
}

asio::awaitable<bool> cancelled() {
    auto state = co_await asio::this_coro::cancellation_state;
    co_return state.cancelled() != asio::cancellation_type::none;
}

namespace {

// Why a handshake failed: the certificate check's own reason when it failed there.
std::string handshake_cause(const boost::system::error_code& ec, tls_stream& stream) {
    const long verify = SSL_get_verify_result(stream.native_handle());
    if (verify != X509_V_OK) {
        return fmt::format("certificate verify failed ({})", X509_verify_cert_error_string(verify));
    }
    return ec.message();
}

// Names the host the certificate must be issued for, and sends SNI for a DNS name.
void configure_peer_check(tls_stream& stream, const parsed_url& url) {
    SSL* ssl_handle = stream.native_handle();
    if (url.host_is_ip) {
        // SNI carries names only (RFC 6066); an address is checked against the IP SANs.
        X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl_handle), url.host.c_str());
    } else {
        SSL_set_tlsext_host_name(ssl_handle, url.host.c_str());
        // OpenSSL's own check makes a mismatch show as "hostname mismatch" in the verify result.
        SSL_set1_host(ssl_handle, url.host.c_str());
    }
    stream.set_verify_callback(ssl::host_name_verification(url.host));
}

struct budget {
    clock::time_point by;
    bool deadline_binds;  // the call's deadline comes before the connect timeout ends
    clock::duration connect_timeout;
};

http_error timed_out(const budget& b, std::string_view what) {
    if (b.deadline_binds) {
        return {http_error::kind::timeout, fmt::format("{}: the deadline passed before it completed", what)};
    }
    return {http_error::kind::connect,
            fmt::format("{}: no answer within {}", what, gocompat::format_duration(b.connect_timeout))};
}

asio::awaitable<http_result<tcp::resolver::results_type>> resolve(const parsed_url& url, const budget& b,
                                                                  const std::string& what) {
    auto executor = co_await asio::this_coro::executor;
    if (url.host_is_ip) {
        co_return tcp::resolver::results_type::create(tcp::endpoint(asio::ip::make_address(url.host), url.port),
                                                      url.host, std::to_string(url.port));
    }
    tcp::resolver resolver(executor);
    asio::steady_timer timer(executor, b.by);
    auto lookup = resolver.async_resolve(url.host, std::to_string(url.port), use_tuple);
    auto outcome = co_await (std::move(lookup) || timer.async_wait(use_tuple));
    if (co_await cancelled()) co_return http_error{http_error::kind::cancelled, what + ": cancelled"};
    if (outcome.index() == 1) co_return timed_out(b, what);
    auto [ec, results] = std::get<0>(std::move(outcome));
    if (ec) co_return http_error{http_error::kind::connect, fmt::format("{}: {}", what, ec.message())};
    co_return results;
}

}  // namespace

asio::awaitable<http_result<transport>> dial(const parsed_url& url, tls_context_source& tls,
                                             clock::duration connect_timeout, clock::time_point deadline) {
    const auto now = clock::now();
    const budget b{std::min(deadline, now + connect_timeout), deadline <= now + connect_timeout, connect_timeout};
    const std::string what = fmt::format("connect to {}", url.authority());

    auto endpoints = co_await resolve(url, b, what);
    if (!endpoints) co_return endpoints.error();

    auto executor = co_await asio::this_coro::executor;
    beast::tcp_stream stream(executor);
    stream.expires_at(b.by);
    auto [connect_ec, endpoint] = co_await stream.async_connect(*endpoints, use_tuple);
    if (connect_ec) {
        if (co_await cancelled()) co_return http_error{http_error::kind::cancelled, what + ": cancelled"};
        if (connect_ec == beast::error::timeout) co_return timed_out(b, what);
        co_return http_error{http_error::kind::connect, fmt::format("{}: {}", what, connect_ec.message())};
    }
    transport out;
    if (!url.tls) {
        stream.expires_never();
        out.plain.emplace(std::move(stream));
        co_return out;
    }

    const std::string handshake = fmt::format("TLS handshake with {}", url.authority());
    auto tls_context = tls.get();
    if (!tls_context) {
        stream.close();
        co_return tls_context.error();
    }
    out.tls.emplace(std::move(stream), **tls_context);
    configure_peer_check(*out.tls, url);
    out.lowest().expires_at(b.by);
    auto [handshake_ec] = co_await out.tls->async_handshake(ssl::stream_base::client, use_tuple);
    if (handshake_ec) {
        http_error error{http_error::kind::tls,
                         fmt::format("{}: {}", handshake, handshake_cause(handshake_ec, *out.tls))};
        if (co_await cancelled()) {
            error = {http_error::kind::cancelled, handshake + ": cancelled"};
        } else if (handshake_ec == beast::error::timeout) {
            error = timed_out(b, handshake);
        }
        out.close();
        co_return error;
    }
    out.lowest().expires_never();
    co_return out;
}

}  // namespace fiskai::net::detail
