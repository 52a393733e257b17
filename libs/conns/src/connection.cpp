#include <fiskai/conns/connection.hpp>

#include "nkeys.hpp"
#include "sockets.hpp"

#include <nats/nats.h>

#include <openssl/crypto.h>

#include <boost/asio/post.hpp>

#include <fmt/format.h>

#include <atomic>
#include <condition_variable>
#include <fcntl.h>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <sstream>
#include <utility>
#include <vector>

namespace fiskai::conns {

namespace asio = boost::asio;

namespace {

constexpr std::int64_t close_flush_timeout_ms = 250;

std::string status_text(natsStatus s) { return nats_status_text(static_cast<int>(s)); }

// What a failed natsConnection_Connect means for the caller.
errc dial_failure(natsStatus s) {
    switch (s) {
        case NATS_NO_SERVER: return errc::connection_refused;
        case NATS_TIMEOUT: return errc::timed_out;
        case NATS_CONNECTION_AUTH_FAILED:
        case NATS_NOT_PERMITTED: return errc::not_authorized;
        case NATS_SSL_ERROR: return errc::tls_failed;
        default: return errc::connect_failed;
    }
}

void check(natsStatus s, std::string_view what) {
    if (s != NATS_OK) throw connect_error(errc::connect_failed, fmt::format("{}: {}", what, status_text(s)));
}

std::vector<std::string> split_urls(std::string_view urls) {
    std::vector<std::string> out;
    std::size_t start = 0;
    while (start <= urls.size()) {
        auto end = urls.find(',', start);
        if (end == std::string_view::npos) end = urls.size();
        auto part = urls.substr(start, end - start);
        while (!part.empty() && std::isspace(static_cast<unsigned char>(part.front()))) part.remove_prefix(1);
        while (!part.empty() && std::isspace(static_cast<unsigned char>(part.back()))) part.remove_suffix(1);
        if (!part.empty()) {
            std::string url(part);
            if (url.find("://") == std::string::npos) url = "nats://" + url;
            out.push_back(std::move(url));
        }
        start = end + 1;
    }
    return out;
}

std::string read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw context_error(errc::unreadable_file, fmt::format("reading {}: {}", path, std::strerror(errno)));
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

std::string describe(const nats_context& ctx) {
    return ctx.name.empty() ? fmt::format("NATS at {} (no context selected)", ctx.effective_url())
                            : fmt::format("NATS context \"{}\"", ctx.name);
}

// nats.c 3.4.1 opens its sockets without SOCK_CLOEXEC, so every tool the server spawns
// would inherit the NATS connection: a served process that dies would then stay
// "connected" for as long as a tool it started lives, and keep receiving its queue
// group's requests. Marks every socket of this process close-on-exec; called after each
// (re)connect. Sockets are never meant to reach an exec'd tool in this project.
void sockets_close_on_exec() noexcept {
    try {
        detail::for_each_socket([](int fd, ino_t) {
            const int flags = ::fcntl(fd, F_GETFD);
            if (flags >= 0 && !(flags & FD_CLOEXEC)) ::fcntl(fd, F_SETFD, flags | FD_CLOEXEC);
        });
    } catch (...) {
        // Out of memory in a callback nats.c made: the sockets stay as they are.
    }
}

}  // namespace

std::string connection_name(std::string_view identity) { return fmt::format("fisk-ai {}", identity); }

// The context's credentials as the connect callbacks use them. The files are read again at
// every connect, as nats.c's own file options do, so a rotated seed or JWT is picked up on
// reconnect.
//
// We sign the server's nonce ourselves rather than let nats.c do it: nats.c 3.4.1 (Debian
// 12's) base64-encodes the signature with a function that returns nothing when the first
// input byte is zero (fixed upstream in 3.8, nats-io/nats.c#705), so one connect in 256 sent
// CONNECT without a signature and was refused as an authorization violation. A signature
// that starts with a zero byte is refused here instead, before CONNECT is sent; dial()
// connects again (a new connection gets a new nonce), and a reconnect simply tries again.
struct signer {
    enum class source { none, nkey_file, creds_file, inline_jwt };
    source from = source::none;
    std::string path;       // the nkey or creds file
    std::string jwt, seed;  // inline user_jwt and user_seed
    std::atomic<bool> zero_signature{false};

    // The seed to sign with ("" for a JWT-only context), or why there is none.
    struct loaded_seed {
        std::string seed;
        std::string error;
    };
    loaded_seed load_seed() const {
        if (from == source::inline_jwt) return {seed, {}};
        std::ifstream in(path, std::ios::binary);
        if (!in) return {{}, fmt::format("reading {}: {}", path, std::strerror(errno))};
        std::stringstream ss;
        ss << in.rdbuf();
        auto text = ss.str();
        auto found = detail::find_user_seed(text);
        OPENSSL_cleanse(text.data(), text.size());
        if (!found) return {{}, fmt::format("{} holds no user seed (SU...)", path)};
        return {std::move(*found), {}};
    }
};

// What nats.c's callbacks may reach. Shared by the connection and by the one pointer nats.c
// holds (released by the closed callback, the last one nats.c ever makes), so a callback
// never outlives it. Callbacks only post a log line to the executor; the executor is
// detached before the connection is closed from our side.
struct events {
    std::mutex mutex;
    std::optional<asio::any_io_executor> executor;
    gocompat::logger log;
    std::condition_variable closed_cv;
    bool closed = false;
    std::string inbox_prefix;
    signer credentials;

    void emit(gocompat::log_level level, std::string text) {
        std::lock_guard lock(mutex);
        if (!executor || !log) return;
        asio::post(*executor, [log = log, level, text = std::move(text)] { log(level, text); });
    }
};

namespace {

using holder = std::shared_ptr<events>;

events& of(void* closure) { return **static_cast<holder*>(closure); }

void on_disconnected(natsConnection*, void* closure) {
    of(closure).emit(gocompat::log_level::warn, "NATS connection lost; reconnecting");
}

void on_reconnected(natsConnection* nc, void* closure) {
    sockets_close_on_exec();
    char url[256] = {};
    natsConnection_GetConnectedUrl(nc, url, sizeof url);
    of(closure).emit(gocompat::log_level::info, fmt::format("NATS connection restored to {}", url));
}

void on_closed(natsConnection*, void* closure) {
    auto* h = static_cast<holder*>(closure);
    {
        auto& ev = **h;
        ev.emit(gocompat::log_level::debug, "NATS connection closed");
        std::lock_guard lock(ev.mutex);
        ev.closed = true;
        ev.closed_cv.notify_all();
    }
    delete h;
}

void on_error(natsConnection*, natsSubscription*, natsStatus err, void* closure) {
    of(closure).emit(gocompat::log_level::warn, fmt::format("NATS asynchronous error: {}", natsStatus_GetText(err)));
}

natsStatus fail(char** err_text, std::string_view why) {
    *err_text = strdup(std::string(why).c_str());
    return NATS_ERR;
}

natsStatus user_jwt_cb(char** jwt, char** err_text, void* closure) {
    const auto& c = of(closure).credentials;
    std::optional<std::string> found;
    if (c.from == signer::source::inline_jwt) {
        found = c.jwt;
    } else {
        std::ifstream in(c.path, std::ios::binary);
        if (!in) return fail(err_text, fmt::format("reading {}: {}", c.path, std::strerror(errno)));
        std::stringstream ss;
        ss << in.rdbuf();
        found = detail::find_user_jwt(ss.str());
        if (!found) return fail(err_text, fmt::format("{} holds no user JWT", c.path));
    }
    *jwt = strdup(found->c_str());
    return *jwt ? NATS_OK : NATS_NO_MEMORY;
}

natsStatus signature_cb(char** err_text, unsigned char** signature, int* length, const char* nonce, void* closure) {
    auto& c = of(closure).credentials;
    auto loaded = c.load_seed();
    if (!loaded.error.empty()) return fail(err_text, loaded.error);
    auto& seed = loaded.seed;
    if (seed.empty()) {
        // A JWT alone: an empty signature, as the Go client sends.
        *signature = static_cast<unsigned char*>(std::malloc(1));
        *length = 0;
        return *signature ? NATS_OK : NATS_NO_MEMORY;
    }
    const auto signed_nonce = detail::sign(seed, nonce ? nonce : "");
    OPENSSL_cleanse(seed.data(), seed.size());
    if (!signed_nonce) return fail(err_text, "signing the server's nonce failed: the user seed is not valid");
    if ((*signed_nonce)[0] == 0) {
        c.zero_signature = true;
        return fail(err_text,
                    "the nonce's signature starts with a zero byte, which nats.c 3.4 drops; connecting again");
    }
    *signature = static_cast<unsigned char*>(std::malloc(signed_nonce->size()));
    if (!*signature) return NATS_NO_MEMORY;
    std::memcpy(*signature, signed_nonce->data(), signed_nonce->size());
    *length = static_cast<int>(signed_nonce->size());
    return NATS_OK;
}

}  // namespace

struct connection::impl {
    natsConnection* nc = nullptr;
    nats_context ctx;
    std::shared_ptr<events> ev;

    ~impl() {
        if (nc) natsConnection_Destroy(nc);
    }
};

connection::connection(std::unique_ptr<impl> p) noexcept : impl_(std::move(p)) {}

connection::~connection() { close(); }

std::unique_ptr<connection> connection::dial(const nats_context& ctx, const connect_options& o) {
    if (ctx.tls_first) {
        throw context_error(errc::unsupported_setting,
                            fmt::format("{} sets tls_first, which this build's NATS client (nats.c 3.4.1) cannot do; "
                                        "remove it or use a server that accepts TLS after INFO",
                                        describe(ctx)));
    }
    if (!ctx.socks_proxy.empty()) {
        throw context_error(errc::unsupported_setting,
                            fmt::format("{} sets socks_proxy, which this build's NATS client (nats.c 3.4.1) cannot use",
                                        describe(ctx)));
    }
    if (!ctx.nsc.empty()) {
        throw context_error(errc::unsupported_setting,
                            fmt::format("{} sets nsc, which fisk-ai does not run; export the user's credentials "
                                        "file and set creds instead",
                                        describe(ctx)));
    }
    if (ctx.user.empty() && ctx.creds.rfind("op://", 0) == 0) {
        throw context_error(errc::unsupported_setting,
                            fmt::format("{} reads its credentials from 1Password (op://), which fisk-ai does not "
                                        "do; point creds at a credentials file",
                                        describe(ctx)));
    }

    auto ev = std::make_shared<events>();
    ev->executor = o.executor;
    ev->log = o.log;
    ev->inbox_prefix = ctx.inbox_prefix.empty() ? "_INBOX" : ctx.inbox_prefix;
    while (!ev->inbox_prefix.empty() && ev->inbox_prefix.back() == '.') ev->inbox_prefix.pop_back();

    natsOptions* raw = nullptr;
    check(natsOptions_Create(&raw), "creating NATS options");
    std::unique_ptr<natsOptions, decltype(&natsOptions_Destroy)> opts(raw, &natsOptions_Destroy);

    const auto wrap = [&](natsStatus s, std::string_view what) {
        if (s != NATS_OK) {
            throw connect_error(errc::invalid_setting,
                                fmt::format("connecting to {}: {}: {}", describe(ctx), what, status_text(s)));
        }
    };

    const auto urls = split_urls(ctx.effective_url());
    std::vector<const char*> servers;
    bool tls_url = false;
    for (const auto& u : urls) {
        servers.push_back(u.c_str());
        if (u.rfind("tls://", 0) == 0) tls_url = true;
    }
    wrap(natsOptions_SetServers(opts.get(), servers.data(), static_cast<int>(servers.size())), "servers");
    wrap(natsOptions_SetNoRandomize(opts.get(), false), "options");
    if (!o.name.empty()) wrap(natsOptions_SetName(opts.get(), o.name.c_str()), "connection name");

    // Credentials, in the Go client's order of precedence; a token is added to any of them.
    std::optional<std::string> pub;  // an nkey's public key
    if (!ctx.user.empty()) {
        wrap(natsOptions_SetUserInfo(opts.get(), ctx.user.c_str(), ctx.password.c_str()), "user and password");
    } else if (!ctx.creds.empty()) {
        // Checked now for a clear error; read again at each connect (see signer).
        const auto text = read_file(ctx.creds);
        if (!detail::find_user_jwt(text)) {
            throw context_error(errc::malformed_context,
                                fmt::format("{}: credentials file {} holds no user JWT", describe(ctx), ctx.creds));
        }
        if (!detail::find_user_seed(text)) {
            throw context_error(
                errc::malformed_context,
                fmt::format("{}: credentials file {} holds no valid user seed (SU...)", describe(ctx), ctx.creds));
        }
        ev->credentials.from = signer::source::creds_file;
        ev->credentials.path = ctx.creds;
    } else if (!ctx.nkey.empty()) {
        const auto seed = detail::find_user_seed(read_file(ctx.nkey));
        pub = seed ? detail::user_public_key(*seed) : std::nullopt;
        if (!pub) {
            throw context_error(
                errc::malformed_context,
                fmt::format("{}: nkey file {} holds no valid user seed (SU...)", describe(ctx), ctx.nkey));
        }
        ev->credentials.from = signer::source::nkey_file;
        ev->credentials.path = ctx.nkey;
    } else if (!ctx.user_jwt.empty()) {
        ev->credentials.from = signer::source::inline_jwt;
        ev->credentials.jwt = ctx.user_jwt;
        ev->credentials.seed = ctx.user_seed;
    }
    if (!ctx.token.empty()) wrap(natsOptions_SetToken(opts.get(), ctx.token.c_str()), "token");

    const bool tls = tls_url || (!ctx.cert.empty() && !ctx.key.empty()) || !ctx.ca.empty();
    if (tls) wrap(natsOptions_SetSecure(opts.get(), true), "TLS");
    if (!ctx.cert.empty() && !ctx.key.empty()) {
        wrap(natsOptions_LoadCertificatesChain(opts.get(), ctx.cert.c_str(), ctx.key.c_str()),
             fmt::format("client certificate {} and key {}", ctx.cert, ctx.key));
    }
    if (!ctx.ca.empty())
        wrap(natsOptions_LoadCATrustedCertificates(opts.get(), ctx.ca.c_str()), fmt::format("CA {}", ctx.ca));
    if (!ctx.inbox_prefix.empty()) {
        wrap(natsOptions_SetCustomInboxPrefix(opts.get(), ev->inbox_prefix.c_str()), "inbox prefix");
    }

    // The reconnect policy (C.4).
    wrap(natsOptions_SetAllowReconnect(opts.get(), o.allow_reconnect), "reconnect policy");
    wrap(natsOptions_SetMaxReconnect(opts.get(), o.max_reconnect), "reconnect policy");
    wrap(natsOptions_SetReconnectWait(opts.get(), o.reconnect_wait.count()), "reconnect policy");
    wrap(natsOptions_SetReconnectJitter(opts.get(), o.reconnect_jitter.count(), o.reconnect_jitter_tls.count()),
         "reconnect policy");
    wrap(natsOptions_SetTimeout(opts.get(), o.connect_timeout.count()), "connect timeout");
    wrap(natsOptions_SetPingInterval(opts.get(), o.ping_interval.count()), "ping interval");
    wrap(natsOptions_SetMaxPingsOut(opts.get(), o.max_pings_out), "ping policy");
    wrap(natsOptions_SetReconnectBufSize(opts.get(), o.reconnect_buffer_bytes), "reconnect buffer");
    wrap(natsOptions_SetSendAsap(opts.get(), o.send_asap), "send policy");
    wrap(natsOptions_UseGlobalMessageDelivery(opts.get(), o.shared_delivery), "delivery policy");

    // nats.c keeps this pointer for the connection's lifetime; on_closed deletes it.
    auto* closure = new holder(ev);
    bool handed_over = false;
    try {
        wrap(natsOptions_SetDisconnectedCB(opts.get(), on_disconnected, closure), "callbacks");
        wrap(natsOptions_SetReconnectedCB(opts.get(), on_reconnected, closure), "callbacks");
        wrap(natsOptions_SetClosedCB(opts.get(), on_closed, closure), "callbacks");
        wrap(natsOptions_SetErrorHandler(opts.get(), on_error, closure), "callbacks");
        using source = signer::source;
        const auto from = ev->credentials.from;
        if (from == source::nkey_file) {
            wrap(natsOptions_SetNKey(opts.get(), pub->c_str(), signature_cb, closure),
                 fmt::format("nkey {}", ctx.nkey));
        } else if (from == source::creds_file || from == source::inline_jwt) {
            wrap(natsOptions_SetUserCredentialsCallbacks(opts.get(), user_jwt_cb, closure, signature_cb, closure),
                 from == source::creds_file ? fmt::format("credentials file {}", ctx.creds) : "user_jwt");
        }
        natsConnection* nc = nullptr;
        natsStatus s = NATS_OK;
        bool went_silent = false;
        {
            detail::dial_watchdog watchdog(detail::server_ports(urls),
                                           o.connect_timeout + std::chrono::milliseconds(500));
            // A signature refused for its leading zero byte costs one more connect (see
            // signer); eight in a row happen once in 2^64 dials.
            for (int attempt = 0; attempt < 8; ++attempt) {
                ev->credentials.zero_signature = false;
                s = natsConnection_Connect(&nc, opts.get());
                if (s == NATS_OK || !ev->credentials.zero_signature) break;
            }
            went_silent = watchdog.fired();
        }
        if (s != NATS_OK && went_silent) {
            throw connect_error(errc::timed_out,
                                fmt::format("connecting to {}: the server sent its greeting (INFO) but did not answer "
                                            "the connect within {} ms",
                                            describe(ctx), o.connect_timeout.count()));
        }
        if (s != NATS_OK) {
            throw connect_error(dial_failure(s), fmt::format("connecting to {}: {}", describe(ctx), status_text(s)));
        }
        handed_over = true;
        sockets_close_on_exec();
        auto p = std::make_unique<impl>();
        p->nc = nc;
        p->ctx = ctx;
        p->ev = std::move(ev);
        return std::unique_ptr<connection>(new connection(std::move(p)));
    } catch (...) {
        if (!handed_over) delete closure;
        throw;
    }
}

std::unique_ptr<connection> connection::dial_url(std::string_view urls, const connect_options& options) {
    nats_context ctx;
    ctx.url = std::string(urls);
    return dial(ctx, options);
}

natsConnection* connection::native_handle() const noexcept { return impl_ ? impl_->nc : nullptr; }

const nats_context& connection::context() const noexcept { return impl_->ctx; }

std::string connection::new_nuid() {
    natsInbox* inbox = nullptr;
    if (natsInbox_Create(&inbox) != NATS_OK) throw std::bad_alloc();
    std::string text(inbox);  // `_INBOX.<nuid>`
    natsInbox_Destroy(inbox);
    return text.substr(text.find('.') + 1);
}

std::string connection::new_inbox() const { return impl_->ev->inbox_prefix + "." + new_nuid(); }

std::string connection::connected_url() const {
    char url[256] = {};
    if (!impl_->nc || natsConnection_GetConnectedUrl(impl_->nc, url, sizeof url) != NATS_OK) return {};
    return url;
}

bool connection::is_connected() const noexcept {
    return impl_->nc && natsConnection_Status(impl_->nc) == NATS_CONN_STATUS_CONNECTED;
}

bool connection::is_closed() const noexcept { return !impl_->nc || natsConnection_IsClosed(impl_->nc); }

std::int64_t connection::max_payload() const noexcept {
    return impl_->nc && is_connected() ? natsConnection_GetMaxPayload(impl_->nc) : 0;
}

bool connection::drain(std::chrono::milliseconds timeout) {
    if (!impl_->nc) return true;
    {
        std::lock_guard lock(impl_->ev->mutex);
        impl_->ev->executor.reset();  // nothing is posted to an executor that may be gone
    }
    bool in_time = true;
    if (natsConnection_DrainTimeout(impl_->nc, timeout.count()) == NATS_OK) {
        std::unique_lock lock(impl_->ev->mutex);
        in_time = impl_->ev->closed_cv.wait_for(lock, timeout + std::chrono::milliseconds(500),
                                                [&] { return impl_->ev->closed; });
    }
    close();
    return in_time;
}

void connection::close() noexcept {
    if (!impl_ || !impl_->nc) return;
    {
        std::lock_guard lock(impl_->ev->mutex);
        impl_->ev->executor.reset();
    }
    // One round trip first, so a message already on its way is read whole: nats.c 3.4.1
    // frees only its parser's built-in buffers when the read loop ends, and leaks the heap
    // buffer of a message it was part way through (up to the message's size). The broker
    // answers the PING after everything it sent before, so once the PONG is in, every message
    // sent before it processed our unsubscribes has been parsed. Bounded: a stalled broker
    // delays a close by at most the limit.
    if (natsConnection_Status(impl_->nc) == NATS_CONN_STATUS_CONNECTED) {
        natsConnection_FlushTimeout(impl_->nc, close_flush_timeout_ms);
    }
    natsConnection_Close(impl_->nc);
    natsConnection_Destroy(impl_->nc);
    impl_->nc = nullptr;
}

// ---- provider ----

provider provider::dial(std::string_view context_name, std::string_view identity, connect_options options,
                        const context_environment& env) {
    const auto ctx = load_context(context_name, env);
    if (options.name.empty()) options.name = connection_name(identity);
    return owning(connection::dial(ctx, options));
}

provider provider::owning(std::unique_ptr<connection> c) noexcept {
    provider p;
    p.conn_ = c.get();
    p.owned_ = std::move(c);
    return p;
}

provider::provider(provider&& other) noexcept
    : conn_(std::exchange(other.conn_, nullptr)), owned_(std::move(other.owned_)) {}

provider& provider::operator=(provider&& other) noexcept {
    if (this != &other) {
        close();
        conn_ = std::exchange(other.conn_, nullptr);
        owned_ = std::move(other.owned_);
    }
    return *this;
}

provider::~provider() { close(); }

void provider::close() noexcept {
    owned_.reset();  // closes a connection this provider dialled
    conn_ = nullptr;
}

std::string nats_status_text(int status) {
    const auto s = static_cast<natsStatus>(status);
    std::string text = natsStatus_GetText(s);
    natsStatus last = NATS_OK;
    // The detail reads `(file.c:line): <text>`; worth adding only when it says more.
    if (const char* detail = nats_GetLastError(&last);
        detail && *detail && std::string_view(detail).find(text) == std::string_view::npos) {
        text += fmt::format(" ({})", detail);
    }
    return text;
}

}  // namespace fiskai::conns
