#pragma once
// A transport inside one process: requests and replies are handed between coroutines.
// Everything runs on the executor it is given, which must not run handlers concurrently
// (an io_context run by one thread, or a strand); close() may come from any thread.
// For tests, and for embedding an agent and its caller in one program. It behaves as the
// NATS binding does where the engine can tell: an agent nobody serves is unavailable at
// once ("no responders"), a reply that does not come in time is unavailable at the
// deadline, intakes for one identity share its requests, and requests wait in a queue
// while the serving side does not ask for them.

#include <fiskai/a2a/transport.hpp>

#include <boost/asio/any_io_executor.hpp>

#include <cstddef>
#include <memory>
#include <string_view>

namespace fiskai::a2a {

namespace detail {
struct memory_state;
}  // namespace detail

class memory_transport final : public transport {
public:
    // Requests are queued per route and identity, up to `queue_capacity` each; beyond it a
    // sender waits (within its deadline).
    explicit memory_transport(boost::asio::any_io_executor executor, std::size_t queue_capacity = 1024);
    ~memory_transport() override;
    memory_transport(const memory_transport&) = delete;
    memory_transport& operator=(const memory_transport&) = delete;

    boost::asio::awaitable<result<reply>> request(route r, std::string agent, std::string body,
                                                  std::chrono::steady_clock::duration timeout) override;
    boost::asio::awaitable<result<std::unique_ptr<intake>>> listen(route r, std::string identity) override;

    // Requests sent to `identity` on `r` that no intake has taken yet.
    [[nodiscard]] std::size_t queued(route r, std::string_view identity) const;

private:
    std::shared_ptr<detail::memory_state> state_;
};

}  // namespace fiskai::a2a
