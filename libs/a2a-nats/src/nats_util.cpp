#include "nats_util.hpp"

#include <fiskai/a2a_nats/error.hpp>
#include <fiskai/conns/connection.hpp>

#include <fmt/format.h>

#include <memory>
#include <mutex>
#include <stdexcept>

namespace fiskai::a2a_nats::detail {

std::string status_text(natsStatus s) { return conns::nats_status_text(static_cast<int>(s)); }

message_copy copy_message(natsMsg* msg) {
    message_copy out;
    if (const char* s = natsMsg_GetSubject(msg)) out.subject = s;
    if (const char* r = natsMsg_GetReply(msg)) out.reply = r;
    if (const char* d = natsMsg_GetData(msg)) out.data.assign(d, static_cast<std::size_t>(natsMsg_GetDataLength(msg)));
    out.no_responders = natsMsg_IsNoResponders(msg);
    const char* value = nullptr;
    if (natsMsgHeader_Get(msg, "Nats-Service-Error", &value) == NATS_OK && value) out.error = value;
    value = nullptr;
    if (natsMsgHeader_Get(msg, "Nats-Service-Error-Code", &value) == NATS_OK && value) out.error_code = value;
    return out;
}

struct async_subscription::delivery {
    handler deliver;
    // Held for each call, and to close. Recursive: a handler may drop the last owner of what
    // it serves, whose destructor unsubscribes on this thread.
    std::recursive_mutex mutex;
    bool open = true;
};

namespace {

using delivery_ref = std::shared_ptr<async_subscription::delivery>;

void on_message(natsConnection*, natsSubscription*, natsMsg* msg, void* closure) {
    const auto& d = *static_cast<delivery_ref*>(closure);
    {
        const std::lock_guard lock(d->mutex);
        if (d->open) {
            try {
                d->deliver(msg);
            } catch (...) {  // nothing may escape into C
            }
        }
    }
    natsMsg_Destroy(msg);
}

void on_complete(void* closure) { delete static_cast<delivery_ref*>(closure); }

}  // namespace

std::unique_ptr<async_subscription> async_subscription::subscribe(natsConnection* nc, const std::string& subject,
                                                                  const std::string& queue, handler h) {
    auto shared = std::make_shared<delivery>();
    shared->deliver = std::move(h);
    auto* closure = new delivery_ref(shared);
    natsSubscription* sub = nullptr;
    const natsStatus s =
        queue.empty() ? natsConnection_Subscribe(&sub, nc, subject.c_str(), on_message, closure)
                      : natsConnection_QueueSubscribe(&sub, nc, subject.c_str(), queue.c_str(), on_message, closure);
    if (s != NATS_OK) {
        delete closure;
        throw a2a_nats::error(a2a_nats::errc::subscribe_failed,
                              fmt::format("subscribing to \"{}\": {}", subject, status_text(s)));
    }
    if (natsSubscription_SetOnCompleteCB(sub, on_complete, closure) != NATS_OK) {
        // Already closed (the connection went away in between): nats.c will make no more
        // calls once its delivery returns; the handler is leaked rather than risked.
    }
    std::unique_ptr<async_subscription> out(new async_subscription);
    out->sub_ = sub;
    out->delivery_ = std::move(shared);
    return out;
}

async_subscription::~async_subscription() { unsubscribe(); }

void async_subscription::unsubscribe() noexcept {
    if (!sub_) return;
    {
        // Waits out a call under way; none starts after this.
        const std::lock_guard lock(delivery_->mutex);
        delivery_->open = false;
    }
    conns::retire_subscription(sub_);  // destroyed late: see there
    sub_ = nullptr;
    delivery_.reset();
}

}  // namespace fiskai::a2a_nats::detail
