#pragma once
// A scripted worker of the task flow, written against nats.c directly so that it shares
// nothing with the caller under test: it queue-subscribes `choria.fisk-ai.request.<id>`,
// records each request, and runs the test's script on nats.c's delivery thread. The script
// publishes the reply set (stamped replies, or raw bytes) to the request's reply subject and
// may wait for what the caller sends on `cancel.<id>.*` and `elicit.<id>.*`.

#include <fiskai/a2a/codec.hpp>
#include <fiskai/a2a/task_flow.hpp>
#include <fiskai/conns/connection.hpp>

#include <nats/nats.h>

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace task_test {

namespace a2a = fiskai::a2a;
using namespace std::chrono_literals;

struct inbound_message {
    std::string subject;
    std::string body;
};

class fake_task_worker;

// One request being answered.
struct task_run {
    fake_task_worker* worker = nullptr;
    a2a::task_request request;
    std::string reply_subject;
    std::uint64_t next_sequence = 1;

    // Stamps `m` as the next reply of this task and publishes it; `sequence` overrides the
    // number (a repeat, a gap) without advancing the count.
    void send(a2a::message m, std::optional<std::uint64_t> sequence = std::nullopt);
    void send_raw(const std::string& body);
    void ack(bool accepted = true, std::string reason = {}) {
        a2a::task_ack a;
        a.accepted = accepted;
        a.reason = std::move(reason);
        send(std::move(a));
    }
    void event(a2a::block b, std::optional<std::uint64_t> sequence = std::nullopt) {
        a2a::task_event e;
        e.block = std::move(b);
        send(std::move(e), sequence);
    }
    void result(std::string stop_reason, std::string text) {
        a2a::task_result r;
        r.stop_reason = std::move(stop_reason);
        r.text = std::move(text);
        send(std::move(r));
    }
    void error(std::string stop_reason, std::string code, std::string text) {
        a2a::task_error e;
        e.stop_reason = std::move(stop_reason);
        e.code = std::move(code);
        e.error = std::move(text);
        send(std::move(e));
    }
    // Waits until an inbound message satisfies `match`; returns it.
    std::optional<inbound_message> wait_for(const std::function<bool(const inbound_message&)>& match,
                                            std::chrono::milliseconds limit = 10s);
};

class fake_task_worker {
public:
    using script = std::function<void(task_run&)>;

    fake_task_worker(fiskai::conns::connection& conn, std::string identity, script s)
        : conn_(conn), identity_(std::move(identity)), script_(std::move(s)) {
        subscribe("choria.fisk-ai.request." + identity_, identity_, &on_request);
        subscribe("choria.fisk-ai.cancel." + identity_ + ".*", {}, &on_inbound);
        subscribe("choria.fisk-ai.elicit." + identity_ + ".*", {}, &on_inbound);
        if (natsConnection_Flush(conn_.native_handle()) != NATS_OK) throw std::runtime_error("flush failed");
    }
    ~fake_task_worker() {
        {
            std::lock_guard lock(mutex_);
            stopping_ = true;
        }
        changed_.notify_all();
        for (auto* s : subs_) {
            if (natsSubscription_Drain(s) == NATS_OK) natsSubscription_WaitForDrainCompletion(s, 5000);
            natsSubscription_Destroy(s);
        }
    }
    fake_task_worker(const fake_task_worker&) = delete;
    fake_task_worker& operator=(const fake_task_worker&) = delete;

    [[nodiscard]] const std::string& identity() const noexcept { return identity_; }
    [[nodiscard]] fiskai::conns::connection& connection() const noexcept { return conn_; }

    std::vector<a2a::task_request> requests() {
        std::lock_guard lock(mutex_);
        return requests_;
    }
    std::vector<inbound_message> inbound() {
        std::lock_guard lock(mutex_);
        return inbound_;
    }
    std::size_t scripts_done() {
        std::lock_guard lock(mutex_);
        return scripts_done_;
    }

    std::optional<inbound_message> wait_for(const std::function<bool(const inbound_message&)>& match,
                                            std::chrono::milliseconds limit) {
        std::unique_lock lock(mutex_);
        std::optional<inbound_message> found;
        changed_.wait_for(lock, limit, [&] {
            for (const auto& m : inbound_) {
                if (match(m)) {
                    found = m;
                    return true;
                }
            }
            return stopping_;
        });
        return found;
    }

private:
    void subscribe(const std::string& subject, const std::string& queue, natsMsgHandler handler) {
        natsSubscription* sub = nullptr;
        const natsStatus s = queue.empty()
                                 ? natsConnection_Subscribe(&sub, conn_.native_handle(), subject.c_str(), handler, this)
                                 : natsConnection_QueueSubscribe(&sub, conn_.native_handle(), subject.c_str(),
                                                                 queue.c_str(), handler, this);
        if (s != NATS_OK) throw std::runtime_error("fake worker: subscribing " + subject + " failed");
        subs_.push_back(sub);
    }

    static void on_request(natsConnection*, natsSubscription*, natsMsg* msg, void* closure) {
        auto* self = static_cast<fake_task_worker*>(closure);
        task_run run;
        run.worker = self;
        if (const char* r = natsMsg_GetReply(msg)) run.reply_subject = r;
        const std::string body(natsMsg_GetData(msg), static_cast<std::size_t>(natsMsg_GetDataLength(msg)));
        natsMsg_Destroy(msg);
        auto decoded = a2a::decode(body);
        if (decoded && std::holds_alternative<a2a::task_request>(*decoded)) {
            run.request = std::get<a2a::task_request>(*decoded);
        }
        {
            std::lock_guard lock(self->mutex_);
            self->requests_.push_back(run.request);
        }
        self->changed_.notify_all();
        try {
            self->script_(run);
        } catch (...) {  // a failed script shows as a missing reply in the test
        }
        {
            std::lock_guard lock(self->mutex_);
            ++self->scripts_done_;
        }
        self->changed_.notify_all();
    }

    static void on_inbound(natsConnection*, natsSubscription*, natsMsg* msg, void* closure) {
        auto* self = static_cast<fake_task_worker*>(closure);
        inbound_message m;
        m.subject = natsMsg_GetSubject(msg);
        m.body.assign(natsMsg_GetData(msg), static_cast<std::size_t>(natsMsg_GetDataLength(msg)));
        natsMsg_Destroy(msg);
        {
            std::lock_guard lock(self->mutex_);
            self->inbound_.push_back(std::move(m));
        }
        self->changed_.notify_all();
    }

    fiskai::conns::connection& conn_;
    std::string identity_;
    script script_;
    std::vector<natsSubscription*> subs_;
    std::mutex mutex_;
    std::condition_variable changed_;
    std::vector<a2a::task_request> requests_;
    std::vector<inbound_message> inbound_;
    std::size_t scripts_done_ = 0;
    bool stopping_ = false;
};

inline void task_run::send(a2a::message m, std::optional<std::uint64_t> sequence) {
    a2a::stamp_task_reply(a2a::header_of(m), request, worker->identity(), "a2a-session-1",
                          sequence.value_or(next_sequence));
    if (!sequence) ++next_sequence;
    auto body = a2a::encode(m);
    if (!body) throw std::runtime_error(body.error().message);
    send_raw(*body);
}

inline void task_run::send_raw(const std::string& body) {
    natsConnection_Publish(worker->connection().native_handle(), reply_subject.c_str(), body.data(),
                           static_cast<int>(body.size()));
    natsConnection_Flush(worker->connection().native_handle());
}

inline std::optional<inbound_message> task_run::wait_for(const std::function<bool(const inbound_message&)>& match,
                                                         std::chrono::milliseconds limit) {
    return worker->wait_for(match, limit);
}

}  // namespace task_test
