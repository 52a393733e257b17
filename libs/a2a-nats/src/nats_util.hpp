#pragma once
// Small owners for nats.c objects, private to the binding.

#include <nats/nats.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
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

// What an asynchronous subscription has posted to the io_context and the io_context has not
// yet taken, bounded. nats.c's own pending limits never apply to such a subscription (its
// handler empties nats.c's queue at once by copying and posting), so without this a peer
// publishing faster than the io thread consumes grows the process without limit. Past the
// bound a message is dropped on the nats.c thread, before it is copied, and counted.
// reserve() runs on the nats.c thread, release() on the io thread: atomics only.
class delivery_budget {
public:
    delivery_budget(std::size_t max_messages, std::size_t max_bytes) noexcept
        : max_messages_(max_messages), max_bytes_(max_bytes) {}
    // Whether a message of `bytes` may be posted; if so, it is counted until release().
    [[nodiscard]] bool reserve(std::size_t bytes) noexcept {
        const auto m = messages_.fetch_add(1, std::memory_order_relaxed) + 1;
        const auto b = bytes_.fetch_add(bytes, std::memory_order_relaxed) + bytes;
        if (m <= max_messages_ && b <= max_bytes_) return true;
        release(bytes);
        dropped_.fetch_add(1, std::memory_order_relaxed);
        return false;
    }
    void release(std::size_t bytes) noexcept {
        messages_.fetch_sub(1, std::memory_order_relaxed);
        bytes_.fetch_sub(bytes, std::memory_order_relaxed);
    }
    // Messages dropped so far; exchange(0) lets the io thread report each drop once.
    [[nodiscard]] std::uint64_t take_dropped() noexcept { return dropped_.exchange(0, std::memory_order_relaxed); }

private:
    const std::size_t max_messages_;
    const std::size_t max_bytes_;
    std::atomic<std::size_t> messages_{0};
    std::atomic<std::size_t> bytes_{0};
    std::atomic<std::uint64_t> dropped_{0};
};

// An asynchronous subscription whose handler runs on a nats.c thread. The handler may only
// copy and post (the message is freed when it returns). nats.c may still deliver after
// unsubscribe(), so its hold on the handler ends only with the subscription's completion
// callback, the last call nats.c makes for it; but unsubscribe() is a barrier for the handler:
// once it returns, no handler call is under way and none starts. So what the handler posts
// to (an io_context its owner may destroy next) is never reached after that.
class async_subscription {
public:
    using handler = std::function<void(natsMsg*)>;
    struct delivery;  // the handler and whether it may still run

    // Throws boost::system::system_error-free std::runtime_error with nats.c's text.
    static std::unique_ptr<async_subscription> subscribe(natsConnection* nc, const std::string& subject,
                                                         const std::string& queue, handler h);
    ~async_subscription();
    void unsubscribe() noexcept;

private:
    async_subscription() = default;
    natsSubscription* sub_ = nullptr;
    // Shared with nats.c's closure, which its completion callback frees: that may come first
    // (the connection closed).
    std::shared_ptr<delivery> delivery_;
};

}  // namespace fiskai::a2a_nats::detail
