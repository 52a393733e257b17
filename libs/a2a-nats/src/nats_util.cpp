#include "nats_util.hpp"

#include <fiskai/a2a_nats/error.hpp>
#include <fiskai/conns/connection.hpp>

#include <fmt/format.h>

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

namespace {

void on_message(natsConnection*, natsSubscription*, natsMsg* msg, void* closure) {
    try {
        (*static_cast<async_subscription::handler*>(closure))(msg);
    } catch (...) {  // nothing may escape into C
    }
    natsMsg_Destroy(msg);
}

void on_complete(void* closure) { delete static_cast<async_subscription::handler*>(closure); }

}  // namespace

std::unique_ptr<async_subscription> async_subscription::subscribe(natsConnection* nc, const std::string& subject,
                                                                  const std::string& queue, handler h) {
    auto* closure = new handler(std::move(h));
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
    return out;
}

async_subscription::~async_subscription() { unsubscribe(); }

void async_subscription::unsubscribe() noexcept {
    if (!sub_) return;
    conns::retire_subscription(sub_);  // destroyed late: see there
    sub_ = nullptr;
}

}  // namespace fiskai::a2a_nats::detail
