// conns::retire_subscription, conns::retire_kv_watcher: see connection.hpp for why a
// subscription (or a KV watcher, which owns one) is destroyed late.
#include <fiskai/conns/connection.hpp>

#include <nats/nats.h>

#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>
#include <utility>

namespace fiskai::conns {

namespace {

using reaper_clock = std::chrono::steady_clock;
constexpr auto destroy_after = std::chrono::seconds(1);
// The thread wakes this much after the oldest is due, then destroys every one due by then:
// a served task retires two subscriptions, and waking for each would put two thread
// switches a task on the CPU the next task runs on.
constexpr auto batch_window = std::chrono::milliseconds(250);

// One thread per process destroys retired objects once their second has passed, in the
// order they were retired. Never destroyed itself: at exit what is still pending stays
// reachable from here (so no leak is reported) and no thread is joined in an exit handler.
// A forked child that retires one starts its own thread (the parent's is not in the child).
class reaper {
public:
    void retire(void* object, void (*destroy)(void*)) {
        const std::lock_guard lock(mutex_);
        const bool was_idle = pending_.empty();
        pending_.push_back({reaper_clock::now() + destroy_after, object, destroy});
        if (owner_ != ::getpid()) {
            std::thread([this] { run(); }).detach();  // may throw: then the next retire tries again
            owner_ = ::getpid();
        }
        // Entries are due in the order they come, so only a first one changes when the
        // thread must wake; it waits on its own for the rest.
        if (was_idle) wake_.notify_one();
    }

private:
    void run() {
        std::unique_lock lock(mutex_);
        for (;;) {
            if (pending_.empty()) {
                wake_.wait(lock);
                continue;
            }
            const auto due = pending_.front().due;
            if (reaper_clock::now() < due) {
                wake_.wait_until(lock, due + batch_window);
                continue;
            }
            const retired r = pending_.front();
            pending_.pop_front();
            lock.unlock();
            r.destroy(r.object);
            lock.lock();
        }
    }

    std::mutex mutex_;
    std::condition_variable wake_;
    struct retired {
        reaper_clock::time_point due;
        void* object;
        void (*destroy)(void*);
    };
    std::deque<retired> pending_;
    pid_t owner_ = 0;
};

reaper& the_reaper() {
    static auto* r = new reaper;  // see reaper
    return *r;
}

// Queues `object` for `destroy` a second from now. Without memory for the queue or a
// thread, it is leaked instead: destroying it now risks the race in connection.hpp, and
// leaking one does not.
void hand_to_reaper(void* object, void (*destroy)(void*)) noexcept {
    try {
        the_reaper().retire(object, destroy);
    } catch (...) {}
}

}  // namespace

void retire_subscription(natsSubscription* sub) noexcept {
    if (sub == nullptr) return;
    natsSubscription_Unsubscribe(sub);
    hand_to_reaper(sub, [](void* s) { natsSubscription_Destroy(static_cast<natsSubscription*>(s)); });
}

void retire_kv_watcher(kvWatcher* watcher) noexcept {
    if (watcher == nullptr) return;
    kvWatcher_Stop(watcher);  // unsubscribes its subscription; idempotent
    hand_to_reaper(watcher, [](void* w) { kvWatcher_Destroy(static_cast<kvWatcher*>(w)); });
}

}  // namespace fiskai::conns
