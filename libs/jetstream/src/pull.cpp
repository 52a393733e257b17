#include <fiskai/conns/connection.hpp>
#include <fiskai/jetstream/context.hpp>
#include <fiskai/jetstream/offload.hpp>

#include "nats_calls.hpp"

#include <mutex>

namespace fiskai::jetstream {

namespace asio = boost::asio;

namespace detail {

// A pull subscription's nats.c subscription, retired when its last holder lets go: the
// pull_subscription until release() (or until the fetch in flight then has returned), and
// every message taken from it, whose settling reads the subscription (nats.c's natsMsg_Ack
// and the others follow msg->sub, which holds no reference).
struct subscription_owner {
    explicit subscription_owner(natsSubscription* s) noexcept : sub(s) {}
    ~subscription_owner() {
        conns::retire_subscription(sub);  // destroyed late: see there
    }
    subscription_owner(const subscription_owner&) = delete;
    subscription_owner& operator=(const subscription_owner&) = delete;

    natsSubscription* const sub;
};

}  // namespace detail

using detail::subscription_owner;

struct pulled_message::impl {
    std::shared_ptr<context::impl> ctx;
    std::shared_ptr<subscription_owner> subscription;
    natsMsg* msg = nullptr;
    std::string subject;
    std::string data;
    jetstream::headers hdrs;
    delivery_metadata meta;

    ~impl() {
        if (msg) natsMsg_Destroy(msg);
    }
};

pulled_message::pulled_message(std::shared_ptr<impl> p) noexcept : impl_(std::move(p)) {}
const std::string& pulled_message::subject() const noexcept { return impl_->subject; }
const std::string& pulled_message::data() const noexcept { return impl_->data; }
const headers& pulled_message::headers() const noexcept { return impl_->hdrs; }
const delivery_metadata& pulled_message::metadata() const noexcept { return impl_->meta; }

namespace {

enum class settle_kind { ack, nak, nak_delay, in_progress, term };

asio::awaitable<result<void>> settle(std::shared_ptr<pulled_message::impl> m, settle_kind kind, milliseconds delay) {
    auto pool = m->ctx->blocking;
    auto call = [m = std::move(m), kind, delay]() -> result<void> {
        jsOptions o = detail::api_options(m->ctx->default_timeout);
        natsStatus s = NATS_OK;
        switch (kind) {
            case settle_kind::ack: s = natsMsg_Ack(m->msg, &o); break;
            case settle_kind::nak: s = natsMsg_Nak(m->msg, &o); break;
            case settle_kind::nak_delay: s = natsMsg_NakWithDelay(m->msg, delay.count(), &o); break;
            case settle_kind::in_progress: s = natsMsg_InProgress(m->msg, &o); break;
            case settle_kind::term: s = natsMsg_Term(m->msg, &o); break;
        }
        if (s != NATS_OK) return detail::make_error(s);
        return {};
    };
    co_return co_await offload(pool, std::move(call));
}

std::shared_ptr<pulled_message::impl> take(const std::shared_ptr<context::impl>& ctx,
                                           const std::shared_ptr<subscription_owner>& subscription, natsMsg* msg) {
    auto m = std::make_shared<pulled_message::impl>();
    m->ctx = ctx;
    m->subscription = subscription;
    m->msg = msg;
    if (const char* s = natsMsg_GetSubject(msg)) m->subject = s;
    if (const char* d = natsMsg_GetData(msg)) m->data.assign(d, static_cast<std::size_t>(natsMsg_GetDataLength(msg)));
    m->hdrs = detail::copy_headers(msg);
    jsMsgMetaData* meta = nullptr;
    if (natsMsg_GetMetaData(&meta, msg) == NATS_OK && meta) {
        m->meta.stream_sequence = meta->Sequence.Stream;
        m->meta.consumer_sequence = meta->Sequence.Consumer;
        m->meta.num_delivered = meta->NumDelivered;
        m->meta.num_pending = meta->NumPending;
        m->meta.timestamp =
            clock_time(std::chrono::duration_cast<clock_time::duration>(std::chrono::nanoseconds(meta->Timestamp)));
        if (meta->Stream) m->meta.stream = meta->Stream;
        if (meta->Consumer) m->meta.consumer = meta->Consumer;
        jsMsgMetaData_Destroy(meta);
    }
    return m;
}

}  // namespace

asio::awaitable<result<void>> pulled_message::ack() { return settle(impl_, settle_kind::ack, {}); }
asio::awaitable<result<void>> pulled_message::nak() { return settle(impl_, settle_kind::nak, {}); }
asio::awaitable<result<void>> pulled_message::nak_with_delay(milliseconds delay) {
    return settle(impl_, settle_kind::nak_delay, delay);
}
asio::awaitable<result<void>> pulled_message::in_progress() { return settle(impl_, settle_kind::in_progress, {}); }
asio::awaitable<result<void>> pulled_message::term() { return settle(impl_, settle_kind::term, {}); }

struct pull_subscription::impl {
    std::shared_ptr<context::impl> ctx;
    std::mutex mu;
    std::shared_ptr<subscription_owner> subscription;  // guarded by mu; ours until released
    bool released = false;
    bool fetching = false;
};

pull_subscription::pull_subscription(std::shared_ptr<impl> p) noexcept : impl_(std::move(p)) {}
pull_subscription::~pull_subscription() { release(); }
pull_subscription::pull_subscription(pull_subscription&&) noexcept = default;
pull_subscription& pull_subscription::operator=(pull_subscription&& other) noexcept {
    if (this != &other) {
        release();
        impl_ = std::move(other.impl_);
    }
    return *this;
}

void pull_subscription::release() noexcept {
    if (!impl_) return;
    std::shared_ptr<subscription_owner> let_go;
    std::lock_guard lock(impl_->mu);
    impl_->released = true;
    // A fetch in flight still uses the subscription: it lets go when it returns.
    if (!impl_->fetching) let_go = std::move(impl_->subscription);
}

asio::awaitable<result<std::vector<pulled_message>>> pull_subscription::fetch(int batch, milliseconds wait) {
    if (!impl_) co_return error{errc::cancelled, 0, "the pull subscription is bound to nothing"};
    auto call = [st = impl_, batch, wait]() -> result<std::vector<pulled_message>> {
        std::shared_ptr<subscription_owner> subscription;
        {
            std::lock_guard lock(st->mu);
            if (st->released || !st->subscription)
                return error{errc::cancelled, 0, "the pull subscription was released"};
            if (st->fetching) return error{errc::invalid_argument, 0, "a fetch is already in flight"};
            st->fetching = true;
            subscription = st->subscription;
        }
        natsMsgList list{};
        jsErrCode ec = static_cast<jsErrCode>(0);
        const natsStatus s = natsSubscription_Fetch(&list, subscription->sub, batch, wait.count(), &ec);
        std::lock_guard lock(st->mu);
        st->fetching = false;
        if (st->released) {
            // Taken after release: hand it back at once rather than let it wait out AckWait.
            for (int i = 0; i < list.Count; ++i) {
                if (list.Msgs[i]) natsMsg_Nak(list.Msgs[i], nullptr);
            }
            natsMsgList_Destroy(&list);
            st->subscription.reset();  // `subscription` still holds it: retired as this returns
            return error{errc::cancelled, 0, "the pull subscription was released"};
        }
        if (s == NATS_TIMEOUT && list.Count == 0) return std::vector<pulled_message>{};
        if (s != NATS_OK && list.Count == 0) return detail::make_error(s, ec);
        std::vector<pulled_message> out;
        out.reserve(static_cast<std::size_t>(list.Count));
        for (int i = 0; i < list.Count; ++i) {
            if (!list.Msgs[i]) continue;
            out.emplace_back(take(st->ctx, subscription, list.Msgs[i]));
            list.Msgs[i] = nullptr;  // owned by the pulled_message now
        }
        natsMsgList_Destroy(&list);
        return out;
    };
    co_return co_await offload_to_thread(std::move(call));
}

asio::awaitable<result<pull_subscription>> context::bind_pull(std::string stream, std::string consumer,
                                                              std::string filter_subject, milliseconds timeout) {
    auto call = [st = impl_, stream = std::move(stream), consumer = std::move(consumer),
                 filter = std::move(filter_subject), t = impl_->effective(timeout)]() -> result<pull_subscription> {
        jsOptions o = detail::api_options(t);
        jsSubOptions so;
        jsSubOptions_Init(&so);
        so.Stream = stream.c_str();
        so.Consumer = consumer.c_str();
        natsSubscription* sub = nullptr;
        jsErrCode ec = static_cast<jsErrCode>(0);
        const natsStatus s = js_PullSubscribe(&sub, st->js, filter.c_str(), consumer.c_str(), &o, &so, &ec);
        if (s != NATS_OK) return detail::make_error(s, ec);
        auto p = std::make_shared<pull_subscription::impl>();
        p->ctx = st;
        p->subscription = std::make_shared<subscription_owner>(sub);
        return pull_subscription(std::move(p));
    };
    co_return co_await offload(impl_->blocking, std::move(call));
}

}  // namespace fiskai::jetstream
