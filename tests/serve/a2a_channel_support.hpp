#pragma once
// The a2a channel against a real nats-server, driven directly: the test calls next(),
// run_context(), feeds run events to the sink and calls done(). The caller is raw nats.c
// (an inbox subscription, requests published with that reply subject, cancel/answer/
// keepalive published by hand), so nothing here depends on the client library.

#include "engine_support.hpp"

#include <fiskai/a2a/codec.hpp>
#include <fiskai/a2a/ids.hpp>
#include <fiskai/a2a/stamp.hpp>
#include <fiskai/a2a/task_flow.hpp>
#include <fiskai/a2a/validator.hpp>
#include <fiskai/conns/connection.hpp>
#include <fiskai/conns/embedded_broker.hpp>
#include <fiskai/serve/a2a_channel.hpp>
#include <fiskai/serve/session_ids.hpp>
#include <fiskai/toolkit/prompter.hpp>

#include <nats/nats.h>

#include <boost/asio/io_context.hpp>

#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace a2a_channel_test {

namespace asio = boost::asio;
namespace a2a = fiskai::a2a;
namespace conns = fiskai::conns;
namespace serve = fiskai::serve;
namespace toolkit = fiskai::toolkit;
using namespace std::chrono_literals;
using a2a_test::run_until;

inline conns::connect_options connect(const std::string& who) {
    conns::connect_options o;
    o.name = conns::connection_name(who);
    o.connect_timeout = 2s;
    return o;
}

// What the caller's inbox received.
struct received {
    std::string data;
    std::string service_error;       // Nats-Service-Error
    std::string service_error_code;  // Nats-Service-Error-Code
    std::chrono::steady_clock::time_point at;
};

// A caller made of nats.c calls. Thread-safe: the inbox callback runs on a nats.c thread.
class raw_caller {
public:
    raw_caller(conns::connection& c, std::string agent, std::string name = "caller-1")
        : nc_(c.native_handle()), agent_(std::move(agent)), name_(std::move(name)) {
        char* inbox = nullptr;
        REQUIRE(natsInbox_Create(&inbox) == NATS_OK);
        inbox_ = inbox;
        natsInbox_Destroy(inbox);
        REQUIRE(natsConnection_Subscribe(&sub_, nc_, inbox_.c_str(), &raw_caller::on_msg, this) == NATS_OK);
        REQUIRE(natsConnection_FlushTimeout(nc_, 2000) == NATS_OK);
    }
    ~raw_caller() {
        // Drained, and waited for: an unsubscribe alone lets a callback already under way on
        // the delivery thread write into this object after it is gone (a use after free that
        // AddressSanitizer caught in CI).
        if (natsSubscription_Drain(sub_) == NATS_OK) {
            (void)natsSubscription_WaitForDrainCompletion(sub_, 5000);
        } else {
            natsSubscription_Unsubscribe(sub_);
        }
        natsSubscription_Destroy(sub_);
    }
    raw_caller(const raw_caller&) = delete;
    raw_caller& operator=(const raw_caller&) = delete;

    [[nodiscard]] const std::string& name() const { return name_; }

    // A new task: `id = request = task`.
    a2a::task_request task(std::string task_id, std::string prompt = "list the streams") {
        a2a::task_request r;
        a2a::stamp_request(r, name_, agent_, std::move(task_id));
        r.prompt = std::move(prompt);
        return r;
    }

    void send(const a2a::task_request& r) {
        task_ = r.request;
        id_ = r.id;
        auto body = a2a::encode(r);
        REQUIRE(body.has_value());
        send_raw(*body);
    }
    // Publishes `body` on the request subject with the inbox as reply.
    void send_raw(const std::string& body) {
        const auto subject = "choria.fisk-ai.request." + agent_;
        REQUIRE(natsConnection_PublishRequest(nc_, subject.c_str(), inbox_.c_str(), body.data(),
                                              static_cast<int>(body.size())) == NATS_OK);
        REQUIRE(natsConnection_FlushTimeout(nc_, 2000) == NATS_OK);
    }

    // Caller-to-worker messages (§6.5): request = the task id, numbered from 1.
    template <class M>
    void stamp(M& m) {
        a2a::stamp_request(m, name_, agent_);
        m.request = task_;
        m.conversation = task_;
        m.sequence = ++sequence_;
    }
    void cancel(std::string reason = "interrupted at the terminal") {
        a2a::task_cancel c;
        stamp(c);
        c.reason = std::move(reason);
        publish("choria.fisk-ai.cancel." + agent_ + "." + id_, c);
    }
    void answer(a2a::task_answer a) {
        stamp(a);
        publish("choria.fisk-ai.elicit." + agent_ + "." + id_, a);
    }
    void keepalive(std::string question_id = {}) {
        a2a::task_keepalive k;
        stamp(k);
        k.question_id = std::move(question_id);
        publish("choria.fisk-ai.elicit." + agent_ + "." + id_, k);
    }
    template <class M>
    void publish(const std::string& subject, const M& m) {
        auto body = a2a::encode(m);
        REQUIRE(body.has_value());
        REQUIRE(natsConnection_Publish(nc_, subject.c_str(), body->data(), static_cast<int>(body->size())) == NATS_OK);
        REQUIRE(natsConnection_FlushTimeout(nc_, 2000) == NATS_OK);
    }

    // Publishes a cancel from the inbox callback as soon as the ack arrives: the tightest
    // a caller can be.
    void cancel_on_ack() { cancel_on_ack_ = true; }
    // Leaves `n` numbers out, as if those messages were lost.
    void skip(std::uint64_t n) { sequence_ += n; }

    [[nodiscard]] std::size_t count() const {
        std::lock_guard lock(mutex_);
        return inbox_msgs_.size();
    }
    [[nodiscard]] std::vector<received> all() const {
        std::lock_guard lock(mutex_);
        return inbox_msgs_;
    }
    // The i-th message, decoded and validated as the client would.
    [[nodiscard]] a2a::message at(std::size_t i) const {
        auto msgs = all();
        REQUIRE(i < msgs.size());
        auto m = a2a::default_validator().check(msgs[i].data);
        INFO(msgs[i].data);
        REQUIRE(m.has_value());
        return *m;
    }
    template <class T>
    [[nodiscard]] T at_as(std::size_t i) const {
        auto m = at(i);
        INFO("message " << i << " is " << a2a::protocol_of(m));
        REQUIRE(std::holds_alternative<T>(m));
        return std::get<T>(m);
    }

private:
    static void on_msg(natsConnection*, natsSubscription*, natsMsg* msg, void* closure) {
        auto* self = static_cast<raw_caller*>(closure);
        received r;
        if (const char* d = natsMsg_GetData(msg))
            r.data.assign(d, static_cast<std::size_t>(natsMsg_GetDataLength(msg)));
        const char* v = nullptr;
        if (natsMsgHeader_Get(msg, "Nats-Service-Error", &v) == NATS_OK && v) r.service_error = v;
        v = nullptr;
        if (natsMsgHeader_Get(msg, "Nats-Service-Error-Code", &v) == NATS_OK && v) r.service_error_code = v;
        r.at = std::chrono::steady_clock::now();
        natsMsg_Destroy(msg);
        bool first = false;
        {
            std::lock_guard lock(self->mutex_);
            first = self->inbox_msgs_.empty();
            self->inbox_msgs_.push_back(r);
        }
        if (first && self->cancel_on_ack_) {
            a2a::task_cancel c;
            a2a::stamp_request(c, self->name_, self->agent_);
            c.request = self->task_;
            c.sequence = ++self->sequence_;
            c.reason = "at once";
            auto body = a2a::encode(c);
            const auto subject = "choria.fisk-ai.cancel." + self->agent_ + "." + self->id_;
            if (body) natsConnection_Publish(self->nc_, subject.c_str(), body->data(), static_cast<int>(body->size()));
        }
    }

    natsConnection* nc_;
    std::string agent_;
    std::string name_;
    std::string inbox_;
    natsSubscription* sub_ = nullptr;
    std::string task_;
    std::string id_;
    std::atomic<std::uint64_t> sequence_{0};
    std::atomic<bool> cancel_on_ack_{false};
    mutable std::mutex mutex_;
    std::vector<received> inbox_msgs_;
};

// Log lines, kept for assertions.
struct captured_log {
    std::shared_ptr<std::vector<std::string>> lines = std::make_shared<std::vector<std::string>>();
    fiskai::gocompat::logger logger() {
        auto out = lines;
        return fiskai::gocompat::logger([out](fiskai::gocompat::log_level, std::string_view msg,
                                              fiskai::gocompat::log_fields) { out->emplace_back(msg); });
    }
    [[nodiscard]] bool has(std::string_view text) const {
        for (const auto& l : *lines)
            if (l.find(text) != std::string::npos) return true;
        return false;
    }
};

// A broker, one connection for the worker and one for the caller.
struct env {
    conns::embedded_broker broker{[] {
        conns::broker_options o;
        o.jetstream = false;
        return o;
    }()};
    asio::io_context ioc;
    std::unique_ptr<conns::connection> worker_conn = conns::connection::dial_url(broker.url(), connect("worker"));
    std::unique_ptr<conns::connection> caller_conn = conns::connection::dial_url(broker.url(), connect("caller"));
    captured_log log;

    serve::a2a_channel_options options(bool elicitation = false) {
        serve::a2a_channel_options o;
        o.identity = "svc";
        o.elicitation = elicitation;
        o.tool_names = {"stream_ls", "stream_rm"};
        o.provider = "anthropic";
        o.log = log.logger();
        return o;
    }
    std::shared_ptr<serve::a2a_channel> channel(serve::a2a_channel_options o) {
        return std::make_shared<serve::a2a_channel>(*worker_conn, ioc.get_executor(), nullptr, std::move(o));
    }

    // next() until it hands over a work.
    std::unique_ptr<serve::work> take(serve::a2a_channel& ch) {
        auto w = a2a_test::run(ioc, ch.next(), 10s);
        REQUIRE(w);
        return w;
    }
    bool wait_count(const raw_caller& c, std::size_t n, std::chrono::steady_clock::duration limit = 10s) {
        return run_until(
            ioc, [&] { return c.count() >= n; }, limit);
    }
    void done(serve::work& w, serve::outcome o) { a2a_test::run(ioc, run_done(w, std::move(o))); }

private:
    static asio::awaitable<bool> run_done(serve::work& w, serve::outcome o) {
        co_await w.done(std::move(o));
        co_return true;
    }
};

inline serve::outcome completed(std::string text = "done") {
    serve::outcome o;
    o.reason = "completed";
    o.text = std::move(text);
    return o;
}

// The reply-set invariants: numbered 1..n, every message a reply to `task` carrying the
// derived session id, the ack first, exactly one terminal and it last.
inline void check_reply_set(const raw_caller& c, const std::string& task, const std::string& session) {
    const auto n = c.count();
    REQUIRE(n >= 2);
    std::size_t terminals = 0;
    for (std::size_t i = 0; i < n; ++i) {
        auto m = c.at(i);
        const auto& h = a2a::header_of(m);
        CHECK(h.sequence == i + 1);
        CHECK(h.request == task);
        CHECK(h.conversation == session);
        CHECK(h.sender.name == "svc");
        REQUIRE(h.recipient);
        CHECK(h.recipient->name == c.name());
        if (std::holds_alternative<a2a::task_result>(m) || std::holds_alternative<a2a::task_error>(m)) ++terminals;
    }
    CHECK(std::holds_alternative<a2a::task_ack>(c.at(0)));
    CHECK(terminals == 1);
    auto last = c.at(n - 1);
    CHECK((std::holds_alternative<a2a::task_result>(last) || std::holds_alternative<a2a::task_error>(last)));
}

}  // namespace a2a_channel_test
