#pragma once
// A counting limit on concurrent work for coroutines. acquire() waits for a free slot,
// first come first served, and honours the awaiting coroutine's cancellation: a cancelled
// wait takes nothing and loses nothing. The returned slot gives itself back when
// destroyed, from any thread.

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>

#include <cstddef>
#include <memory>

namespace fiskai::toolkit {

class slot_pool {
public:
    struct state;

    class slot {
    public:
        slot() = default;
        slot(slot&&) noexcept = default;
        slot& operator=(slot&&) noexcept;
        slot(const slot&) = delete;
        slot& operator=(const slot&) = delete;
        ~slot();
        [[nodiscard]] explicit operator bool() const noexcept { return static_cast<bool>(state_); }

    private:
        friend class slot_pool;
        explicit slot(std::shared_ptr<state> s) : state_(std::move(s)) {}
        void release() noexcept;
        std::shared_ptr<state> state_;
    };

    // The executor is not needed (each waiter sleeps on its own); kept so callers need not
    // change.
    slot_pool(boost::asio::any_io_executor ex, std::size_t slots);
    // Waiters still queued are woken with operation_aborted.
    ~slot_pool();
    slot_pool(const slot_pool&) = delete;
    slot_pool& operator=(const slot_pool&) = delete;

    // Throws boost::system::system_error (operation_aborted) when cancelled while waiting.
    boost::asio::awaitable<slot> acquire();
    [[nodiscard]] std::size_t available() const noexcept;
    [[nodiscard]] std::size_t capacity() const noexcept;

private:
    std::shared_ptr<state> state_;
};

}  // namespace fiskai::toolkit
