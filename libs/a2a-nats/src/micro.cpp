#include <fiskai/conns/connection.hpp>
#include <fiskai/a2a_nats/micro.hpp>

#include "nats_util.hpp"

#include <fiskai/gocompat/name.hpp>
#include <fiskai/gocompat/time.hpp>
#include <fiskai/a2a_nats/error.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/experimental/channel.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/serialize.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <condition_variable>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

namespace fiskai::a2a_nats::micro {

namespace asio = boost::asio;
using std::chrono::steady_clock;

namespace {

// A subject a subscription may use: non-empty tokens of printable characters.
bool valid_subject(std::string_view s) {
    if (s.empty() || s.front() == '.' || s.back() == '.' || s.find("..") != std::string_view::npos) return false;
    return std::all_of(s.begin(), s.end(), [](char c) { return static_cast<unsigned char>(c) > 0x20 && c != 0x7F; });
}

std::string one_line(std::string_view s) {
    std::string out(s);
    std::replace_if(
        out.begin(), out.end(), [](char c) { return c == '\n' || c == '\r'; }, ' ');
    const auto b = out.find_first_not_of(' ');
    if (b == std::string::npos) return {};
    return out.substr(b, out.find_last_not_of(' ') - b + 1);
}

boost::json::object to_json(const metadata& m) {
    boost::json::object o;
    for (const auto& [k, v] : m) o[k] = v;
    return o;
}

using request_channel = asio::experimental::channel<void(boost::system::error_code, request)>;

}  // namespace

// ---- shared state ----

struct detail::service_state {
    conns::connection* conn = nullptr;
    asio::any_io_executor executor;
    service_config config;
    std::string id;
    std::string started;

    mutable std::mutex mutex;
    bool stopped = false;
    std::vector<std::weak_ptr<endpoint_state>> endpoints;  // open endpoints, in the order they were added
    std::vector<std::unique_ptr<a2a_nats::detail::async_subscription>> verbs;

    // Publishes unless stopped; the lock keeps stop() from closing in between.
    bool publish(const std::string& reply, std::string_view data,
                 const std::optional<std::pair<int, std::string>>& error) {
        std::lock_guard lock(mutex);
        if (stopped || reply.empty()) return false;
        natsConnection* nc = conn->native_handle();
        if (!nc) return false;
        if (!error) {
            return natsConnection_Publish(nc, reply.c_str(), data.data(), static_cast<int>(data.size())) == NATS_OK;
        }
        natsMsg* msg = nullptr;
        if (natsMsg_Create(&msg, reply.c_str(), nullptr, data.data(), static_cast<int>(data.size())) != NATS_OK)
            return false;
        const auto code = std::to_string(error->first);
        bool ok = natsMsgHeader_Set(msg, std::string(error_header).c_str(), error->second.c_str()) == NATS_OK &&
                  natsMsgHeader_Set(msg, std::string(error_code_header).c_str(), code.c_str()) == NATS_OK &&
                  natsConnection_PublishMsg(nc, msg) == NATS_OK;
        natsMsg_Destroy(msg);
        return ok;
    }

    std::string answer(std::string_view verb) const;
};

struct detail::endpoint_state {
    std::shared_ptr<service_state> service;
    endpoint_config config;
    std::string queue;
    natsSubscription* sub = nullptr;
    request_channel channel;

    std::mutex mutex;
    std::condition_variable wake;
    bool wanted = false;  // next() is waiting for a message
    bool closing = false;
    endpoint_stats stats;
    std::function<void(request)> refuser;  // set before closing; called on the executor

    endpoint_state(std::shared_ptr<service_state> s, endpoint_config c, std::string q)
        : service(std::move(s)), config(std::move(c)), queue(std::move(q)), channel(service->executor, 1) {}
    ~endpoint_state() {
        conns::retire_subscription(sub);  // destroyed late: see there
    }

    std::size_t pending() const noexcept {
        int msgs = 0;
        int bytes = 0;
        if (!sub || natsSubscription_GetPending(sub, &msgs, &bytes) != NATS_OK || msgs < 0) return 0;
        return static_cast<std::size_t>(msgs);
    }

    void record(std::chrono::nanoseconds took, const std::optional<std::pair<int, std::string>>& error) {
        std::lock_guard lock(mutex);
        ++stats.num_requests;
        stats.processing_time += took;
        if (error) {
            ++stats.num_errors;
            stats.last_error = fmt::format("\"{}\": {}", config.subject, error->second);
        }
    }

    // Stops intake: interest is withdrawn with a drain (not an unsubscribe, which would
    // drop what nats.c already holds), the puller answers every request delivered before
    // the drain took effect, the endpoint leaves INFO and STATS, and a waiting next() gets
    // nullopt.
    static void shutdown(const std::shared_ptr<endpoint_state>& self) noexcept {
        {
            std::lock_guard lock(self->mutex);
            if (self->closing) return;
            self->closing = true;
        }
        self->wake.notify_all();
        // Wakes a puller blocked in NextMsg once the server has confirmed the drain.
        if (natsSubscription_Drain(self->sub) != NATS_OK) natsSubscription_Unsubscribe(self->sub);
        {
            std::lock_guard lock(self->service->mutex);
            std::erase_if(self->service->endpoints, [&](const std::weak_ptr<endpoint_state>& w) {
                return w.expired() || (!w.owner_before(self) && !self.owner_before(w));
            });
        }
        asio::post(self->service->executor, [self] { self->channel.close(); });
    }

    static request make(const std::shared_ptr<endpoint_state>& self, a2a_nats::detail::message_copy m) {
        return request(self, std::move(m.subject), std::move(m.reply), std::move(m.data));
    }

    // Requests that reached this process before the drain took effect: nobody will run
    // them, so each is refused now rather than left to its caller's timeout. Bounded: a
    // broker that never confirms the drain cannot hold shutdown up.
    static void refuse_pending(const std::shared_ptr<endpoint_state>& self) {
        const auto until = steady_clock::now() + std::chrono::seconds(5);
        while (steady_clock::now() < until) {
            natsMsg* msg = nullptr;
            const natsStatus s = natsSubscription_NextMsg(&msg, self->sub, 250);
            if (s == NATS_TIMEOUT) {
                if (!natsSubscription_IsValid(self->sub)) return;  // drained: nothing more will come
                continue;
            }
            if (s == NATS_SLOW_CONSUMER) continue;
            if (s != NATS_OK) return;
            auto copy = a2a_nats::detail::copy_message(msg);
            natsMsg_Destroy(msg);
            refuse(self, std::move(copy));
        }
    }

    static void refuse(const std::shared_ptr<endpoint_state>& self, a2a_nats::detail::message_copy m) {
        if (m.reply.empty()) return;
        if (self->refuser) {
            asio::post(self->service->executor, [self, m = std::move(m)]() mutable {
                auto r = make(self, std::move(m));
                self->refuser(std::move(r));
            });
            return;
        }
        make(self, std::move(m)).respond_error(503, "the service is shutting down; send the request again");
    }

    // The puller: takes one message from nats.c each time next() wants one. Runs on its own
    // thread so that a consumer that stops asking leaves the messages in nats.c's bounded
    // pending queue.
    static void pull(const std::shared_ptr<endpoint_state>& self) {
        for (;;) {
            {
                std::unique_lock lock(self->mutex);
                self->wake.wait(lock, [&] { return self->wanted || self->closing; });
            }
            if (self->closing) {
                refuse_pending(self);
                return;
            }
            natsMsg* msg = nullptr;
            const natsStatus s = natsSubscription_NextMsg(&msg, self->sub, 60'000);
            if (s == NATS_TIMEOUT || s == NATS_SLOW_CONSUMER) continue;  // slow consumer: nats.c dropped some
            if (s != NATS_OK) {
                // Unsubscribed or the connection closed: nothing more will come.
                asio::post(self->service->executor, [self] { self->channel.close(); });
                return;
            }
            auto copy = a2a_nats::detail::copy_message(msg);
            natsMsg_Destroy(msg);
            if (copy.reply.empty()) {
                // Nobody can be answered: not handed on (a2a.md 8.6), counted as an error.
                self->record(std::chrono::nanoseconds(0),
                             std::make_pair(400, std::string("request has no reply subject")));
                continue;
            }
            {
                std::lock_guard lock(self->mutex);
                self->wanted = false;
            }
            asio::post(self->service->executor, [self, copy = std::move(copy)]() mutable {
                // Closed meanwhile (the channel closes on this executor only): refused.
                if (!self->channel.is_open()) {
                    refuse(self, std::move(copy));
                    return;
                }
                self->channel.try_send(boost::system::error_code{}, make(self, std::move(copy)));
            });
        }
    }
};

// ---- request ----

request::request(std::shared_ptr<detail::endpoint_state> ep, std::string subject, std::string reply, std::string data)
    : endpoint_(std::move(ep)),
      subject_(std::move(subject)),
      reply_(std::move(reply)),
      data_(std::move(data)),
      received_(steady_clock::now()) {}

request::request(request&& other) noexcept
    : endpoint_(std::move(other.endpoint_)),
      subject_(std::move(other.subject_)),
      reply_(std::move(other.reply_)),
      data_(std::move(other.data_)),
      received_(other.received_) {}

request& request::operator=(request&& other) noexcept {
    if (this != &other) {
        if (endpoint_) finish(std::make_pair(500, std::string("no reply was produced")), {});
        endpoint_ = std::move(other.endpoint_);
        subject_ = std::move(other.subject_);
        reply_ = std::move(other.reply_);
        data_ = std::move(other.data_);
        received_ = other.received_;
    }
    return *this;
}

request::~request() {
    if (endpoint_) finish(std::make_pair(500, std::string("no reply was produced")), {});
}

bool request::finish(std::optional<std::pair<int, std::string>> error, std::string_view data) {
    if (!endpoint_) return false;
    auto ep = std::move(endpoint_);
    endpoint_.reset();
    if (error) error->second = one_line(error->second);
    ep->record(std::chrono::duration_cast<std::chrono::nanoseconds>(steady_clock::now() - received_), error);
    return ep->service->publish(reply_, data, error);
}

bool request::respond(std::string_view data) { return finish(std::nullopt, data); }

void request::hand_over() noexcept {
    if (!endpoint_) return;
    auto ep = std::move(endpoint_);
    endpoint_.reset();
    ep->record(std::chrono::duration_cast<std::chrono::nanoseconds>(steady_clock::now() - received_), std::nullopt);
}

bool request::respond_error(int code, std::string_view description, std::string_view data) {
    return finish(std::make_pair(code, std::string(description)), data);
}

// ---- endpoint ----

endpoint::endpoint(std::shared_ptr<detail::endpoint_state> st) noexcept : state_(std::move(st)) {}

endpoint::~endpoint() {
    close();
    if (puller_.joinable()) puller_.join();
}

const endpoint_config& endpoint::config() const noexcept { return state_->config; }

endpoint_stats endpoint::stats() const {
    std::lock_guard lock(state_->mutex);
    return state_->stats;
}

std::size_t endpoint::pending() const noexcept { return state_->pending(); }

asio::awaitable<std::optional<request>> endpoint::next() {
    auto st = state_;
    // A message delivered to a next() that was abandoned waits in the channel: take it first.
    std::optional<request> ready;
    st->channel.try_receive([&](boost::system::error_code ec, request r) {
        if (!ec) ready.emplace(std::move(r));
    });
    if (ready) co_return ready;
    {
        std::lock_guard lock(st->mutex);
        if (st->closing) co_return std::nullopt;
        st->wanted = true;
    }
    st->wake.notify_one();
    auto [ec, r] = co_await st->channel.async_receive(asio::as_tuple(asio::use_awaitable));
    if (ec) co_return std::nullopt;
    co_return std::optional<request>(std::move(r));
}

void endpoint::close() noexcept { detail::endpoint_state::shutdown(state_); }

void endpoint::close(std::function<void(request)> refuse) noexcept {
    {
        std::lock_guard lock(state_->mutex);
        if (!state_->closing) state_->refuser = std::move(refuse);
    }
    detail::endpoint_state::shutdown(state_);
}

// ---- service ----

std::string verb_subject(std::string_view verb, std::string_view name, std::string_view id) {
    std::string out = fmt::format("{}.{}", api_prefix, verb);
    if (!name.empty()) out += fmt::format(".{}", name);
    if (!name.empty() && !id.empty()) out += fmt::format(".{}", id);
    return out;
}

std::string detail::service_state::answer(std::string_view verb) const {
    boost::json::object o;
    o["name"] = config.name;
    o["id"] = id;
    o["version"] = config.version;
    o["metadata"] = to_json(config.meta);
    std::lock_guard lock(mutex);
    if (verb == "PING") {
        o["type"] = ping_response_type;
    } else if (verb == "INFO") {
        o["type"] = info_response_type;
        o["description"] = config.description;
        boost::json::array eps;
        for (const auto& weak : endpoints) {
            const auto ep = weak.lock();
            if (!ep) continue;
            boost::json::object e;
            e["name"] = ep->config.name;
            e["subject"] = ep->config.subject;
            e["queue_group"] = ep->queue;
            e["metadata"] = to_json(ep->config.meta);
            eps.push_back(std::move(e));
        }
        o["endpoints"] = std::move(eps);
    } else {
        o["type"] = stats_response_type;
        o["started"] = started;
        boost::json::array eps;
        for (const auto& weak : endpoints) {
            const auto ep = weak.lock();
            if (!ep) continue;
            endpoint_stats s;
            {
                std::lock_guard ep_lock(ep->mutex);
                s = ep->stats;
            }
            boost::json::object e;
            e["name"] = ep->config.name;
            e["subject"] = ep->config.subject;
            e["queue_group"] = ep->queue;
            e["num_requests"] = s.num_requests;
            e["num_errors"] = s.num_errors;
            e["last_error"] = s.last_error;
            e["processing_time"] = s.processing_time.count();
            e["average_processing_time"] =
                s.num_requests == 0 ? 0 : s.processing_time.count() / static_cast<std::int64_t>(s.num_requests);
            eps.push_back(std::move(e));
        }
        o["endpoints"] = std::move(eps);
    }
    return boost::json::serialize(o);
}

service::service(conns::connection& conn, asio::any_io_executor executor, service_config config)
    : state_(std::make_shared<detail::service_state>()) {
    if (!gocompat::is_valid_name(config.name)) {
        throw a2a_nats::error(
            a2a_nats::errc::invalid_name,
            fmt::format("micro service name \"{}\" is not valid: use letters, digits, '-' and '_'", config.name));
    }
    if (!conn.native_handle())
        throw a2a_nats::error(a2a_nats::errc::not_connected, "micro service: the NATS connection is closed");
    auto& st = *state_;
    st.conn = &conn;
    st.executor = std::move(executor);
    st.config = std::move(config);
    st.id = conns::connection::new_nuid();
    st.started = gocompat::format_rfc3339_nano(
        gocompat::to_go_time(std::chrono::system_clock::now()));  // Go's time.Time JSON form

    // Verbs: plain subscriptions, so that every instance answers. The nats.c thread copies
    // the reply subject and posts; the answer is built and sent on the executor.
    std::weak_ptr<detail::service_state> weak = state_;
    for (std::string_view verb : {"PING", "INFO", "STATS"}) {
        for (const auto& subject :
             {verb_subject(verb), verb_subject(verb, st.config.name), verb_subject(verb, st.config.name, st.id)}) {
            auto handler = [weak, verb](natsMsg* msg) {
                const char* r = natsMsg_GetReply(msg);
                if (!r || !*r) return;
                auto self = weak.lock();
                if (!self) return;
                std::lock_guard lock(self->mutex);
                if (self->stopped) return;
                asio::post(self->executor, [self, reply = std::string(r), verb] {
                    self->publish(reply, self->answer(verb), std::nullopt);
                });
            };
            try {
                st.verbs.push_back(
                    a2a_nats::detail::async_subscription::subscribe(conn.native_handle(), subject, {}, handler));
            } catch (const std::exception& e) {
                stop();
                throw a2a_nats::error(a2a_nats::errc::subscribe_failed,
                                      fmt::format("micro service \"{}\": {}", st.config.name, e.what()));
            }
        }
    }
    natsConnection_FlushTimeout(conn.native_handle(), 2000);
}

service::~service() { stop(); }

const std::string& service::id() const noexcept { return state_->id; }
const service_config& service::config() const noexcept { return state_->config; }
std::size_t service::pending(std::string_view endpoint_name) const {
    std::lock_guard lock(state_->mutex);
    for (const auto& weak : state_->endpoints) {
        if (const auto ep = weak.lock(); ep && ep->config.name == endpoint_name) return ep->pending();
    }
    return 0;
}

std::string service::ping_json() const { return state_->answer("PING"); }
std::string service::info_json() const { return state_->answer("INFO"); }
std::string service::stats_json() const { return state_->answer("STATS"); }

std::unique_ptr<endpoint> service::add_endpoint(endpoint_config config) {
    if (!gocompat::is_valid_name(config.name)) {
        throw a2a_nats::error(a2a_nats::errc::invalid_name,
                              fmt::format("micro endpoint name \"{}\" is not valid", config.name));
    }
    if (!valid_subject(config.subject) || config.subject.find('>') != std::string::npos ||
        config.subject.find('*') != std::string::npos) {
        throw a2a_nats::error(a2a_nats::errc::invalid_name,
                              fmt::format("micro endpoint subject \"{}\" is not valid", config.subject));
    }
    auto& st = *state_;
    std::string queue = config.queue_group.value_or(st.config.queue_group);
    auto ep = std::make_shared<detail::endpoint_state>(state_, std::move(config), std::move(queue));
    {
        std::lock_guard lock(st.mutex);
        if (st.stopped) throw a2a_nats::error(a2a_nats::errc::service_stopped, "micro service is stopped");
    }
    const natsStatus s =
        ep->queue.empty() ? natsConnection_SubscribeSync(&ep->sub, st.conn->native_handle(), ep->config.subject.c_str())
                          : natsConnection_QueueSubscribeSync(&ep->sub, st.conn->native_handle(),
                                                              ep->config.subject.c_str(), ep->queue.c_str());
    if (s != NATS_OK) {
        ep->sub = nullptr;
        throw a2a_nats::error(
            a2a_nats::errc::subscribe_failed,
            fmt::format("subscribing to \"{}\": {}", ep->config.subject, a2a_nats::detail::status_text(s)));
    }
    // One round trip, so that when this returns the server routes the subject to us.
    natsConnection_FlushTimeout(st.conn->native_handle(), 2000);
    {
        std::lock_guard lock(st.mutex);
        st.endpoints.push_back(ep);
    }
    std::unique_ptr<endpoint> out(new endpoint(ep));
    out->puller_ = std::thread([ep] { detail::endpoint_state::pull(ep); });
    return out;
}

void service::stop() noexcept {
    std::vector<std::unique_ptr<a2a_nats::detail::async_subscription>> verbs;
    std::vector<std::weak_ptr<detail::endpoint_state>> endpoints;
    {
        std::lock_guard lock(state_->mutex);
        if (state_->stopped) return;
        state_->stopped = true;
        verbs.swap(state_->verbs);
        endpoints = state_->endpoints;
    }
    for (auto& v : verbs) v->unsubscribe();
    for (auto& weak : endpoints) {
        if (auto ep = weak.lock()) detail::endpoint_state::shutdown(ep);
    }
}

}  // namespace fiskai::a2a_nats::micro
