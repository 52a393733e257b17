#include <fiskai/jetstream/context.hpp>
#include <fiskai/jetstream/offload.hpp>

#include "nats_calls.hpp"

#include <fiskai/conns/connection.hpp>

#include <fmt/format.h>

#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>

#include <array>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <unordered_map>

namespace fiskai::jetstream {

namespace asio = boost::asio;

std::optional<std::string> find_header(const headers& h, std::string_view name) {
    for (const auto& [k, v] : h) {
        if (k == name) return v;
    }
    return std::nullopt;
}

namespace detail {

error make_error(natsStatus status, int err_code, std::string text) {
    error out;
    out.err_code = err_code;
    out.message = std::move(text);
    switch (status) {
        case NATS_NOT_FOUND: out.code = errc::not_found; break;
        case NATS_TIMEOUT: out.code = errc::timed_out; break;
        case NATS_NO_RESPONDERS: out.code = errc::no_responders; break;
        case NATS_CONNECTION_CLOSED: out.code = errc::connection_closed; break;
        case NATS_INVALID_ARG:
        case NATS_INVALID_SUBJECT: out.code = errc::invalid_argument; break;
        default: out.code = out.err_code != 0 ? errc::api_error : errc::failed; break;
    }
    switch (out.err_code) {
        case api_stream_not_found:
        case api_consumer_not_found:
        case api_no_message_found: out.code = errc::not_found; break;
        default: break;
    }
    return out;
}

namespace {

// nats.c starts its last error with where it was raised, `(js.c:535): `: a reader of a log
// line or a stored error wants the server's text alone.
std::string_view without_source_location(std::string_view detail) {
    if (!detail.starts_with('(')) return detail;
    const auto end = detail.find("): ");
    if (end == std::string_view::npos || detail.substr(1, end - 1).find(".c:") == std::string_view::npos) return detail;
    return detail.substr(end + 3);
}

}  // namespace

error make_error(natsStatus status, jsErrCode err_code) {
    natsStatus last = NATS_OK;
    const char* detail = nats_GetLastError(&last);
    return make_error(
        status, static_cast<int>(err_code),
        (detail && *detail) ? std::string(without_source_location(detail)) : std::string(natsStatus_GetText(status)));
}

headers copy_headers(natsMsg* msg) {
    headers out;
    const char** keys = nullptr;
    int count = 0;
    if (natsMsgHeader_Keys(msg, &keys, &count) != NATS_OK || !keys) return out;
    for (int i = 0; i < count; ++i) {
        const char** values = nullptr;
        int n = 0;
        if (natsMsgHeader_Values(msg, keys[i], &values, &n) == NATS_OK && values) {
            for (int j = 0; j < n; ++j) out.emplace_back(keys[i], values[j] ? values[j] : "");
            free(static_cast<void*>(values));
        }
    }
    free(static_cast<void*>(keys));
    return out;
}

message copy_message(natsMsg* msg, bool from_delivery) {
    message out;
    if (const char* s = natsMsg_GetSubject(msg)) out.subject = s;
    if (const char* d = natsMsg_GetData(msg)) out.data.assign(d, static_cast<std::size_t>(natsMsg_GetDataLength(msg)));
    out.headers = copy_headers(msg);
    if (from_delivery) {
        jsMsgMetaData* meta = nullptr;
        if (natsMsg_GetMetaData(&meta, msg) == NATS_OK && meta) {
            out.sequence = meta->Sequence.Stream;
            out.time =
                clock_time(std::chrono::duration_cast<clock_time::duration>(std::chrono::nanoseconds(meta->Timestamp)));
            jsMsgMetaData_Destroy(meta);
        }
    } else {
        out.sequence = natsMsg_GetSequence(msg);
        out.time = clock_time(
            std::chrono::duration_cast<clock_time::duration>(std::chrono::nanoseconds(natsMsg_GetTime(msg))));
    }
    return out;
}

jsOptions api_options(milliseconds timeout) {
    jsOptions o;
    jsOptions_Init(&o);
    o.Wait = timeout.count();
    return o;
}

namespace {

retention_policy to_retention(jsRetentionPolicy p) {
    switch (p) {
        case js_InterestPolicy: return retention_policy::interest;
        case js_WorkQueuePolicy: return retention_policy::work_queue;
        default: return retention_policy::limits;
    }
}

}  // namespace

stream_info to_stream_info(const jsStreamInfo* si) {
    jetstream::stream_info out;
    if (const jsStreamConfig* c = si->Config) {
        if (c->Name) out.config.name = c->Name;
        for (int i = 0; i < c->SubjectsLen; ++i) {
            if (c->Subjects[i]) out.config.subjects.emplace_back(c->Subjects[i]);
        }
        out.config.retention = to_retention(c->Retention);
        out.config.max_consumers = c->MaxConsumers;
        out.config.max_msgs = c->MaxMsgs;
        out.config.max_bytes = c->MaxBytes;
        out.config.max_age = std::chrono::nanoseconds(c->MaxAge);
        out.config.max_msgs_per_subject = c->MaxMsgsPerSubject;
        out.config.max_msg_size = c->MaxMsgSize;
        out.config.discard = c->Discard == js_DiscardNew ? discard_policy::new_messages : discard_policy::old_messages;
        out.config.discard_new_per_subject = c->DiscardNewPerSubject;
        out.config.storage = c->Storage == js_MemoryStorage ? storage_type::memory : storage_type::file;
        out.config.duplicate_window = std::chrono::nanoseconds(c->Duplicates);
        out.config.allow_direct = c->AllowDirect;
    }
    const jsStreamState& st = si->State;
    out.state.msgs = st.Msgs;
    out.state.bytes = st.Bytes;
    out.state.first_seq = st.FirstSeq;
    out.state.last_seq = st.LastSeq;
    out.state.num_subjects = st.NumSubjects;
    out.state.consumers = st.Consumers;
    if (st.Subjects) {
        for (int i = 0; i < st.Subjects->Count; ++i) {
            const auto& e = st.Subjects->List[i];
            if (e.Subject) out.state.subjects[e.Subject] = e.Msgs;
        }
    }
    return out;
}

namespace {

ack_policy to_ack(jsAckPolicy p) {
    switch (p) {
        case js_AckNone: return ack_policy::none;
        case js_AckAll: return ack_policy::all;
        default: return ack_policy::explicit_ack;
    }
}

deliver_policy to_deliver(jsDeliverPolicy p) {
    switch (p) {
        case js_DeliverLast: return deliver_policy::last;
        case js_DeliverNew: return deliver_policy::new_messages;
        case js_DeliverByStartSequence: return deliver_policy::by_start_sequence;
        case js_DeliverByStartTime: return deliver_policy::by_start_time;
        case js_DeliverLastPerSubject: return deliver_policy::last_per_subject;
        default: return deliver_policy::all;
    }
}

}  // namespace

consumer_info to_consumer_info(const jsConsumerInfo* ci) {
    jetstream::consumer_info out;
    if (ci->Stream) out.stream = ci->Stream;
    if (ci->Name) out.name = ci->Name;
    if (const jsConsumerConfig* c = ci->Config) {
        if (c->Name) out.config.name = c->Name;
        if (c->Durable) out.config.durable = c->Durable;
        if (c->FilterSubject) out.config.filter_subject = c->FilterSubject;
        out.config.ack = to_ack(c->AckPolicy);
        out.config.deliver = to_deliver(c->DeliverPolicy);
        out.config.ack_wait = std::chrono::nanoseconds(c->AckWait);
        out.config.max_deliver = c->MaxDeliver;
        out.config.max_ack_pending = c->MaxAckPending;
        out.config.max_waiting = c->MaxWaiting;
    }
    out.num_ack_pending = ci->NumAckPending;
    out.num_redelivered = ci->NumRedelivered;
    out.num_waiting = ci->NumWaiting;
    out.num_pending = ci->NumPending;
    out.push_bound = ci->PushBound;
    return out;
}

}  // namespace detail

context::context(conns::connection& connection, asio::any_io_executor blocking, context_options options)
    : impl_(std::make_shared<impl>()) {
    impl_->nc = connection.native_handle();
    impl_->blocking = std::move(blocking);
    impl_->default_timeout = options.default_timeout;
    if (!impl_->nc) throw std::invalid_argument("jetstream: the NATS connection is closed");
    jsOptions o = detail::api_options(options.default_timeout);
    // Not a network call: nats.c only allocates the context here.
    if (const natsStatus s = natsConnection_JetStream(&impl_->js, impl_->nc, &o); s != NATS_OK) {
        throw std::runtime_error(fmt::format("jetstream: {}", conns::nats_status_text(s)));
    }
    start_async_publishing();
}

context::~context() = default;

milliseconds context::default_timeout() const noexcept { return impl_->default_timeout; }
const asio::any_io_executor& context::blocking() const noexcept { return impl_->blocking; }

std::string context::not_enabled_text() const {
    std::array<char, 512> url{};
    std::string server = "the NATS server";
    if (natsConnection_GetConnectedUrl(impl_->nc, url.data(), url.size()) == NATS_OK && url[0] != '\0') {
        server += fmt::format(" at {}", url.data());
    }
    return fmt::format("JetStream is not enabled on {}; start it with -js (or jetstream {{}} in its configuration)",
                       server);
}

asio::awaitable<result<jetstream::stream_info>> context::get_stream_info(std::string stream,
                                                                         std::string subjects_filter,
                                                                         milliseconds timeout) {
    auto call = [st = impl_, stream = std::move(stream), filter = std::move(subjects_filter),
                 t = impl_->effective(timeout)]() -> result<jetstream::stream_info> {
        jsOptions o = detail::api_options(t);
        if (!filter.empty()) o.Stream.Info.SubjectsFilter = filter.c_str();
        jsStreamInfo* si = nullptr;
        jsErrCode ec = static_cast<jsErrCode>(0);
        const natsStatus s = js_GetStreamInfo(&si, st->js, stream.c_str(), &o, &ec);
        if (s != NATS_OK) return detail::make_error(s, ec);
        auto out = detail::to_stream_info(si);
        jsStreamInfo_Destroy(si);
        return out;
    };
    co_return co_await offload(impl_->blocking, std::move(call));
}

namespace {

using publish_callback = std::function<void(result<publish_ack>)>;

// The publishes nats.c has not answered yet, by the message it holds for each: it owns that
// message until it hands it back to on_async_ack (or jsCtx_Destroy frees it), so no two
// entries share an address. The id tells a publish from a later one whose message got the
// address of an earlier one's: a deadline or an awaiter takes out only its own entry.
// Process-wide rather than per context: a verdict nats.c delivers after the deadline
// answered the publish (its context may be gone by then) finds nothing here, so
// on_async_ack never needs a context. Never destroyed: a nats.c thread may call in at exit.
struct publish_table {
    std::mutex mu;
    std::uint64_t last_id = 0;
    struct entry {
        std::uint64_t id = 0;
        publish_callback done;  // holds the context
    };
    std::unordered_map<natsMsg*, entry> by_message;
};

publish_table& publishes() {
    static auto* table = new publish_table;
    return *table;
}

std::uint64_t register_publish(natsMsg* msg, publish_callback done) {
    auto& t = publishes();
    std::lock_guard lock(t.mu);
    const auto id = ++t.last_id;
    t.by_message.insert_or_assign(msg, publish_table::entry{id, std::move(done)});
    return id;
}

// The entry registered under `msg` (and, given `id`, only publish `id`'s), if it is still
// there: nats.c's verdict names the message, a deadline or an awaiter its own publish.
publish_callback take_publish(natsMsg* msg, std::optional<std::uint64_t> id = std::nullopt) {
    auto& t = publishes();
    std::lock_guard lock(t.mu);
    auto it = t.by_message.find(msg);
    if (it == t.by_message.end() || (id && it->second.id != *id)) return {};
    auto done = std::move(it->second.done);
    t.by_message.erase(it);
    return done;
}

// nats.c's acknowledgement handler for the asynchronous publishes (its own thread).
void on_async_ack(jsCtx*, natsMsg* msg, jsPubAck* pa, jsPubAckErr* pae, void*) {
    publish_callback done = take_publish(msg);
    result<publish_ack> out = publish_ack{};
    if (pa) {
        publish_ack ack;
        if (pa->Stream) ack.stream = pa->Stream;
        ack.sequence = pa->Sequence;
        ack.duplicate = pa->Duplicate;
        out = std::move(ack);
    } else if (pae) {
        out = detail::make_error(pae->Err, static_cast<int>(pae->ErrCode),
                                 pae->ErrText ? std::string(pae->ErrText) : std::string(natsStatus_GetText(pae->Err)));
    } else {
        out = error{errc::failed, 0, "publish acknowledgement without a result"};
    }
    natsMsg_Destroy(msg);  // handed back to us by nats.c
    if (done) done(std::move(out));
}

// How long after its timeout a publish nats.c has not answered is answered by us. nats.c
// delivers the ack and its own MaxWait timeout through the context's reply subscription,
// which stops delivering once the connection has closed: without this deadline such a
// publish would never complete.
constexpr milliseconds publish_grace{1000};

// Which entry of the publish table an awaiting publish() registered (none until it has).
struct publish_ticket {
    natsMsg* msg = nullptr;
    std::uint64_t id = 0;
};

}  // namespace

void context::start_async_publishing() {
    jsOptions o = detail::api_options(impl_->default_timeout);
    o.PublishAsync.AckHandler = on_async_ack;
    if (const natsStatus s = natsConnection_JetStream(&impl_->async_js, impl_->nc, &o); s != NATS_OK) {
        throw std::runtime_error(fmt::format("jetstream: {}", conns::nats_status_text(s)));
    }
}

asio::awaitable<result<publish_ack>> context::publish(std::string subject, std::string data, headers hdrs,
                                                      publish_options options) {
    const milliseconds timeout = impl_->effective(options.timeout);
    auto ticket = std::make_shared<publish_ticket>();
    auto deadline = std::make_shared<asio::steady_timer>(co_await asio::this_coro::executor);
    // However the await ends (answered, past the deadline, cancelled), the entry leaves the
    // table and the deadline stops. A cancelled awaiter's entry is answered too (the result
    // is dropped), which releases the work await_callback holds on the executor.
    struct forget_on_exit {
        std::shared_ptr<publish_ticket> ticket;
        std::shared_ptr<asio::steady_timer> deadline;
        ~forget_on_exit() {
            deadline->cancel();
            if (!ticket->msg) return;
            if (auto ours = take_publish(ticket->msg, ticket->id))
                ours(error{errc::cancelled, 0, "the publish's awaiter was cancelled"});
        }
    } forget{ticket, deadline};

    auto start = [st = impl_, subject = std::move(subject), data = std::move(data), hdrs = std::move(hdrs),
                  options = std::move(options), timeout, ticket,
                  deadline](std::function<void(result<publish_ack>)> done) {
        natsMsg* msg = nullptr;
        natsStatus s = natsMsg_Create(&msg, subject.c_str(), nullptr, data.data(), static_cast<int>(data.size()));
        for (const auto& [k, v] : hdrs) {
            if (s == NATS_OK) s = natsMsgHeader_Add(msg, k.c_str(), v.c_str());
        }
        if (s != NATS_OK) {
            auto e = detail::make_error(s);
            natsMsg_Destroy(msg);
            done(std::move(e));
            return;
        }
        jsPubOptions po;
        jsPubOptions_Init(&po);
        // nats.c times an asynchronous publish out through the same handler.
        po.MaxWait = timeout.count();
        if (!options.msg_id.empty()) po.MsgId = options.msg_id.c_str();
        if (!options.expect_stream.empty()) po.ExpectStream = options.expect_stream.c_str();
        if (options.expect_last_sequence) po.ExpectLastSeq = *options.expect_last_sequence;
        if (options.expect_last_subject_sequence) {
            if (*options.expect_last_subject_sequence == 0) {
                po.ExpectNoMessage = true;
            } else {
                po.ExpectLastSubjectSeq = *options.expect_last_subject_sequence;
            }
        }
        // Registered before the publish: the ack may come before js_PublishMsgAsync returns.
        // The entry keeps the context alive until it has answered.
        ticket->msg = msg;
        ticket->id = register_publish(msg, [st, done](result<publish_ack> r) { done(std::move(r)); });
        natsMsg* handed = msg;
        s = js_PublishMsgAsync(st->async_js, &handed, &po);
        if (s != NATS_OK && handed) {
            // Still ours: nats.c did not take it, and no ack will come.
            auto e = detail::make_error(s);
            auto ours = take_publish(msg, ticket->id);
            ticket->msg = nullptr;
            natsMsg_Destroy(msg);
            if (ours) ours(std::move(e));
            return;
        }
        deadline->expires_after(timeout + publish_grace);
        deadline->async_wait([ticket, timeout](const boost::system::error_code& ec) {
            if (ec) return;
            if (auto ours = take_publish(ticket->msg, ticket->id)) {
                ours(error{errc::timed_out, 0,
                           fmt::format("no acknowledgement, error or timeout within {} ms of the publish's {} ms "
                                       "timeout: the NATS connection may have closed",
                                       publish_grace.count(), timeout.count())});
            }
        });
    };
    co_return co_await await_callback<result<publish_ack>>(std::move(start));
}

asio::awaitable<result<message>> context::last_message(std::string stream, std::string subject, milliseconds timeout) {
    auto call = [st = impl_, stream = std::move(stream), subject = std::move(subject),
                 t = impl_->effective(timeout)]() -> result<message> {
        jsOptions o = detail::api_options(t);
        natsMsg* msg = nullptr;
        jsErrCode ec = static_cast<jsErrCode>(0);
        const natsStatus s = js_GetLastMsg(&msg, st->js, stream.c_str(), subject.c_str(), &o, &ec);
        if (s != NATS_OK) return detail::make_error(s, ec);
        auto out = detail::copy_message(msg, false);
        natsMsg_Destroy(msg);
        return out;
    };
    co_return co_await offload(impl_->blocking, std::move(call));
}

asio::awaitable<result<message>> context::get_message(std::string stream, std::uint64_t sequence,
                                                      milliseconds timeout) {
    auto call = [st = impl_, stream = std::move(stream), sequence, t = impl_->effective(timeout)]() -> result<message> {
        jsOptions o = detail::api_options(t);
        natsMsg* msg = nullptr;
        jsErrCode ec = static_cast<jsErrCode>(0);
        const natsStatus s = js_GetMsg(&msg, st->js, stream.c_str(), sequence, &o, &ec);
        if (s != NATS_OK) return detail::make_error(s, ec);
        auto out = detail::copy_message(msg, false);
        natsMsg_Destroy(msg);
        return out;
    };
    co_return co_await offload(impl_->blocking, std::move(call));
}

asio::awaitable<result<std::vector<message>>> context::ordered_read(std::string stream, std::string filter,
                                                                    std::size_t count, milliseconds wait) {
    if (count == 0) co_return std::vector<message>{};
    auto call = [st = impl_, stream = std::move(stream), filter = std::move(filter), count,
                 wait]() -> result<std::vector<message>> {
        jsOptions o = detail::api_options(st->default_timeout);
        jsSubOptions so;
        jsSubOptions_Init(&so);
        so.Stream = stream.c_str();
        so.Ordered = true;
        so.Config.DeliverPolicy = js_DeliverAll;
        natsSubscription* sub = nullptr;
        jsErrCode ec = static_cast<jsErrCode>(0);
        natsStatus s = js_SubscribeSync(&sub, st->js, filter.c_str(), &o, &so, &ec);
        if (s != NATS_OK) return detail::make_error(s, ec);
        std::vector<message> out;
        out.reserve(count);
        error failure;
        bool failed = false;
        while (out.size() < count) {
            natsMsg* msg = nullptr;
            s = natsSubscription_NextMsg(&msg, sub, wait.count());
            if (s == NATS_TIMEOUT) break;  // no progress: what was read is a coherent prefix
            if (s != NATS_OK) {
                failure = detail::make_error(s);
                failed = true;
                break;
            }
            out.push_back(detail::copy_message(msg, true));
            natsMsg_Destroy(msg);
        }
        // The ordered consumer is ephemeral and nats.c's own: unsubscribing removes it. Its
        // messages may still be arriving: destroyed late (see conns::retire_subscription).
        conns::retire_subscription(sub);
        if (failed) return failure;
        return out;
    };
    co_return co_await offload(impl_->blocking, std::move(call));
}

asio::awaitable<result<void>> context::purge(std::string stream, std::string subject, milliseconds timeout) {
    auto call = [st = impl_, stream = std::move(stream), subject = std::move(subject),
                 t = impl_->effective(timeout)]() -> result<void> {
        jsOptions o = detail::api_options(t);
        if (!subject.empty()) o.Stream.Purge.Subject = subject.c_str();
        jsErrCode ec = static_cast<jsErrCode>(0);
        const natsStatus s = js_PurgeStream(st->js, stream.c_str(), &o, &ec);
        if (s != NATS_OK) return detail::make_error(s, ec);
        return {};
    };
    co_return co_await offload(impl_->blocking, std::move(call));
}

asio::awaitable<result<void>> context::delete_message(std::string stream, std::uint64_t sequence,
                                                      milliseconds timeout) {
    auto call = [st = impl_, stream = std::move(stream), sequence, t = impl_->effective(timeout)]() -> result<void> {
        jsOptions o = detail::api_options(t);
        jsErrCode ec = static_cast<jsErrCode>(0);
        const natsStatus s = js_DeleteMsg(st->js, stream.c_str(), sequence, &o, &ec);
        if (s != NATS_OK) return detail::make_error(s, ec);
        return {};
    };
    co_return co_await offload(impl_->blocking, std::move(call));
}

asio::awaitable<result<jetstream::consumer_info>> context::get_consumer_info(std::string stream, std::string consumer,
                                                                             milliseconds timeout) {
    auto call = [st = impl_, stream = std::move(stream), consumer = std::move(consumer),
                 t = impl_->effective(timeout)]() -> result<jetstream::consumer_info> {
        jsOptions o = detail::api_options(t);
        jsConsumerInfo* ci = nullptr;
        jsErrCode ec = static_cast<jsErrCode>(0);
        const natsStatus s = js_GetConsumerInfo(&ci, st->js, stream.c_str(), consumer.c_str(), &o, &ec);
        if (s != NATS_OK) return detail::make_error(s, ec);
        auto out = detail::to_consumer_info(ci);
        jsConsumerInfo_Destroy(ci);
        return out;
    };
    co_return co_await offload(impl_->blocking, std::move(call));
}

asio::awaitable<result<void>> context::flush(milliseconds timeout) {
    auto call = [st = impl_, t = impl_->effective(timeout)]() -> result<void> {
        const natsStatus s = natsConnection_FlushTimeout(st->nc, t.count());
        if (s != NATS_OK) return detail::make_error(s);
        return {};
    };
    co_return co_await offload(impl_->blocking, std::move(call));
}

}  // namespace fiskai::jetstream
