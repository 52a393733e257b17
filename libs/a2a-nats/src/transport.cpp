#include <fiskai/a2a_nats/transport.hpp>

#include "nats_util.hpp"

#include <fiskai/a2a_nats/error.hpp>

#include <fiskai/a2a/protocol.hpp>
#include <fiskai/gocompat/quote.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/experimental/channel.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <fmt/format.h>

#include <charconv>
#include <map>
#include <mutex>
#include <stdexcept>

namespace fiskai::a2a_nats {

namespace asio = boost::asio;
using namespace asio::experimental::awaitable_operators;

namespace {

using arrival_channel = asio::experimental::channel<void(boost::system::error_code, detail::message_copy)>;

}  // namespace

struct detail::transport_state : std::enable_shared_from_this<transport_state> {
    conns::connection* conn = nullptr;
    asio::any_io_executor executor;
    transport_options options;

    // Serving: one micro service per identity, alive while one of its intakes is.
    mutable std::mutex mutex;
    std::map<std::string, std::weak_ptr<micro::service>, std::less<>> services;

    // Calling: one wildcard subscription on `<inbox>.*`; each request waits on its token.
    // Touched only on the executor.
    std::string inbox;
    std::unique_ptr<async_subscription> replies;
    std::uint64_t next_token = 0;
    std::map<std::string, std::shared_ptr<arrival_channel>, std::less<>> pending;
    std::shared_ptr<bool> alive = std::make_shared<bool>(true);

    void ensure_reply_subscription() {
        if (replies) return;
        inbox = conn->new_inbox();
        std::weak_ptr<transport_state> weak = shared_from_this();
        auto ex = executor;
        // Runs on a nats.c thread: copy, then post. The executor outlives the transport.
        replies = async_subscription::subscribe(conn->native_handle(), inbox + ".*", {}, [weak, ex](natsMsg* msg) {
            auto copy = copy_message(msg);
            asio::post(ex, [weak, copy = std::move(copy)]() mutable {
                const auto self = weak.lock();
                if (!self) return;
                const auto token = copy.subject.substr(copy.subject.rfind('.') + 1);
                const auto it = self->pending.find(token);
                if (it == self->pending.end()) return;  // its caller gave up
                it->second->try_send(boost::system::error_code{}, std::move(copy));
                self->pending.erase(it);
            });
        });
    }

    std::shared_ptr<micro::service> service_for(const std::string& identity) {
        std::lock_guard lock(mutex);
        auto& weak = services[identity];
        if (auto existing = weak.lock()) return existing;
        micro::service_config c;
        c.name = identity;
        c.version = std::string(service_version);
        c.description = std::string(service_description);
        c.queue_group = identity;
        auto created = std::make_shared<micro::service>(*conn, executor, std::move(c));
        weak = created;
        return created;
    }
};

namespace {

// One route of one identity: an endpoint of its micro service.
class nats_intake final : public a2a::intake {
public:
    nats_intake(std::shared_ptr<micro::service> service, std::unique_ptr<micro::endpoint> ep)
        : service_(std::move(service)), endpoint_(std::move(ep)) {}
    ~nats_intake() override {
        endpoint_.reset();  // closes and joins the puller before the service goes
    }

    asio::awaitable<std::optional<a2a::incoming>> next() override {
        auto r = co_await endpoint_->next();
        if (!r) co_return std::nullopt;
        std::string body = r->data();
        auto held = std::make_shared<micro::request>(std::move(*r));
        co_return a2a::incoming{std::move(body), a2a::responder([held](a2a::reply rep) {
                                    if (rep.error) {
                                        held->respond_error(rep.error->code, rep.error->description, rep.body);
                                    } else {
                                        held->respond(rep.body);
                                    }
                                })};
    }

    void close() override { endpoint_->close(); }

private:
    std::shared_ptr<micro::service> service_;
    std::unique_ptr<micro::endpoint> endpoint_;
};

}  // namespace

nats_transport::nats_transport(const conns::provider& nats, asio::any_io_executor executor, transport_options options)
    : state_(std::make_shared<detail::transport_state>()) {
    if (!nats.nats() || !nats.nats()->native_handle()) {
        throw a2a_nats::error(a2a_nats::errc::not_connected,
                              "a2a NATS transport requires a NATS connection but none was provisioned");
    }
    state_->conn = nats.nats();
    state_->executor = std::move(executor);
    state_->options = std::move(options);
}

nats_transport::nats_transport(conns::connection& nats, asio::any_io_executor executor, transport_options options)
    : nats_transport(conns::provider(nats), std::move(executor), std::move(options)) {}

nats_transport::~nats_transport() {
    if (state_->replies) state_->replies->unsubscribe();
}

std::shared_ptr<micro::service> nats_transport::service(std::string_view identity) const {
    std::lock_guard lock(state_->mutex);
    const auto it = state_->services.find(identity);
    return it == state_->services.end() ? nullptr : it->second.lock();
}

std::shared_ptr<micro::service> nats_transport::open_service(const std::string& identity) {
    return state_->service_for(identity);
}

namespace {

// An a2a failure that also says which NATS failure it was.
a2a::error because(a2a::error e, errc cause) {
    e.cause = make_error_code(cause);
    return e;
}

}  // namespace

asio::awaitable<a2a::result<std::unique_ptr<a2a::intake>>> nats_transport::listen(a2a::route r, std::string identity) {
    const auto st = state_;
    const auto subject = a2a::subject(r, identity);
    // The identity is a subject token and the queue group: nothing else may get through.
    if (!a2a::is_valid_identity(identity)) {
        co_return because(a2a::make_error(a2a::errc::transport_failure,
                                          fmt::format("cannot serve {}: the identity must match ^[a-zA-Z0-9_-]+$",
                                                      gocompat::quote(identity))),
                          errc::invalid_name);
    }
    try {
        auto service = st->service_for(identity);
        micro::endpoint_config ep;
        ep.name = std::string(a2a::to_string(r));
        ep.subject = subject;
        auto endpoint = service->add_endpoint(std::move(ep));
        co_return std::unique_ptr<a2a::intake>(std::make_unique<nats_intake>(std::move(service), std::move(endpoint)));
    } catch (const std::exception& e) {
        co_return a2a::make_error(a2a::errc::transport_failure,
                                  fmt::format("serving {}: {}", gocompat::quote(subject), e.what()));
    }
}

asio::awaitable<a2a::result<a2a::reply>> nats_transport::request(a2a::route r, std::string agent, std::string body,
                                                                 std::chrono::steady_clock::duration timeout) {
    const auto st = state_;
    const auto subject = a2a::subject(r, agent);
    if (!a2a::is_valid_identity(agent)) {
        // A `.`, `*`, `>` or space would address other subjects than the agent's.
        co_return because(a2a::make_error(a2a::errc::transport_failure,
                                          fmt::format("requesting {}: the agent name must match ^[a-zA-Z0-9_-]+$",
                                                      gocompat::quote(subject))),
                          errc::invalid_name);
    }
    if (timeout <= std::chrono::steady_clock::duration::zero()) timeout = st->options.timeout;
    if (timeout <= std::chrono::steady_clock::duration::zero()) timeout = std::chrono::seconds(30);

    try {
        st->ensure_reply_subscription();
    } catch (const std::exception& e) {
        co_return a2a::make_error(a2a::errc::transport_failure,
                                  fmt::format("requesting {}: {}", gocompat::quote(subject), e.what()));
    }
    const auto token = std::to_string(++st->next_token);
    const auto reply_to = st->inbox + "." + token;
    auto arrival = std::make_shared<arrival_channel>(st->executor, 1);
    st->pending.emplace(token, arrival);

    const natsStatus s = natsConnection_PublishRequest(st->conn->native_handle(), subject.c_str(), reply_to.c_str(),
                                                       body.data(), static_cast<int>(body.size()));
    if (s != NATS_OK) {
        st->pending.erase(token);
        co_return because(
            a2a::make_error(a2a::errc::transport_failure,
                            fmt::format("requesting {}: {}", gocompat::quote(subject), detail::status_text(s))),
            errc::publish_failed);
    }

    asio::steady_timer deadline(st->executor, timeout);
    auto outcome = co_await (arrival->async_receive(asio::as_tuple(asio::use_awaitable)) ||
                             deadline.async_wait(asio::as_tuple(asio::use_awaitable)));
    st->pending.erase(token);
    if (outcome.index() == 1) {
        co_return because(
            a2a::make_error(a2a::errc::agent_unavailable,
                            fmt::format("no reply on {}: context deadline exceeded", gocompat::quote(subject))),
            errc::timed_out);
    }
    auto [ec, m] = std::get<0>(std::move(outcome));
    if (ec) {
        co_return because(a2a::make_error(a2a::errc::transport_failure,
                                          fmt::format("requesting {}: {}", gocompat::quote(subject), ec.message())),
                          errc::receive_failed);
    }
    if (m.no_responders) {
        co_return because(a2a::make_error(a2a::errc::agent_unavailable,
                                          fmt::format("no reply on {}: nats: no responders available for request",
                                                      gocompat::quote(subject))),
                          errc::no_responders);
    }
    if (!m.error_code.empty() || !m.error.empty()) {
        int code = 0;
        std::from_chars(m.error_code.data(), m.error_code.data() + m.error_code.size(), code);
        co_return a2a::reply{std::move(m.data), a2a::service_error{code, std::move(m.error)}};
    }
    co_return a2a::reply::message(std::move(m.data));
}

}  // namespace fiskai::a2a_nats
