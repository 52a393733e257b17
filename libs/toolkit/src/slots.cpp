#include <fiskai/toolkit/slots.hpp>

#include <boost/asio/experimental/concurrent_channel.hpp>

#include <atomic>
#include <boost/asio/use_awaitable.hpp>

namespace fiskai::toolkit {

// The free slots are tokens in a channel: receiving one takes a slot, sending one back
// releases it. The channel's own wait queue gives first-come order and cancellation, and
// being a concurrent channel, a slot may be released from any thread.
struct slot_pool::state {
    state(boost::asio::any_io_executor ex, std::size_t n) : tokens(ex, n), capacity(n), available(n) {
        for (std::size_t i = 0; i < n; ++i) tokens.try_send(boost::system::error_code{});
    }
    boost::asio::experimental::concurrent_channel<void(boost::system::error_code)> tokens;
    std::size_t capacity;
    std::atomic<std::size_t> available;
};

slot_pool::slot_pool(boost::asio::any_io_executor ex, std::size_t slots)
    : state_(std::make_shared<state>(std::move(ex), slots == 0 ? 1 : slots)) {}

slot_pool::~slot_pool() = default;

boost::asio::awaitable<slot_pool::slot> slot_pool::acquire() {
    auto s = state_;
    co_await s->tokens.async_receive(boost::asio::use_awaitable);
    --s->available;
    co_return slot(std::move(s));
}

std::size_t slot_pool::available() const noexcept { return state_->available; }
std::size_t slot_pool::capacity() const noexcept { return state_->capacity; }

void slot_pool::slot::release() noexcept {
    if (!state_) return;
    ++state_->available;
    state_->tokens.try_send(boost::system::error_code{});
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
