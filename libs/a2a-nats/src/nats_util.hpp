#pragma once
// Small owners for nats.c objects, private to the binding.

#include <nats/nats.h>

#include <functional>
#include <memory>
#include <string>
#include <string_view>

namespace fiskai::a2a_nats::detail {

// nats.c's text for a status, with the calling thread's last error detail.
[[nodiscard]] std::string status_text(natsStatus s);

// A copy of what a message carries, made on the nats.c thread before the message is freed.
struct message_copy {
    std::string subject;
    std::string reply;
    std::string data;
    bool no_responders = false;
    std::string error;       // Nats-Service-Error, when present
    std::string error_code;  // Nats-Service-Error-Code, when present
};

[[nodiscard]] message_copy copy_message(natsMsg* msg);

// An asynchronous subscription whose handler runs on a nats.c thread. The handler may only
// copy and post (the message is freed when it returns). nats.c may still be inside the
// handler after unsubscribe(), so the handler is freed only by the subscription's
// completion callback, the last call nats.c makes for it.
class async_subscription {
public:
    using handler = std::function<void(natsMsg*)>;

    // Throws boost::system::system_error-free std::runtime_error with nats.c's text.
    static std::unique_ptr<async_subscription> subscribe(natsConnection* nc, const std::string& subject,
                                                         const std::string& queue, handler h);
    ~async_subscription();
    void unsubscribe() noexcept;

private:
    async_subscription() = default;
    natsSubscription* sub_ = nullptr;
};

}  // namespace fiskai::a2a_nats::detail
