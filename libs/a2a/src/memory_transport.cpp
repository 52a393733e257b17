#include <fiskai/a2a/memory_transport.hpp>

#include <fiskai/gocompat/quote.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/experimental/channel.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <atomic>
#include <map>
#include <mutex>

namespace fiskai::a2a {

namespace asio = boost::asio;
using namespace asio::experimental::awaitable_operators;

namespace {

using request_channel = asio::experimental::channel<void(boost::system::error_code, incoming)>;
using reply_channel = asio::experimental::channel<void(boost::system::error_code, reply)>;

// The queue of one route and identity, shared by every intake listening there.
struct mailbox {
    mailbox(const asio::any_io_executor& ex, std::size_t capacity) : channel(ex, capacity) {}
    request_channel channel;
    std::size_t queued = 0;     // sent and not yet taken
    std::size_t listeners = 0;  // guarded by the state's mutex
};

}  // namespace

struct detail::memory_state {
    asio::any_io_executor executor;
    std::size_t capacity;
    mutable std::mutex mutex;
    std::map<std::string, std::shared_ptr<mailbox>, std::less<>> boxes;

    std::shared_ptr<mailbox> find(std::string_view address) const {
        std::lock_guard lock(mutex);
        const auto it = boxes.find(address);
        return it == boxes.end() ? nullptr : it->second;
    }

    std::shared_ptr<mailbox> attach(const std::string& address) {
        std::lock_guard lock(mutex);
        auto& box = boxes[address];
        if (!box) box = std::make_shared<mailbox>(executor, capacity);
        ++box->listeners;
        return box;
    }

    // The last intake gone, the address has no responders and what was queued is dropped
    // (each dropped request's responder answers it with a 500).
    void detach(const std::string& address, const std::shared_ptr<mailbox>& box) {
        std::lock_guard lock(mutex);
        if (--box->listeners != 0) return;
        boxes.erase(address);
        asio::post(executor, [box] {
            box->channel.reset();  // drops what is queued: each responder answers with a 500
            box->channel.close();
            box->queued = 0;
        });
    }
};

namespace {

class memory_intake final : public intake {
public:
    memory_intake(std::shared_ptr<detail::memory_state> st, std::string address, std::shared_ptr<mailbox> box)
        : shared_(std::make_shared<shared>(std::move(st), std::move(address), std::move(box))) {}
    ~memory_intake() override { close(); }

    asio::awaitable<std::optional<incoming>> next() override {
        auto s = shared_;
        if (s->closed) co_return std::nullopt;
        auto [ec, in] = co_await s->box->channel.async_receive(
            asio::bind_cancellation_slot(s->cancel.slot(), asio::as_tuple(asio::use_awaitable)));
        if (ec || s->closed) co_return std::nullopt;
        --s->box->queued;
        co_return std::optional<incoming>(std::move(in));
    }

    void close() override {
        auto s = shared_;
        if (s->closed.exchange(true)) return;
        s->st->detach(s->address, s->box);
        asio::post(s->st->executor, [s] { s->cancel.emit(asio::cancellation_type::terminal); });
    }

private:
    struct shared {
        shared(std::shared_ptr<detail::memory_state> state, std::string addr, std::shared_ptr<mailbox> b)
            : st(std::move(state)), address(std::move(addr)), box(std::move(b)) {}
        std::shared_ptr<detail::memory_state> st;
        std::string address;
        std::shared_ptr<mailbox> box;
        asio::cancellation_signal cancel;
        std::atomic<bool> closed{false};
    };
    std::shared_ptr<shared> shared_;
};

}  // namespace

memory_transport::memory_transport(asio::any_io_executor executor, std::size_t queue_capacity)
    : state_(std::make_shared<detail::memory_state>()) {
    state_->executor = std::move(executor);
    state_->capacity = queue_capacity;
}

memory_transport::~memory_transport() = default;

asio::awaitable<result<reply>> memory_transport::request(route r, std::string agent, std::string body,
                                                         std::chrono::steady_clock::duration timeout) {
    const auto st = state_;
    const auto address = subject(r, agent);
    const auto box = st->find(address);
    if (!box) {
        co_return make_error(errc::agent_unavailable,
                             "no reply on " + gocompat::quote(address) + ": no responders available for request");
    }

    auto answer = std::make_shared<reply_channel>(st->executor, 1);
    incoming in{std::move(body),
                responder([answer](reply rep) { answer->try_send(boost::system::error_code{}, std::move(rep)); })};

    auto exchange = [&]() -> asio::awaitable<result<reply>> {
        ++box->queued;
        try {
            co_await box->channel.async_send(boost::system::error_code{}, std::move(in), asio::use_awaitable);
        } catch (...) {
            --box->queued;
            throw;
        }
        auto [ec, rep] = co_await answer->async_receive(asio::as_tuple(asio::use_awaitable));
        if (ec)
            co_return make_error(errc::transport_failure,
                                 "requesting " + gocompat::quote(address) + ": " + ec.message());
        co_return rep;
    };

    asio::steady_timer deadline(st->executor, timeout);
    try {
        auto outcome = co_await (exchange() || deadline.async_wait(asio::use_awaitable));
        if (outcome.index() == 0) co_return std::get<0>(std::move(outcome));
        co_return make_error(errc::agent_unavailable,
                             "no reply on " + gocompat::quote(address) + ": deadline exceeded");
    } catch (const boost::system::system_error& e) {
        co_return make_error(errc::transport_failure,
                             "requesting " + gocompat::quote(address) + ": " + e.code().message());
    }
}

asio::awaitable<result<std::unique_ptr<intake>>> memory_transport::listen(route r, std::string identity) {
    auto address = subject(r, identity);
    auto box = state_->attach(address);
    co_return std::unique_ptr<intake>(std::make_unique<memory_intake>(state_, std::move(address), std::move(box)));
}

std::size_t memory_transport::queued(route r, std::string_view identity) const {
    const auto box = state_->find(subject(r, identity));
    return box ? box->queued : 0;
}

}  // namespace fiskai::a2a
