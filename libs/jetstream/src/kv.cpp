#include <fiskai/conns/connection.hpp>
#include <fiskai/jetstream/context.hpp>
#include <fiskai/jetstream/offload.hpp>

#include "nats_calls.hpp"

#include <boost/asio/execution/outstanding_work.hpp>
#include <boost/asio/prefer.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <fmt/format.h>

#include <atomic>
#include <deque>
#include <mutex>
#include <thread>

namespace fiskai::jetstream {

namespace asio = boost::asio;

struct kv_bucket::impl {
    std::shared_ptr<context::impl> ctx;
    jsCtx* js = nullptr;  // our own, so that the bucket's calls wait `timeout`
    kvStore* kv = nullptr;
    std::string name;
    milliseconds timeout{15000};

    ~impl() {
        if (kv) kvStore_Destroy(kv);
        if (js) jsCtx_Destroy(js);
    }
    [[nodiscard]] std::string stream() const { return "KV_" + name; }
    [[nodiscard]] std::string subject(const std::string& key) const { return "$KV." + name + "." + key; }
};

namespace {

// nats.c's rule for a key (its validKey): letters, digits and `-/_=.`, not starting or
// ending with `.`. Checked here too because create/update/put publish directly.
bool valid_key(const std::string& key) {
    if (key.empty() || key.front() == '.' || key.back() == '.') return false;
    for (const char c : key) {
        const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
                        c == '/' || c == '_' || c == '=' || c == '.';
        if (!ok) return false;
    }
    return true;
}

error invalid_key(const std::string& key) {
    return error{errc::invalid_argument, 0,
                 fmt::format("invalid KV key \"{}\": use letters, digits and '-', '/', '_', '=' or '.' (not first "
                             "or last)",
                             key)};
}

kv_entry copy_entry(kvEntry* e) {
    kv_entry out;
    if (const char* b = kvEntry_Bucket(e)) out.bucket = b;
    if (const char* k = kvEntry_Key(e)) out.key = k;
    if (const void* v = kvEntry_Value(e)) out.value.assign(static_cast<const char*>(v), kvEntry_ValueLen(e));
    out.revision = kvEntry_Revision(e);
    out.created =
        clock_time(std::chrono::duration_cast<clock_time::duration>(std::chrono::nanoseconds(kvEntry_Created(e))));
    out.delta = kvEntry_Delta(e);
    switch (kvEntry_Operation(e)) {
        case kvOp_Delete: out.operation = kv_operation::del; break;
        case kvOp_Purge: out.operation = kv_operation::purge; break;
        default: out.operation = kv_operation::put; break;
    }
    return out;
}

// One publish to the bucket's subject with an optional expected revision (0: no message).
result<std::uint64_t> publish_value(const kv_bucket::impl& b, const std::string& key, const std::string& value,
                                    std::optional<std::uint64_t> expected) {
    jsPubOptions po;
    jsPubOptions_Init(&po);
    po.MaxWait = b.timeout.count();
    if (expected) {
        if (*expected == 0) {
            po.ExpectNoMessage = true;
        } else {
            po.ExpectLastSubjectSeq = *expected;
        }
    }
    const std::string subject = b.subject(key);
    jsPubAck* pa = nullptr;
    jsErrCode ec = static_cast<jsErrCode>(0);
    const natsStatus s = js_Publish(&pa, b.js, subject.c_str(), value.data(), static_cast<int>(value.size()), &po, &ec);
    if (s != NATS_OK) return detail::make_error(s, ec);
    const std::uint64_t rev = pa->Sequence;
    jsPubAck_Destroy(pa);
    return rev;
}

}  // namespace

kv_bucket::kv_bucket(std::shared_ptr<impl> p) noexcept : impl_(std::move(p)) {}
const std::string& kv_bucket::name() const noexcept { return impl_->name; }

asio::awaitable<result<kv_bucket>> context::bind_kv(std::string bucket, milliseconds timeout) {
    auto call = [st = impl_, bucket = std::move(bucket), t = impl_->effective(timeout)]() -> result<kv_bucket> {
        auto b = std::make_shared<kv_bucket::impl>();
        b->ctx = st;
        b->name = bucket;
        b->timeout = t;
        jsOptions o = detail::api_options(t);
        natsStatus s = natsConnection_JetStream(&b->js, st->nc, &o);
        if (s == NATS_OK) s = js_KeyValue(&b->kv, b->js, bucket.c_str());
        if (s != NATS_OK) {
            auto e = detail::make_error(s);
            if (s == NATS_NOT_FOUND) e.err_code = api_stream_not_found;
            return e;
        }
        return kv_bucket(std::move(b));
    };
    co_return co_await offload(impl_->blocking, std::move(call));
}

asio::awaitable<result<kv_entry>> kv_bucket::get(std::string key) {
    auto call = [b = impl_, key = std::move(key)]() -> result<kv_entry> {
        kvEntry* e = nullptr;
        const natsStatus s = kvStore_Get(&e, b->kv, key.c_str());
        if (s != NATS_OK) return detail::make_error(s);
        auto out = copy_entry(e);
        kvEntry_Destroy(e);
        return out;
    };
    co_return co_await offload(impl_->ctx->blocking, std::move(call));
}

asio::awaitable<result<std::uint64_t>> kv_bucket::create(std::string key, std::string value) {
    if (!valid_key(key)) co_return invalid_key(key);
    auto call = [b = impl_, key = std::move(key), value = std::move(value)]() -> result<std::uint64_t> {
        auto first = publish_value(*b, key, value, 0);
        if (first || first.error().err_code != api_wrong_last_sequence) return first;
        // The subject holds something: a delete or purge marker may be written over (as
        // nats.c's kvStore_Create does), a live value may not.
        jsOptions o = detail::api_options(b->timeout);
        natsMsg* last = nullptr;
        jsErrCode ec = static_cast<jsErrCode>(0);
        const std::string stream = b->stream();
        const std::string subject = b->subject(key);
        if (js_GetLastMsg(&last, b->js, stream.c_str(), subject.c_str(), &o, &ec) != NATS_OK) return first;
        const char* op = nullptr;
        const bool marker = natsMsgHeader_Get(last, "KV-Operation", &op) == NATS_OK && op &&
                            (std::string_view(op) == "DEL" || std::string_view(op) == "PURGE");
        const std::uint64_t seq = natsMsg_GetSequence(last);
        natsMsg_Destroy(last);
        if (!marker) return first;
        return publish_value(*b, key, value, seq);
    };
    co_return co_await offload(impl_->ctx->blocking, std::move(call));
}

asio::awaitable<result<std::uint64_t>> kv_bucket::update(std::string key, std::string value, std::uint64_t revision) {
    if (!valid_key(key)) co_return invalid_key(key);
    auto call = [b = impl_, key = std::move(key), value = std::move(value), revision]() -> result<std::uint64_t> {
        return publish_value(*b, key, value, revision);
    };
    co_return co_await offload(impl_->ctx->blocking, std::move(call));
}

asio::awaitable<result<std::uint64_t>> kv_bucket::put(std::string key, std::string value) {
    if (!valid_key(key)) co_return invalid_key(key);
    auto call = [b = impl_, key = std::move(key), value = std::move(value)]() -> result<std::uint64_t> {
        return publish_value(*b, key, value, std::nullopt);
    };
    co_return co_await offload(impl_->ctx->blocking, std::move(call));
}

asio::awaitable<result<void>> kv_bucket::remove(std::string key) {
    auto call = [b = impl_, key = std::move(key)]() -> result<void> {
        const natsStatus s = kvStore_Delete(b->kv, key.c_str());
        if (s != NATS_OK) return detail::make_error(s);
        return {};
    };
    co_return co_await offload(impl_->ctx->blocking, std::move(call));
}

asio::awaitable<result<kv_status>> kv_bucket::status() {
    auto call = [b = impl_]() -> result<kv_status> {
        jsOptions o = detail::api_options(b->timeout);
        jsStreamInfo* si = nullptr;
        jsErrCode ec = static_cast<jsErrCode>(0);
        const std::string stream = b->stream();
        const natsStatus s = js_GetStreamInfo(&si, b->js, stream.c_str(), &o, &ec);
        if (s != NATS_OK) return detail::make_error(s, ec);
        const auto info = detail::to_stream_info(si);
        jsStreamInfo_Destroy(si);
        kv_status out;
        out.bucket = b->name;
        out.values = info.state.msgs;
        out.history = info.config.max_msgs_per_subject;
        out.ttl = info.config.max_age;
        out.max_value_size = info.config.max_msg_size;
        return out;
    };
    co_return co_await offload(impl_->ctx->blocking, std::move(call));
}

namespace {

// How long the reader thread waits for an update before it looks whether stop() was called.
constexpr milliseconds reader_wait{100};

error stopped_error() { return error{errc::cancelled, 0, "the watcher was stopped"}; }

}  // namespace

// The watcher's two halves: what the io thread touches (the queue and the timer that
// wakes a waiting next()), and what the reader thread shares with stop().
struct kv_watcher::impl {
    explicit impl(asio::any_io_executor ex) : wake(ex) {}
    std::deque<watch_event> queue;
    asio::steady_timer wake;
    std::optional<error> ended;

    struct reader {
        std::mutex mu;
        kvWatcher* watcher = nullptr;  // destroyed by the reader thread when it ends
        bool stopped = false;
    };
    std::shared_ptr<reader> shared = std::make_shared<reader>();
};

kv_watcher::kv_watcher(std::shared_ptr<impl> p) noexcept : impl_(std::move(p)) {}
kv_watcher::~kv_watcher() { stop(); }
kv_watcher::kv_watcher(kv_watcher&&) noexcept = default;
kv_watcher& kv_watcher::operator=(kv_watcher&& other) noexcept {
    if (this != &other) {
        stop();
        impl_ = std::move(other.impl_);
    }
    return *this;
}

void kv_watcher::stop() noexcept {
    if (!impl_) return;
    {
        auto& r = *impl_->shared;
        std::lock_guard lock(r.mu);
        if (r.stopped) return;
        r.stopped = true;
    }
    // The reader thread notices within one of its short waits and ends the nats.c watcher
    // itself. Stopping it from here instead would race its kvWatcher_Next: nats.c 3.4.1
    // drops (and leaks) a message that Next took as the watcher stopped.
    if (!impl_->ended) impl_->ended = stopped_error();
    impl_->wake.cancel();
}

asio::awaitable<result<watch_event>> kv_watcher::next(milliseconds wait) {
    auto st = impl_;
    if (!st) co_return error{errc::cancelled, 0, "the watcher watches nothing"};
    if (st->queue.empty() && !st->ended) {
        boost::system::error_code ec;
        st->wake.expires_after(wait);
        co_await st->wake.async_wait(asio::redirect_error(asio::use_awaitable, ec));
    }
    if (!st->queue.empty()) {
        watch_event ev = std::move(st->queue.front());
        st->queue.pop_front();
        co_return ev;
    }
    if (st->ended) co_return *st->ended;
    co_return error{errc::timed_out, 0, "no KV update within the wait"};
}

asio::awaitable<result<kv_watcher>> kv_bucket::watch(std::string keys, watch_options options) {
    auto ex = co_await asio::this_coro::executor;
    auto call = [b = impl_, keys = std::move(keys), options]() -> result<kvWatcher*> {
        kvWatchOptions o;
        kvWatchOptions_Init(&o);
        o.IgnoreDeletes = options.ignore_deletes;
        o.IncludeHistory = options.include_history;
        o.MetaOnly = options.meta_only;
        o.Timeout = b->timeout.count();
        kvWatcher* w = nullptr;
        const natsStatus s = kvStore_Watch(&w, b->kv, keys.c_str(), &o);
        if (s != NATS_OK) return detail::make_error(s);
        return w;
    };
    auto made = co_await offload(impl_->ctx->blocking, std::move(call));
    if (!made) co_return made.error();

    auto st = std::make_shared<kv_watcher::impl>(ex);
    st->shared->watcher = *made;
    // The reader keeps the io context's work count up until it ends, so what it posts
    // always has a context to run on; stop() ends it within one wait (reader_wait).
    auto tracked = asio::prefer(ex, asio::execution::outstanding_work.tracked);
    // The reader thread never owns the io side (its timer belongs to the io thread): it
    // posts events that find it through a weak pointer, on the io thread.
    std::weak_ptr<kv_watcher::impl> weak = st;
    std::thread([weak, r = st->shared, tracked, bucket = impl_]() mutable {
        auto deliver = [&](auto apply) {
            asio::post(tracked, [weak, apply = std::move(apply)]() mutable {
                if (auto live = weak.lock()) {
                    apply(*live);
                    live->wake.cancel();
                }
            });
        };
        std::uint64_t last_revision = 0;
        for (;;) {
            {
                std::lock_guard lock(r->mu);
                if (r->stopped) break;
            }
            kvEntry* e = nullptr;
            const natsStatus s = kvWatcher_Next(&e, r->watcher, reader_wait.count());
            if (s == NATS_TIMEOUT) continue;
            if (s != NATS_OK) {
                bool stopped = false;
                {
                    std::lock_guard lock(r->mu);
                    stopped = r->stopped;
                }
                error why = stopped ? stopped_error() : detail::make_error(s);
                deliver([why](kv_watcher::impl& io) { io.ended = why; });
                break;
            }
            // nats.c's ordered consumer can deliver an entry again after it resets itself;
            // entries come in revision order, so one at or below the last is a repeat.
            if (e && kvEntry_Revision(e) <= last_revision) {
                kvEntry_Destroy(e);
                continue;
            }
            if (e) last_revision = kvEntry_Revision(e);
            watch_event ev;
            if (e) {
                ev.entry = copy_entry(e);
                kvEntry_Destroy(e);
            }
            deliver([ev = std::move(ev)](kv_watcher::impl& io) mutable { io.queue.push_back(std::move(ev)); });
        }
        {
            std::lock_guard lock(r->mu);
            conns::retire_kv_watcher(r->watcher);  // destroyed late: see there
            r->watcher = nullptr;
        }
        // The io context's work count drops last: once it does, the context may be gone.
        bucket.reset();
        r.reset();
        tracked = asio::any_io_executor();
    }).detach();
    co_return kv_watcher(std::move(st));
}

}  // namespace fiskai::jetstream
