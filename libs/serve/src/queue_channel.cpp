#include <fiskai/conns/connection.hpp>
#include <fiskai/gocompat/duration.hpp>
#include <fiskai/jetstream/context.hpp>
#include <fiskai/serve/queue_channel.hpp>
#include <fiskai/serve/queue_rules.hpp>
#include <fiskai/serve/session_ids.hpp>

#include <nats/nats.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <utility>

namespace fiskai::serve {

namespace asio = boost::asio;
namespace rules = queue_rules;
namespace js = jetstream;

namespace {

// A core NATS subscription whose callback runs a handler; the handler is freed by nats.c's
// completion callback, once no delivery can still be using it.
class advisory_subscription {
public:
    using handler = std::function<void(std::string)>;

    static natsSubscription* subscribe(natsConnection* nc, const std::string& subject, const std::string& queue,
                                       handler h) {
        auto* closure = new handler(std::move(h));
        natsSubscription* sub = nullptr;
        if (natsConnection_QueueSubscribe(&sub, nc, subject.c_str(), queue.c_str(), on_message, closure) != NATS_OK) {
            delete closure;
            return nullptr;
        }
        // On failure the connection is already closed: the handler is leaked rather than risked.
        natsSubscription_SetOnCompleteCB(sub, on_complete, closure);
        return sub;
    }

private:
    static void on_message(natsConnection*, natsSubscription*, natsMsg* msg, void* closure) {
        try {
            std::string data;
            if (const char* d = natsMsg_GetData(msg))
                data.assign(d, static_cast<std::size_t>(natsMsg_GetDataLength(msg)));
            (*static_cast<handler*>(closure))(std::move(data));
        } catch (...) {  // nothing may escape into C
        }
        natsMsg_Destroy(msg);
    }
    static void on_complete(void* closure) { delete static_cast<handler*>(closure); }
};

}  // namespace

struct queue_channel::impl : std::enable_shared_from_this<queue_channel::impl> {
    asio::any_io_executor executor;
    conns::connection* nats = nullptr;
    js::context* jsctx = nullptr;
    queue_channel_options options;
    rules::storage_names names;
    js::consumer_info consumer;
    js::pull_subscription sub;
    js::kv_bucket answers;
    natsSubscription* advisories = nullptr;
    bool released = false;
    bool unbound = false;
    std::size_t in_flight = 0;
    std::size_t advisories_handled = 0;

    ~impl() { unbind(); }

    [[nodiscard]] std::chrono::nanoseconds heartbeat_interval() const {
        const auto wait = consumer.config.ack_wait.count() > 0 ? consumer.config.ack_wait : options.ack_wait;
        return wait / 3;
    }

    void unbind() {
        if (unbound) return;
        unbound = true;
        sub.release();
        if (advisories) {
            conns::retire_subscription(advisories);  // destroyed late: see there
            advisories = nullptr;
        }
    }

    // After release(), the subscription goes with the last job settled (§7.5).
    void job_settled() {
        if (in_flight > 0) --in_flight;
        if (released && in_flight == 0) unbind();
    }

    // Stores `body` under the task's key. An error is logged and returned.
    asio::awaitable<bool> store(const std::string& task, std::string body) {
        const auto key = rules::answer_key(options.identity, task);
        auto put = co_await answers.put(key, std::move(body));
        if (!put) {
            options.log.warn("queue: could not store an answer", {{"key", key}, {"error", put.error().message}});
            co_return false;
        }
        co_return true;
    }

    // Stores `body` under the task's key only when no answer is there yet, which then stays.
    // Returns false when one was there; any other failure is logged as storing `what`.
    asio::awaitable<bool> create_answer(const std::string& task, std::string body, std::string_view what) {
        const auto key = rules::answer_key(options.identity, task);
        auto created = co_await answers.create(key, std::move(body));
        if (!created && created.error().err_code == js::api_wrong_last_sequence) co_return false;
        if (!created)
            options.log.warn(fmt::format("queue: could not store {}", what),
                             {{"key", key}, {"error", created.error().message}});
        co_return true;
    }

    // An invalid job: its error stored when a task id could be read, then Term.
    asio::awaitable<void> settle_invalid(js::pulled_message msg, rules::invalid_job bad) {
        const auto seq = msg.metadata().stream_sequence;
        if (bad.task.empty()) {
            options.log.warn(rules::text::dropped_invalid(seq, bad.error));
        } else {
            options.log.warn("queue: terminated an invalid job",
                             {{"task", bad.task}, {"stream_seq", std::to_string(seq)}, {"error", bad.error}});
            a2a::header request;
            request.id = bad.task;
            request.request = bad.task;
            auto body = rules::encode_answer(rules::invalid_answer(bad.error), request, options.identity,
                                             queue_session_id_for(bad.task));
            // A malformed job naming a task that was answered (a producer's bad retry) must
            // not replace that answer.
            const bool stored = co_await create_answer(bad.task, std::move(body), "an invalid job's answer");
            if (!stored)
                options.log.warn("queue: kept the answer already stored for the invalid job's task",
                                 {{"task", bad.task}, {"stream_seq", std::to_string(seq)}});
        }
        // GCC 12: no temporaries inside a co_await expression.
        rules::dead_letter record{bad.task, seq, msg.metadata().num_delivered, bad.error};
        std::string job = msg.data();
        co_await file_dead_letter(record, std::move(job));
        auto t = co_await msg.term();
        if (!t) options.log.warn("queue: could not terminate a job", {{"error", t.error().message}});
    }

    std::string queue_session_id_for(const std::string& task) const;

    // A job that failed for good goes to the dead-letter stream, when there is one.
    // `d` is the caller's local, alive across the await (a by-value aggregate parameter of
    // a coroutine was destroyed twice by GCC 12).
    asio::awaitable<void> file_dead_letter(const rules::dead_letter& d, std::string job) {
        if (options.dead_letter.empty()) co_return;
        auto self = shared_from_this();
        auto headers = rules::dead_letter_headers(d);
        auto subject = rules::dead_letter_subject(options.identity);
        // GCC 12: a defaulted class-type argument is a temporary inside the co_await too.
        js::publish_options po;
        auto published = co_await jsctx->publish(std::move(subject), std::move(job), std::move(headers), po);
        if (!published)
            options.log.warn(
                "queue: could not file a dead letter",
                {{"task", d.task}, {"stream_seq", std::to_string(d.stream_seq)}, {"error", published.error().message}});
    }

    asio::awaitable<void> on_advisory(std::string body);
};

std::string queue_channel::impl::queue_session_id_for(const std::string& task) const {
    return queue_session_id(options.identity, task);
}

namespace {

// A job taken (an invalid one too) counted in the channel's in_flight until it is settled,
// on every path: a settle cut short (the server's report timeout cancels done()) or a job
// dropped unsettled counts out as well, so after release() the subscription still goes
// with the last job (§7.5).
class in_flight_slot {
public:
    explicit in_flight_slot(std::shared_ptr<queue_channel::impl> ch) : channel_(std::move(ch)) {
        ++channel_->in_flight;
    }
    in_flight_slot(in_flight_slot&& other) noexcept : channel_(std::exchange(other.channel_, nullptr)) {}
    in_flight_slot(const in_flight_slot&) = delete;
    in_flight_slot& operator=(const in_flight_slot&) = delete;
    in_flight_slot& operator=(in_flight_slot&&) = delete;
    ~in_flight_slot() { release(); }

    void release() noexcept {
        if (auto ch = std::exchange(channel_, nullptr)) ch->job_settled();
    }

private:
    std::shared_ptr<queue_channel::impl> channel_;
};

// One job taken: its message, its heartbeat and its settling. All on the executor.
struct job_state : std::enable_shared_from_this<job_state> {
    std::shared_ptr<queue_channel::impl> channel;
    in_flight_slot slot;
    js::pulled_message msg;
    rules::job job;
    asio::steady_timer timer;
    bool finished = false;

    job_state(std::shared_ptr<queue_channel::impl> ch, js::pulled_message m, rules::job j)
        : channel(std::move(ch)), slot(channel), msg(std::move(m)), job(std::move(j)), timer(channel->executor) {}

    [[nodiscard]] std::uint64_t delivery() const { return msg.metadata().num_delivered; }

    // `+WPI` every ack_wait / 3 until the job is settled, so the ack deadline never passes
    // while this worker lives (and no second worker takes the session).
    static asio::awaitable<void> heartbeat(std::shared_ptr<job_state> self) {
        const auto interval = self->channel->heartbeat_interval();
        for (;;) {
            self->timer.expires_after(interval);
            boost::system::error_code ec;
            co_await self->timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
            if (self->finished) co_return;
            auto r = co_await self->msg.in_progress();
            if (!r)
                self->channel->options.log.debug("queue: a heartbeat failed",
                                                 {{"task", self->job.task}, {"error", r.error().message}});
        }
    }

    asio::awaitable<void> settle(outcome o) {
        finished = true;
        timer.cancel();
        const in_flight_slot settling = std::move(slot);  // counted out as this ends, however it ends
        auto& log = channel->options.log;
        const auto d = rules::decide(o, delivery(), channel->consumer.config.max_deliver);
        const auto delivery_text = std::to_string(delivery());
        switch (d.action) {
            case rules::settle::nak: {
                log.info("queue: handed a job back", {{"task", job.task}, {"delivery", delivery_text}});
                auto r = co_await msg.nak();
                if (!r) log.warn("queue: could not nak a job", {{"task", job.task}, {"error", r.error().message}});
                break;
            }
            case rules::settle::nak_with_delay: {
                log.warn("queue: a job crashed; it will be delivered again",
                         {{"task", job.task}, {"delivery", delivery_text}, {"error", o.error}});
                auto r = co_await msg.nak_with_delay(channel->options.crash_delay);
                if (!r) log.warn("queue: could not nak a job", {{"task", job.task}, {"error", r.error().message}});
                break;
            }
            case rules::settle::store_then_ack: {
                auto body = rules::encode_answer(d.answer, job.request, channel->options.identity, job.session_id);
                // The answer is stored before the ack: a job acked is a job answered.
                if (!co_await channel->store(job.task, std::move(body))) {
                    // The session is journaled: the redelivery replays it without a model call.
                    auto r = co_await msg.nak_with_delay(channel->options.put_retry_delay);
                    if (!r) log.warn("queue: could not nak a job", {{"task", job.task}, {"error", r.error().message}});
                    break;
                }
                if (d.dead) {
                    std::string why;
                    if (auto* e = std::get_if<a2a::task_error>(&d.answer)) why = e->error;
                    rules::dead_letter record{job.task, msg.metadata().stream_sequence, delivery(), std::move(why)};
                    std::string bytes = msg.data();
                    co_await channel->file_dead_letter(record, std::move(bytes));
                }
                auto r = co_await msg.ack();
                if (!r)
                    log.warn("queue: could not ack a job (it will be delivered again and replayed)",
                             {{"task", job.task}, {"error", r.error().message}});
                else
                    log.info(
                        "queue: answered a job",
                        {{"task", job.task}, {"delivery", delivery_text}, {"replayed", o.replayed ? "true" : "false"}});
                break;
            }
        }
    }
};

class queue_work final : public work {
public:
    explicit queue_work(std::shared_ptr<job_state> s) : state_(std::move(s)) {}
    ~queue_work() override {
        // Destroyed without done() (the server never does that): stop the heartbeat so the
        // job goes back to the stream when its ack wait passes.
        if (!state_->finished) {
            state_->finished = true;
            state_->timer.cancel();
            state_->slot.release();
        }
    }

    run_hooks run_context() override { return {}; }

    asio::awaitable<void> done(outcome result) override {
        auto s = state_;
        co_await s->settle(std::move(result));
    }

private:
    std::shared_ptr<job_state> state_;
};

}  // namespace

asio::awaitable<void> queue_channel::impl::on_advisory(std::string body) {
    auto self = shared_from_this();
    auto adv = rules::parse_max_deliveries(body);
    if (!adv) co_return;
    auto got = co_await jsctx->get_message(options.stream, adv->stream_seq);
    if (!got) {
        options.log.debug("queue: a job past max deliveries is gone",
                          {{"stream_seq", std::to_string(adv->stream_seq)}, {"error", got.error().message}});
        co_return;
    }
    auto decoded = rules::decode_job(got->data, got->header("Nats-Msg-Id"), options.identity, options.tool_names);
    std::string task;
    if (auto* j = std::get_if<rules::job>(&decoded))
        task = j->task;
    else
        task = std::get<rules::invalid_job>(decoded).task;
    if (!task.empty()) {
        a2a::header request;
        if (auto* j = std::get_if<rules::job>(&decoded)) {
            request = static_cast<const a2a::header&>(j->request);
        } else {
            request.id = task;
            request.request = task;
        }
        auto answer = rules::encode_answer(rules::max_deliveries_answer(adv->deliveries), request, options.identity,
                                           queue_session_id_for(task));
        // Create, not put: an answer a worker stored in the meantime stays.
        (void)co_await create_answer(task, std::move(answer), "the answer of a job past max deliveries");
    }
    rules::dead_letter record{task, adv->stream_seq, adv->deliveries,
                              rules::max_deliveries_answer(adv->deliveries).error};
    std::string job = got->data;
    co_await file_dead_letter(record, std::move(job));
    options.log.warn("queue: a job was delivered too many times without finishing; removed it",
                     {{"task", task},
                      {"stream_seq", std::to_string(adv->stream_seq)},
                      {"deliveries", std::to_string(adv->deliveries)}});
    auto removed = co_await jsctx->delete_message(options.stream, adv->stream_seq);
    if (!removed && removed.error().code != js::errc::not_found)
        options.log.warn("queue: could not remove a job past max deliveries",
                         {{"stream_seq", std::to_string(adv->stream_seq)}, {"error", removed.error().message}});
    ++advisories_handled;
}

queue_channel::queue_channel(std::shared_ptr<impl> p) noexcept : impl_(std::move(p)) {}

queue_channel::~queue_channel() {
    release();
    // Works still out keep the impl; the subscription goes with the last of them.
}

asio::awaitable<std::shared_ptr<queue_channel>> queue_channel::open(conns::connection& nats, js::context& jsctx,
                                                                    asio::any_io_executor executor,
                                                                    queue_channel_options options) {
    if (options.consumer.empty()) options.consumer = options.identity;
    auto st = std::make_shared<impl>();
    st->executor = executor;
    st->nats = &nats;
    st->jsctx = &jsctx;
    st->names = rules::storage_names{options.identity, options.stream, options.task_store, options.consumer,
                                     options.context_name.empty() ? std::string("default") : options.context_name};
    st->options = std::move(options);
    const auto& o = st->options;
    const auto& n = st->names;
    const auto timeout = o.startup_timeout;

    std::string no_filter;
    auto info = co_await jsctx.get_stream_info(o.stream, no_filter, timeout);
    if (!info) {
        if (info.error().code == js::errc::no_responders) throw queue_error(rules::text::jetstream_disabled(n));
        if (info.error().code == js::errc::not_found) throw queue_error(rules::text::stream_missing(n));
        throw queue_error(fmt::format("queue: could not read stream \"{}\": {}", o.stream, info.error().message));
    }
    if (auto bad = rules::check_stream(n, *info)) throw queue_error(*bad);

    auto bucket = co_await jsctx.bind_kv(o.task_store, timeout);
    if (!bucket) {
        if (bucket.error().code == js::errc::not_found) throw queue_error(rules::text::bucket_missing(n));
        throw queue_error(
            fmt::format("queue: could not read KV bucket \"{}\": {}", o.task_store, bucket.error().message));
    }
    st->answers = std::move(*bucket);
    auto status = co_await st->answers.status();
    if (!status)
        throw queue_error(
            fmt::format("queue: could not read KV bucket \"{}\": {}", o.task_store, status.error().message));
    if (auto bad = rules::check_bucket(n, *status)) throw queue_error(*bad);

    auto consumer = co_await jsctx.get_consumer_info(o.stream, o.consumer, timeout);
    if (!consumer) {
        if (consumer.error().code == js::errc::not_found) throw queue_error(rules::text::consumer_missing(n));
        if (consumer.error().err_code == js::api_max_consumers_on_subject)
            throw queue_error(rules::text::consumer_taken(n));
        throw queue_error(fmt::format("queue: could not read consumer \"{}\" on stream \"{}\": {}", o.consumer,
                                      o.stream, consumer.error().message));
    }
    rules::consumer_expectation want;
    want.ack_wait = o.ack_wait;
    want.max_deliver = o.max_deliver;
    if (auto bad = rules::check_consumer(n, *consumer, want)) throw queue_error(*bad);
    st->consumer = std::move(*consumer);

    if (o.dead_letter.empty()) {
        o.log.info(std::string(rules::text::no_dead_letter));
    } else {
        auto dead = co_await jsctx.get_stream_info(o.dead_letter, no_filter, timeout);
        if (!dead) {
            if (dead.error().code == js::errc::not_found)
                throw queue_error(rules::text::dead_letter_missing(o.dead_letter));
            throw queue_error(
                fmt::format("queue: could not read stream \"{}\": {}", o.dead_letter, dead.error().message));
        }
        const auto subject = rules::dead_letter_subject(o.identity);
        const auto& subjects = dead->config.subjects;
        if (std::none_of(subjects.begin(), subjects.end(),
                         [&](const auto& p) { return rules::subject_matches(p, subject); }))
            throw queue_error(rules::text::dead_letter_unbound(o.dead_letter, o.identity));
    }

    auto bound = co_await jsctx.bind_pull(o.stream, o.consumer, rules::work_subject(o.identity), timeout);
    if (!bound) {
        if (bound.error().err_code == js::api_max_consumers_on_subject)
            throw queue_error(rules::text::consumer_taken(n));
        throw queue_error(fmt::format("queue: could not bind consumer \"{}\" on stream \"{}\": {}", o.consumer,
                                      o.stream, bound.error().message));
    }
    st->sub = std::move(*bound);

    // Amendment 13: one worker of the fleet (the consumer's queue group) handles each advisory.
    std::weak_ptr<impl> weak = st;
    auto ex = st->executor;
    st->advisories = advisory_subscription::subscribe(
        nats.native_handle(), rules::max_deliveries_subject(o.stream, o.consumer), o.consumer,
        [weak, ex](std::string body) {
            asio::post(ex, [weak, body = std::move(body)]() mutable {
                if (auto s = weak.lock()) asio::co_spawn(s->executor, s->on_advisory(std::move(body)), asio::detached);
            });
        });
    if (!st->advisories)
        throw queue_error(
            fmt::format("queue: could not subscribe to \"{}\"", rules::max_deliveries_subject(o.stream, o.consumer)));
    co_return std::make_shared<queue_channel>(st);
}

asio::awaitable<std::unique_ptr<work>> queue_channel::next() {
    auto st = impl_;
    for (;;) {
        if (st->released) co_return nullptr;
        auto got = co_await st->sub.fetch(1, st->options.fetch_wait);
        if (st->released) {
            // Taken as the channel closed: hand it back at once.
            if (got)
                for (auto& m : *got) co_await m.nak();
            co_return nullptr;
        }
        if (!got) {
            const auto code = got.error().code;
            if (code == js::errc::cancelled) co_return nullptr;
            if (code == js::errc::connection_closed)
                throw std::runtime_error(fmt::format("the NATS connection closed: {}", got.error().message));
            // A broker restart or a leader change: wait a little and fetch again.
            st->options.log.debug("queue: a fetch failed", {{"error", got.error().message}});
            asio::steady_timer pause(st->executor, std::chrono::milliseconds(250));
            boost::system::error_code ec;
            co_await pause.async_wait(asio::redirect_error(asio::use_awaitable, ec));
            continue;
        }
        if (got->empty()) continue;
        auto msg = got->front();
        auto decoded = rules::decode_job(msg.data(), js::find_header(msg.headers(), "Nats-Msg-Id"),
                                         st->options.identity, st->options.tool_names);
        if (auto* bad = std::get_if<rules::invalid_job>(&decoded)) {
            const in_flight_slot settling(st);
            co_await st->settle_invalid(msg, std::move(*bad));
            continue;
        }
        auto j = std::get<rules::job>(std::move(decoded));
        auto state = std::make_shared<job_state>(st, msg, std::move(j));
        asio::co_spawn(st->executor, job_state::heartbeat(state), asio::detached);
        auto w = std::make_unique<queue_work>(state);
        const auto& job = state->job;
        w->session_id = job.session_id;
        w->prompt = job.prompt;
        w->follow_up = false;
        w->from = caller{job.request.sender.name, false};
        w->limits = job.limits;
        w->prompter = nullptr;
        w->label = fmt::format("queue job {} (delivery {})", job.task, state->delivery());
        st->options.log.info(
            "queue: took a job",
            {{"task", job.task}, {"session", job.session_id}, {"delivery", std::to_string(state->delivery())}});
        co_return w;
    }
}

void queue_channel::release() {
    if (impl_->released) return;
    impl_->released = true;
    // No job out: unbind now, which also ends a fetch in flight (a message it still
    // returns is Nak'ed at once). Otherwise the pending fetch ends by itself.
    if (impl_->in_flight == 0) impl_->unbind();
}

std::string queue_channel::description() const {
    const auto& o = impl_->options;
    return fmt::format("queue: jobs on {} from stream {} (consumer {}, ack wait {}, max deliver {}), answers in KV {}",
                       rules::work_subject(o.identity), o.stream, o.consumer,
                       gocompat::format_duration(impl_->consumer.config.ack_wait), impl_->consumer.config.max_deliver,
                       o.task_store);
}

std::size_t queue_channel::in_flight() const noexcept { return impl_->in_flight; }

std::size_t queue_channel::advisories_handled() const noexcept { return impl_->advisories_handled; }

}  // namespace fiskai::serve
