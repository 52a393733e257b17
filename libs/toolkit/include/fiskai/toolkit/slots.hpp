#pragma once
// A counting limit on concurrent work for coroutines. acquire() waits for a free slot,
// first come first served, and honours the awaiting coroutine's cancellation; the
// returned slot gives itself back when destroyed, from any thread.

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>

#include <cstddef>
#include <memory>

namespace fiskai::toolkit {

class slot_pool {
    struct state;

public:
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

    slot_pool(boost::asio::any_io_executor ex, std::size_t slots);
    ~slot_pool();

    // Throws boost::system::system_error (operation_aborted) when cancelled while waiting.
    boost::asio::awaitable<slot> acquire();
    [[nodiscard]] std::size_t available() const noexcept;
    [[nodiscard]] std::size_t capacity() const noexcept;

private:
    std::shared_ptr<state> state_;
};

}  // namespace fiskai::toolkit
