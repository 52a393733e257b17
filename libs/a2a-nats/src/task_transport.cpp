#include "nats_util.hpp"

#include <fiskai/conns/connection.hpp>
#include <fiskai/a2a/validator.hpp>
#include <fiskai/a2a_nats/error.hpp>
#include <fiskai/a2a_nats/task_transport.hpp>
#include <fiskai/gocompat/quote.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/experimental/channel.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <fmt/format.h>

#include <condition_variable>
#include <mutex>
#include <thread>

namespace fiskai::a2a_nats {

namespace asio = boost::asio;
using std::chrono::steady_clock;

// ---- inbound_filter ----

inbound_filter::verdict inbound_filter::receive(a2a::task_route route, std::string_view body) {
    verdict out;
    auto m = a2a::default_validator().check(body);
    if (!m) {
        out.why = m.error().message;
        return out;
    }
    const auto protocol = a2a::protocol_of(*m);
    const bool fits = route == a2a::task_route::cancel ? std::holds_alternative<a2a::task_cancel>(*m)
                                                       : (std::holds_alternative<a2a::task_answer>(*m) ||
                                                          std::holds_alternative<a2a::task_keepalive>(*m));
    if (!fits) {
        out.why =
            fmt::format("protocol mismatch: {} does not travel on the {} subject", protocol, a2a::to_string(route));
        return out;
    }
    const auto& h = a2a::header_of(*m);
    if (h.request != task_) {
        out.why = fmt::format("message for task {} arrived on the subjects of task {}",
                              gocompat::quote_bounded(h.request), gocompat::quote(task_));
        return out;
    }
    if (h.sender.name != sender_) {
        out.why = fmt::format("message from {}, not from the task's sender {}", gocompat::quote_bounded(h.sender.name),
                              gocompat::quote(sender_));
        return out;
    }
    const auto arrival = sequence_.receive(h.sequence);
    if (arrival.kind == a2a::inbound_sequencer::verdict::duplicate) {
        out.why = fmt::format("duplicate message {} of task {}", h.sequence, task_);
        return out;
    }
    if (arrival.kind == a2a::inbound_sequencer::verdict::gap)
        out.warning = a2a::gap_text(task_, sender_, arrival.expected, h.sequence);
    out.accepted = std::move(*m);
    return out;
}

// ---- state ----

using inbound_channel = asio::experimental::channel<void(boost::system::error_code, inbound)>;

struct detail::task_transport_state : std::enable_shared_from_this<task_transport_state> {
    conns::connection* conn = nullptr;
    asio::any_io_executor executor;
    gocompat::logger log;
    asio::thread_pool blocking{1};  // flushes: nats.c blocks the calling thread

    std::string subject;
    natsSubscription* sub = nullptr;
    // serve_tools on: the intake is this endpoint instead of `sub`. Declared in this order
    // so that the endpoint closes before the service it belongs to goes.
    std::shared_ptr<micro::service> service;
    std::unique_ptr<micro::endpoint> endpoint;
    inbound_channel channel;
    std::thread puller;

    std::mutex mutex;
    std::condition_variable wake;
    bool wanted = false;
    bool closing = false;
    bool stopping = false;  // the transport is going away: the puller returns at once

    task_transport::refuser refuse;  // executor only

    task_transport_state(conns::connection& c, asio::any_io_executor ex, gocompat::logger l)
        : conn(&c), executor(std::move(ex)), log(std::move(l)), channel(executor, 1) {}
    ~task_transport_state() {
        conns::retire_subscription(sub);  // destroyed late: see there
        blocking.join();
    }

    // On the executor: a request nobody will run is refused.
    void refuse_one(inbound m) {
        if (m.reply.empty()) return;
        if (refuse) refuse(std::move(m));
    }

    void post_refusal(a2a_nats::detail::message_copy m) {
        asio::post(executor, [self = shared_from_this(), m = std::move(m)]() mutable {
            self->refuse_one({std::move(m.subject), std::move(m.reply), std::move(m.data)});
        });
    }

    // Amendment 16: keep reading the draining subscription until nats.c says it is invalid,
    // refusing each request. Bounded, so a broker that never confirms cannot hold it up.
    void refuse_pending() {
        const auto until = steady_clock::now() + std::chrono::seconds(5);
        while (steady_clock::now() < until) {
            {
                std::lock_guard lock(mutex);
                if (stopping) return;
            }
            natsMsg* msg = nullptr;
            const natsStatus s = natsSubscription_NextMsg(&msg, sub, 100);
            if (s == NATS_TIMEOUT) {
                if (!natsSubscription_IsValid(sub)) return;
                continue;
            }
            if (s == NATS_SLOW_CONSUMER) continue;
            if (s != NATS_OK) return;
            auto copy = a2a_nats::detail::copy_message(msg);
            natsMsg_Destroy(msg);
            post_refusal(std::move(copy));
        }
    }

    void pull() {
        for (;;) {
            {
                std::unique_lock lock(mutex);
                wake.wait(lock, [&] { return wanted || closing || stopping; });
                if (stopping) return;
            }
            if (closing) {
                refuse_pending();
                return;
            }
            natsMsg* msg = nullptr;
            const natsStatus s = natsSubscription_NextMsg(&msg, sub, 250);
            if (s == NATS_TIMEOUT || s == NATS_SLOW_CONSUMER) continue;
            if (s != NATS_OK) {
                // Closed under us (connection gone): nothing more will come.
                asio::post(executor, [self = shared_from_this()] { self->channel.close(); });
                return;
            }
            auto copy = a2a_nats::detail::copy_message(msg);
            natsMsg_Destroy(msg);
            if (copy.reply.empty()) {
                // Nobody could be answered: not a task (and never a subject from a body).
                continue;
            }
            {
                std::lock_guard lock(mutex);
                wanted = false;
            }
            asio::post(executor, [self = shared_from_this(), copy = std::move(copy)]() mutable {
                inbound m{std::move(copy.subject), std::move(copy.reply), std::move(copy.data)};
                if (!self->channel.is_open() || !self->channel.try_send(boost::system::error_code{}, m))
                    self->refuse_one(std::move(m));
            });
        }
    }
};

struct detail::task_subscriptions_state {
    task_transport::task_handler on_message;
    bool closed = false;
    std::vector<std::unique_ptr<a2a_nats::detail::async_subscription>> subs;
    // A task's cancel and elicit traffic is a cancel, answers and a keepalive every few
    // seconds: far below this bound, which only a flood reaches.
    std::shared_ptr<a2a_nats::detail::delivery_budget> budget =
        std::make_shared<a2a_nats::detail::delivery_budget>(64, std::size_t{4} << 20);
    gocompat::logger log;
    std::string task;

    void report_dropped(std::uint64_t n) const {
        log.warn(
            "a2a: dropped messages to a task's cancel and elicit subjects: they came faster than they could be "
            "read",
            {{"task", task}, {"dropped", std::to_string(n)}});
    }
};

// ---- task_subscriptions ----

task_subscriptions::~task_subscriptions() { close(); }

void task_subscriptions::close() noexcept {
    if (!state_) return;
    state_->closed = true;
    for (auto& s : state_->subs) s->unsubscribe();
    state_->subs.clear();
    state_->on_message = nullptr;
}

// ---- task_transport ----

task_transport::task_transport(conns::connection& nats, asio::any_io_executor executor, gocompat::logger log) {
    if (!nats.native_handle())
        throw error(errc::not_connected, "a2a task transport requires a NATS connection but none was provisioned");
    state_ = std::make_shared<detail::task_transport_state>(nats, std::move(executor), std::move(log));
}

task_transport::~task_transport() {
    {
        std::lock_guard lock(state_->mutex);
        state_->stopping = true;
    }
    state_->wake.notify_all();
    if (state_->sub) natsSubscription_Unsubscribe(state_->sub);
    if (state_->puller.joinable()) state_->puller.join();
    state_->channel.close();
    if (state_->endpoint) state_->endpoint->close();
}

void task_transport::open_intake(std::string_view identity) {
    auto subject = a2a::task_subject(a2a::task_route::request, identity);
    if (!subject) throw error(errc::invalid_name, subject.error().message);
    if (state_->sub) throw error(errc::subscribe_failed, "the task intake is already open");
    const std::string queue(identity);
    natsConnection* nc = state_->conn->native_handle();
    const natsStatus s = natsConnection_QueueSubscribeSync(&state_->sub, nc, subject->c_str(), queue.c_str());
    if (s != NATS_OK) {
        state_->sub = nullptr;
        throw error(errc::subscribe_failed,
                    fmt::format("subscribing to \"{}\": {}", *subject, a2a_nats::detail::status_text(s)));
    }
    // One round trip, so the server routes the subject here when this returns.
    natsConnection_FlushTimeout(nc, 2000);
    state_->subject = std::move(*subject);
    auto st = state_;
    state_->puller = std::thread([st] { st->pull(); });
}

void task_transport::open_intake(std::shared_ptr<micro::service> service, std::string_view identity) {
    if (!service)
        throw error(errc::not_connected, "the a2a request endpoint needs the micro service serving the tools");
    auto subject = a2a::task_subject(a2a::task_route::request, identity);
    if (!subject) throw error(errc::invalid_name, subject.error().message);
    if (state_->sub || state_->endpoint) throw error(errc::subscribe_failed, "the task intake is already open");
    micro::endpoint_config ep;
    ep.name = "request";
    ep.subject = *subject;
    ep.queue_group = std::string(identity);
    // add_endpoint waits a round trip: the server routes the subject here on return.
    state_->endpoint = service->add_endpoint(std::move(ep));
    state_->service = std::move(service);
    state_->subject = std::move(*subject);
}

const std::string& task_transport::intake_subject() const noexcept { return state_->subject; }

asio::awaitable<std::optional<inbound>> task_transport::next_request() {
    auto st = state_;
    if (st->endpoint) {
        {
            std::lock_guard lock(st->mutex);
            if (st->closing) co_return std::nullopt;
        }
        auto r = co_await st->endpoint->next();
        if (!r) co_return std::nullopt;
        inbound m{r->subject(), r->reply_to(), r->data()};
        r->hand_over();
        co_return std::optional<inbound>(std::move(m));
    }
    std::optional<inbound> ready;
    st->channel.try_receive([&](boost::system::error_code ec, inbound m) {
        if (!ec) ready.emplace(std::move(m));
    });
    if (ready) co_return ready;
    {
        std::lock_guard lock(st->mutex);
        if (st->closing || !st->sub) co_return std::nullopt;
        st->wanted = true;
    }
    st->wake.notify_one();
    auto [ec, m] = co_await st->channel.async_receive(asio::as_tuple(asio::use_awaitable));
    if (ec) co_return std::nullopt;
    co_return std::optional<inbound>(std::move(m));
}

std::size_t task_transport::pending() const noexcept {
    if (state_->endpoint) return state_->endpoint->pending();
    int msgs = 0;
    int bytes = 0;
    if (!state_->sub || natsSubscription_GetPending(state_->sub, &msgs, &bytes) != NATS_OK || msgs < 0) return 0;
    return static_cast<std::size_t>(msgs);
}

void task_transport::drain_intake(refuser refuse) {
    auto& st = *state_;
    {
        std::lock_guard lock(st.mutex);
        if (st.closing) return;
        st.closing = true;
    }
    st.refuse = std::move(refuse);
    // A request already handed to the channel but not taken is refused too.
    st.channel.try_receive([&](boost::system::error_code ec, inbound m) {
        if (!ec) st.refuse_one(std::move(m));
    });
    st.channel.close();
    if (st.endpoint) {
        std::weak_ptr<detail::task_transport_state> weak = state_;
        st.endpoint->close([weak](micro::request r) {
            auto self = weak.lock();
            if (!self) return;  // r answers 503 as it goes
            inbound m{r.subject(), r.reply_to(), r.data()};
            r.hand_over();
            self->refuse_one(std::move(m));
        });
    }
    if (st.sub && natsSubscription_Drain(st.sub) != NATS_OK) natsSubscription_Unsubscribe(st.sub);
    st.wake.notify_all();
}

asio::awaitable<a2a::result<std::unique_ptr<task_subscriptions>>> task_transport::open_task(
    std::string identity, std::string id, task_handler on_message, std::chrono::milliseconds flush_timeout) {
    auto cancel_subject = a2a::task_subject(a2a::task_route::cancel, identity, id);
    if (!cancel_subject) co_return cancel_subject.error();
    auto elicit_subject = a2a::task_subject(a2a::task_route::elicit, identity, id);
    if (!elicit_subject) co_return elicit_subject.error();

    auto st = state_;
    std::unique_ptr<task_subscriptions> out(new task_subscriptions);
    out->state_ = std::make_shared<detail::task_subscriptions_state>();
    out->state_->on_message = std::move(on_message);
    out->state_->log = st->log;
    out->state_->task = id;
    std::weak_ptr<detail::task_subscriptions_state> weak = out->state_;
    natsConnection* nc = st->conn->native_handle();
    try {
        for (auto [route, subject] : {std::pair{a2a::task_route::cancel, &*cancel_subject},
                                      std::pair{a2a::task_route::elicit, &*elicit_subject}}) {
            auto handler = [executor = st->executor, weak, route = route, budget = out->state_->budget](natsMsg* msg) {
                const char* d = natsMsg_GetData(msg);
                const auto size = d ? static_cast<std::size_t>(natsMsg_GetDataLength(msg)) : 0;
                if (!budget->reserve(size)) return;
                asio::post(executor, [weak, route, budget, body = std::string(d ? d : "", size)]() mutable {
                    budget->release(body.size());
                    auto s = weak.lock();
                    if (!s || s->closed || !s->on_message) return;
                    if (const auto dropped = budget->take_dropped()) s->report_dropped(dropped);
                    s->on_message(route, std::move(body));
                });
            };
            out->state_->subs.push_back(a2a_nats::detail::async_subscription::subscribe(nc, *subject, "", handler));
        }
    } catch (const std::exception& e) {
        co_return a2a::make_error(a2a::errc::transport_failure, e.what());
    }
    // The flush blocks the calling thread for a round trip: run it off the io_context.
    auto flush = [nc, timeout = flush_timeout.count()]() -> asio::awaitable<int> {
        co_return static_cast<int>(natsConnection_FlushTimeout(nc, timeout));
    };
    const int s = co_await asio::co_spawn(st->blocking, flush, asio::use_awaitable);
    if (s != NATS_OK)
        co_return a2a::make_error(a2a::errc::transport_failure,
                                  fmt::format("flush: {}", a2a_nats::detail::status_text(static_cast<natsStatus>(s))));
    co_return out;
}

bool task_transport::publish(std::string_view subject, std::string_view data) {
    natsConnection* nc = state_->conn->native_handle();
    if (!nc || subject.empty()) return false;
    const std::string subj(subject);
    return natsConnection_Publish(nc, subj.c_str(), data.data(), static_cast<int>(data.size())) == NATS_OK;
}

bool task_transport::publish_error(std::string_view subject, int code, std::string_view description) {
    natsConnection* nc = state_->conn->native_handle();
    if (!nc || subject.empty()) return false;
    std::string text(description);
    for (char& c : text)
        if (c == '\n' || c == '\r') c = ' ';
    const std::string subj(subject);
    natsMsg* msg = nullptr;
    if (natsMsg_Create(&msg, subj.c_str(), nullptr, nullptr, 0) != NATS_OK) return false;
    const auto code_text = std::to_string(code);
    const bool ok = natsMsgHeader_Set(msg, "Nats-Service-Error", text.c_str()) == NATS_OK &&
                    natsMsgHeader_Set(msg, "Nats-Service-Error-Code", code_text.c_str()) == NATS_OK &&
                    natsConnection_PublishMsg(nc, msg) == NATS_OK;
    natsMsg_Destroy(msg);
    return ok;
}

}  // namespace fiskai::a2a_nats
