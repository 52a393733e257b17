#include <fiskai/toolkit/slots.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/system/system_error.hpp>

#include <list>
#include <mutex>

namespace fiskai::toolkit {

namespace asio = boost::asio;

// A counting semaphore: a count and a FIFO of waiters under one mutex. A release hands its
// slot straight to the oldest waiter, and a waiter woken by its own cancellation reads,
// under the same mutex, whether the slot had already become its own. So a slot is always
// either free, held, or on its way to exactly one waiter: never lost. (Boost 1.81's
// concurrent_channel, used here before, refused sends after a cancelled receive, so every
// cancelled wait leaked a slot for good.)
//
// Each waiter sleeps on a timer of its own, on its own executor; a release on any thread
// only posts the wake-up there, so the timer is touched on its executor alone.
struct slot_pool::state {
    struct waiter {
        explicit waiter(const asio::any_io_executor& ex) : wake(ex, asio::steady_timer::time_point::max()) {}
        asio::steady_timer wake;
        bool done = false;     // taken off the queue: granted, cancelled or aborted
        bool granted = false;  // the slot is this waiter's
    };
    using waiter_ptr = std::shared_ptr<waiter>;

    state(std::size_t n) : capacity(n), free(n) {}

    static void wake(const waiter_ptr& w) {
        asio::post(w->wake.get_executor(), [w] { w->wake.cancel(); });
    }

    void release_one() {
        waiter_ptr next;
        {
            std::lock_guard lock(mutex);
            while (!waiters.empty() && !next) {
                next = std::move(waiters.front());
                waiters.pop_front();
                if (next->done) next.reset();
            }
            if (!next) {
                ++free;
                return;
            }
            next->done = true;
            next->granted = true;
        }
        wake(next);
    }

    void abort_all() {
        std::list<waiter_ptr> taken;
        {
            std::lock_guard lock(mutex);
            taken.swap(waiters);
            for (auto& w : taken) w->done = true;
        }
        for (auto& w : taken) wake(w);
    }

    const std::size_t capacity;
    mutable std::mutex mutex;
    std::size_t free;
    std::list<waiter_ptr> waiters;
};

slot_pool::slot_pool(asio::any_io_executor, std::size_t slots)
    : state_(std::make_shared<state>(slots == 0 ? 1 : slots)) {}

// Nobody could ever release to a waiter of a destroyed pool: end their waits now.
slot_pool::~slot_pool() { state_->abort_all(); }

asio::awaitable<slot_pool::slot> slot_pool::acquire() {
    auto s = state_;
    state::waiter_ptr w;
    {
        std::lock_guard lock(s->mutex);
        if (s->free > 0 && s->waiters.empty()) {
            --s->free;
            w = nullptr;
        } else {
            w = std::make_shared<state::waiter>(co_await asio::this_coro::executor);
            s->waiters.push_back(w);
        }
    }
    if (w) {
        // Ends when a release wakes it, or when the awaiting coroutine is cancelled.
        (void)co_await w->wake.async_wait(asio::as_tuple(asio::use_awaitable));
        std::lock_guard lock(s->mutex);
        if (!w->granted) {
            w->done = true;
            s->waiters.remove(w);
            throw boost::system::system_error(asio::error::operation_aborted);
        }
    }
    co_return slot(std::move(s));
}

std::size_t slot_pool::available() const noexcept {
    std::lock_guard lock(state_->mutex);
    return state_->free;
}

std::size_t slot_pool::capacity() const noexcept { return state_->capacity; }

void slot_pool::slot::release() noexcept {
    if (!state_) return;
    state_->release_one();
    state_.reset();
}

slot_pool::slot& slot_pool::slot::operator=(slot&& other) noexcept {
    if (this != &other) {
        release();
        state_ = std::move(other.state_);
    }
    return *this;
}

slot_pool::slot::~slot() { release(); }

}  // namespace fiskai::toolkit
