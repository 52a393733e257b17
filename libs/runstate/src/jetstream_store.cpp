// The runstate JetStream backend. Subject layout, prefix rule, bind checks and texts are
// Go's (agent-llm-state.md §3.9); the write path follows D11: exclusivity comes from the
// stream's one-message-per-subject limit with discard-new-per-subject, and `Nats-Msg-Id`
// read-back tells a lost ack from another writer.

#include <fiskai/runstate/jetstream_store.hpp>

#include "jetstream_layout.hpp"

#include <fiskai/gocompat/duration.hpp>
#include <fiskai/gocompat/quote.hpp>
#include <fiskai/gocompat/time.hpp>
#include <fiskai/jetstream/context.hpp>
#include <fiskai/runstate/records.hpp>
#include <fiskai/runstate/state.hpp>

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/json/value.hpp>

#include <fmt/format.h>

#include <openssl/rand.h>

#include <algorithm>
#include <charconv>

namespace fiskai::runstate {

namespace asio = boost::asio;
namespace js = fiskai::jetstream;
using gocompat::quote;

namespace js_layout {

namespace {

bool subject_has_wildcard(std::string_view subject) {
    std::size_t start = 0;
    while (start <= subject.size()) {
        auto end = subject.find('.', start);
        if (end == std::string_view::npos) end = subject.size();
        const auto token = subject.substr(start, end - start);
        if (token == "*" || token == ">") return true;
        start = end + 1;
    }
    return false;
}

std::vector<std::string> split_tokens(std::string_view subject) {
    std::vector<std::string> out;
    std::size_t start = 0;
    while (start <= subject.size()) {
        auto end = subject.find('.', start);
        if (end == std::string_view::npos) end = subject.size();
        out.emplace_back(subject.substr(start, end - start));
        start = end + 1;
    }
    return out;
}

std::string discard_name(jetstream::discard_policy d) {
    return d == jetstream::discard_policy::new_messages ? "DiscardNew" : "DiscardOld";
}

}  // namespace

std::variant<std::string, prefix_error> derive_prefix(const std::vector<std::string>& subjects) {
    std::vector<std::string> wildcards;
    for (const auto& s : subjects) {
        if (subject_has_wildcard(s)) wildcards.push_back(s);
    }
    if (wildcards.empty()) {
        return prefix_error{
            "binds no wildcard subject; it must bind exactly one subject of the form <prefix>.> so runs can be "
            "stored under it"};
    }
    if (wildcards.size() > 1) {
        std::string joined;
        for (const auto& w : wildcards) {
            if (!joined.empty()) joined += ", ";
            joined += w;
        }
        return prefix_error{fmt::format(
            "binds {} wildcard subjects ({}); it must bind exactly one, of the form <prefix>.>, so the run prefix is "
            "unambiguous",
            wildcards.size(), joined)};
    }
    const std::string& subject = wildcards.front();
    const auto tokens = split_tokens(subject);
    if (tokens.back() != ">") {
        return prefix_error{fmt::format(
            "wildcard subject {} must end in a terminal '>' as <prefix>.>; a '*' wildcard does not bound the run and "
            "seq tokens",
            quote(subject))};
    }
    if (tokens.size() == 1) {
        return prefix_error{fmt::format(
            "wildcard subject {} has an empty prefix; it must be <prefix>.> with a non-empty prefix", quote(subject))};
    }
    std::string prefix;
    for (std::size_t i = 0; i + 1 < tokens.size(); ++i) {
        const auto& t = tokens[i];
        if (t.empty()) {
            return prefix_error{
                fmt::format("wildcard subject {} has an empty token; it must be a clean <prefix>.>", quote(subject))};
        }
        if (t == "*" || t == ">") {
            return prefix_error{fmt::format(
                "wildcard subject {} must be a clean <prefix>.> with no other wildcard tokens", quote(subject))};
        }
        if (!prefix.empty()) prefix += '.';
        prefix += t;
    }
    return prefix;
}

std::optional<std::string> check_stream_config(const jetstream::stream_config& c, std::string_view stream) {
    const auto name = quote(stream);
    if (c.max_msgs_per_subject != 1) {
        return fmt::format(
            "jetstream session: stream {} has max messages per subject = {}; it must be 1 so each run record is "
            "write-once and immutable. Recreate or edit it with --max-msgs-per-subject=1",
            name, c.max_msgs_per_subject);
    }
    if (c.discard != jetstream::discard_policy::new_messages) {
        return fmt::format(
            "jetstream session: stream {} discard policy is {}, not DiscardNew; it must discard new writes at a full "
            "subject rather than dropping an existing record. Recreate or edit it with --discard=new",
            name, discard_name(c.discard));
    }
    if (!c.discard_new_per_subject) {
        return fmt::format(
            "jetstream session: stream {} does not discard new per subject; it must so the per-subject limit rejects "
            "a re-publish of a record. Recreate or edit it with --discard-per-subject",
            name);
    }
    if (c.max_age.count() != 0) {
        return fmt::format(
            "jetstream session: stream {} has a {} max age; stored runs would silently expire. Recreate the stream "
            "without a max age for durable sessions",
            name, gocompat::format_duration(c.max_age));
    }
    if (c.max_msg_size > 0 && c.max_msg_size < record_floor_bytes) {
        return fmt::format(
            "jetstream session: stream {} max message size is {} bytes, below the {} byte session record floor; a run "
            "record would fail to write. Recreate or edit it with --max-msg-size=-1 (unlimited) or at least {}",
            name, c.max_msg_size, record_floor_bytes, record_floor_bytes);
    }
    return std::nullopt;
}

std::string missing_stream_text(std::string_view stream) {
    return fmt::format(
        "jetstream session: stream {} does not exist; create it first, e.g. `nats stream add {} --subjects "
        "'<prefix>.>' --max-msgs-per-subject=1 --discard=new --discard-per-subject` (choose any single-token "
        "<prefix>)",
        quote(stream), stream);
}

std::string meta_subject(std::string_view prefix, std::string_view id) {
    return fmt::format("{}.{}.{}", prefix, id, meta_token);
}
std::string run_wildcard(std::string_view prefix, std::string_view id) { return fmt::format("{}.{}.>", prefix, id); }
std::string subject_for_seq(std::string_view prefix, std::string_view id, std::uint64_t seq) {
    if (seq == 1) return meta_subject(prefix, id);
    return fmt::format("{}.{}.{}", prefix, id, seq);
}
std::string list_filter(std::string_view prefix) { return fmt::format("{}.*.{}", prefix, meta_token); }

std::optional<std::uint64_t> parse_seq_token(std::string_view subject) {
    const auto dot = subject.rfind('.');
    const auto token = dot == std::string_view::npos ? subject : subject.substr(dot + 1);
    if (token == meta_token) return 1;
    std::uint64_t seq = 0;
    const auto [end, ec] = std::from_chars(token.data(), token.data() + token.size(), seq);
    if (ec != std::errc{} || end != token.data() + token.size() || token.empty()) return std::nullopt;
    return seq;
}

std::optional<std::string> run_id_from_meta_subject(std::string_view prefix, std::string_view subject) {
    const std::string head = std::string(prefix) + ".";
    const std::string tail = std::string(".") + std::string(meta_token);
    if (subject.size() <= head.size() + tail.size()) return std::nullopt;
    if (subject.substr(0, head.size()) != head) return std::nullopt;
    if (subject.substr(subject.size() - tail.size()) != tail) return std::nullopt;
    std::string id(subject.substr(head.size(), subject.size() - head.size() - tail.size()));
    if (!validate_id(id)) return std::nullopt;
    return id;
}

}  // namespace js_layout

namespace {

constexpr std::string_view msg_id_header = "Nats-Msg-Id";

// A per-journal random nonce: every record this handle publishes carries
// `<nonce>-<seq>` as its Nats-Msg-Id, so a retry after a lost ack recognizes its own write.
std::string new_nonce() {
    unsigned char bytes[16];
    if (RAND_bytes(bytes, sizeof bytes) != 1)
        throw std::runtime_error("jetstream session: no random bytes for a nonce");
    std::string out;
    for (const unsigned char b : bytes) out += fmt::format("{:02x}", b);
    return out;
}

error storage_error(std::string text) {
    error e;
    e.code = make_error_code(errc::storage);
    e.message = std::move(text);
    return e;
}

// A detail without the code's own text in front (`corrupt record sequence: x` -> `x`).
std::string detail_of(const error& e) {
    const std::string head = e.code.message() + ": ";
    if (e.message.rfind(head, 0) == 0) return e.message.substr(head.size());
    return e.message;
}

struct shared_store {
    std::shared_ptr<js::context> js;
    std::string stream;
    std::string prefix;
    jetstream_store_options options;

    [[nodiscard]] std::string meta_subject(const std::string& id) const { return js_layout::meta_subject(prefix, id); }
    [[nodiscard]] std::string run_wildcard(const std::string& id) const { return js_layout::run_wildcard(prefix, id); }

    // Every record of a run in seq order, each schema-checked; not_found without a meta.
    asio::awaitable<result<std::vector<record>>> records(std::string id) const {
        const auto wildcard = run_wildcard(id);
        auto info = co_await js->get_stream_info(stream, wildcard, options.op_timeout);
        if (!info) {
            co_return storage_error(
                fmt::format("jetstream session: reading run {}: {}", quote(id), info.error().message));
        }
        // The meta record (seq 1) is written first and never removed: a run exists iff
        // its meta subject holds a message.
        const auto meta = info->state.subjects.find(meta_subject(id));
        if (meta == info->state.subjects.end() || meta->second == 0) co_return make_error(errc::not_found, quote(id));
        std::uint64_t expected = 0;
        for (const auto& [subject, count] : info->state.subjects) expected += count;

        auto messages = co_await js->ordered_read(stream, wildcard, expected, options.fetch_wait);
        if (!messages) {
            co_return storage_error(
                fmt::format("jetstream session: fetching records for run {}: {}", quote(id), messages.error().message));
        }
        std::vector<record> out;
        out.reserve(messages->size());
        for (const auto& m : *messages) {
            auto rec = decode_record(m.data);
            if (!rec) {
                co_return make_error(errc::corrupt, fmt::format("run {} record {}: {}", quote(id), quote(m.subject),
                                                                detail_of(rec.error())));
            }
            out.push_back(std::move(*rec));
        }
        std::stable_sort(out.begin(), out.end(), [](const record& a, const record& b) { return a.seq < b.seq; });
        co_return out;
    }
};

class jetstream_journal final : public journal {
public:
    jetstream_journal(std::shared_ptr<const shared_store> store, std::string id, std::uint64_t last_seq)
        : store_(std::move(store)), id_(std::move(id)), nonce_(new_nonce()), last_seq_(last_seq) {}

    asio::awaitable<result<void>> append(std::uint64_t seq, record rec) override {
        // The record is encoded here, so the write below carries bytes only.
        rec.seq = seq;
        std::string body = encode_record(rec);
        // Never abandoned (Amendment 6): the write runs in a coroutine of its own that the
        // caller's cancellation does not reach; the caller resumes when it has finished,
        // and last_seq reflects what happened. (Locals, not temporaries, in the co_await:
        // GCC 12 mishandles temporaries that live across a suspension.)
        auto ex = co_await asio::this_coro::executor;
        auto op = write(seq, std::move(body));
        auto token = asio::bind_cancellation_slot(asio::cancellation_slot(), asio::use_awaitable);
        result<void> written = co_await asio::co_spawn(ex, std::move(op), token);
        co_return written;
    }

    asio::awaitable<result<std::vector<record>>> records() override { return store_->records(id_); }
    [[nodiscard]] std::uint64_t last_seq() const noexcept override { return last_seq_; }
    result<void> close() override { return {}; }  // no lock; the connection is borrowed

private:
    asio::awaitable<result<void>> write(std::uint64_t seq, std::string body) {
        auto action = check_append(last_seq_, seq);
        if (!action) co_return action.error();
        if (*action == append_action::skip) co_return result<void>{};
        const std::string subject = js_layout::subject_for_seq(store_->prefix, id_, seq);
        const std::string msg_id = fmt::format("{}-{}", nonce_, seq);

        js::publish_options po;
        po.msg_id = msg_id;
        po.timeout = store_->options.op_timeout;
        js::headers no_headers;
        auto ack = co_await store_->js->publish(subject, body, std::move(no_headers), std::move(po));
        if (ack && !ack->duplicate) {
            last_seq_ = seq;
            co_return result<void>{};
        }
        if (ack) {
            // A duplicate-window hit is our own earlier publish of this seq, whose ack we
            // missed; it is this record only if it holds these bytes.
            auto stored = co_await store_->js->last_message(store_->stream, subject, store_->options.op_timeout);
            if (!stored) {
                co_return storage_error(fmt::format(
                    "jetstream session: record {} of run {} was already published by this journal and could not be "
                    "read back: {}",
                    seq, quote(id_), stored.error().message));
            }
            co_return adopt(seq, *stored, body);
        }
        const auto& failure = ack.error();
        if (failure.code != js::errc::api_error && failure.err_code == 0) {
            // No verdict from the stream (a timeout, a lost connection): the record may or
            // may not be stored; a retry of this seq settles it by reading back.
            co_return storage_error(
                fmt::format("jetstream session: appending record {} to run {}: {}", seq, quote(id_), failure.message));
        }

        // The stream refused the write. Whatever the code (2.9 says "maximum messages per
        // subject exceeded"), the target subject tells what happened.
        auto existing = co_await store_->js->last_message(store_->stream, subject, store_->options.op_timeout);
        if (!existing && existing.error().code != js::errc::not_found) {
            co_return storage_error(fmt::format(
                "jetstream session: record {} of run {} was rejected and its state could not be read back: {}", seq,
                quote(id_), existing.error().message));
        }
        if (existing && existing->header(msg_id_header) == msg_id) co_return adopt(seq, *existing, body);
        if (!existing) {
            // Nothing on the subject: not contention but another refusal (a record over
            // the stream's max message size, a sealed stream); say what the stream said.
            co_return storage_error(
                fmt::format("jetstream session: appending record {} to run {}: {}", seq, quote(id_), failure.message));
        }
        if (seq == 1) co_return make_error(errc::exists, quote(id_));
        co_return make_error(
            errc::locked,
            fmt::format("run {} on stream {} was advanced by another writer, so record {} was safely rejected without "
                        "overwriting anything; another process holds this run (inspect it with `nats stream "
                        "subjects {} '{}'`)",
                        quote(id_), quote(store_->stream), seq, store_->stream, store_->run_wildcard(id_)));
    }

    // `stored` carries our msg-id for `seq`: an earlier publish of ours landed without our
    // seeing its ack. It is counted either way; it stands for this append only with the
    // same bytes. Otherwise it is an earlier record (one whose append reported a timeout,
    // after which the caller moved on to, say, the terminal): this one is not written, and
    // the next append follows the stored one instead of burying it as a success.
    result<void> adopt(std::uint64_t seq, const js::message& stored, const std::string& body) {
        last_seq_ = seq;
        if (stored.data == body) return {};
        return storage_error(
            fmt::format("jetstream session: record {} of run {} was already stored by an earlier append of this "
                        "journal whose acknowledgement was lost, with other content; this record was not written "
                        "(the next append follows the stored one)",
                        seq, quote(id_)));
    }

    std::shared_ptr<const shared_store> store_;
    std::string id_;
    std::string nonce_;
    std::uint64_t last_seq_ = 0;
};

class jetstream_store final : public store {
public:
    explicit jetstream_store(std::shared_ptr<const shared_store> s) : s_(std::move(s)) {}

    asio::awaitable<result<std::unique_ptr<journal>>> create(std::string id, meta_record meta) override {
        if (auto valid = validate_id(id); !valid) co_return valid.error();
        const auto meta_subject = s_->meta_subject(id);
        auto last = co_await s_->js->last_message(s_->stream, meta_subject, s_->options.op_timeout);
        if (last) co_return make_error(errc::exists, quote(id));
        if (last.error().code != js::errc::not_found) {
            co_return storage_error(
                fmt::format("jetstream session: checking for existing run {}: {}", quote(id), last.error().message));
        }
        auto j = std::make_unique<jetstream_journal>(s_, id, 0);
        meta.run_id = id;
        record first{1, std::move(meta)};
        // A racing creator loses at the full meta subject, which append maps to exists.
        auto written = co_await j->append(1, std::move(first));
        if (!written) co_return written.error();
        co_return std::unique_ptr<journal>(std::move(j));
    }

    asio::awaitable<result<std::unique_ptr<journal>>> open(std::string id) override {
        if (auto valid = validate_id(id); !valid) co_return valid.error();
        // The last message on the run wildcard is the last record appended (records are
        // published in seq order); its subject names the journal's last seq.
        const auto wildcard = s_->run_wildcard(id);
        auto last = co_await s_->js->last_message(s_->stream, wildcard, s_->options.op_timeout);
        if (!last) {
            if (last.error().code == js::errc::not_found) co_return make_error(errc::not_found, quote(id));
            co_return storage_error(
                fmt::format("jetstream session: opening run {}: {}", quote(id), last.error().message));
        }
        const auto seq = js_layout::parse_seq_token(last->subject);
        if (!seq) {
            co_return storage_error(fmt::format("jetstream session: run {} has an unparsable record subject {}",
                                                quote(id), quote(last->subject)));
        }
        co_return std::unique_ptr<journal>(std::make_unique<jetstream_journal>(s_, id, *seq));
    }

    asio::awaitable<result<std::vector<record>>> read(std::string id) override {
        if (auto valid = validate_id(id); !valid) co_return valid.error();
        co_return co_await s_->records(id);
    }

    asio::awaitable<result<bool>> exists(std::string id) override {
        if (auto valid = validate_id(id); !valid) co_return valid.error();
        const auto meta_subject = s_->meta_subject(id);
        auto last = co_await s_->js->last_message(s_->stream, meta_subject, s_->options.op_timeout);
        if (last) co_return true;
        if (last.error().code == js::errc::not_found) co_return false;
        co_return storage_error(
            fmt::format("jetstream session: checking for run {}: {}", quote(id), last.error().message));
    }

    asio::awaitable<result<std::vector<run_info>>> list() override {
        // A run id has no dots, so `<prefix>.*._meta` matches exactly the runs' meta subjects.
        const auto filter = js_layout::list_filter(s_->prefix);
        auto info = co_await s_->js->get_stream_info(s_->stream, filter, s_->options.op_timeout);
        if (!info) {
            co_return storage_error(fmt::format("jetstream session: listing runs on stream {}: {}", quote(s_->stream),
                                                info.error().message));
        }
        std::vector<run_info> out;
        for (const auto& [subject, count] : info->state.subjects) {
            const auto id = js_layout::run_id_from_meta_subject(s_->prefix, subject);
            if (!id || count == 0) continue;
            auto recs = co_await s_->records(*id);
            if (!recs || recs->empty()) continue;  // unreadable runs are skipped
            const auto* meta = std::get_if<meta_record>(&recs->front().payload);
            if (!meta) continue;
            auto state = fold(*recs);
            if (!state) continue;
            run_info ri;
            ri.run_id = state->run_id;
            ri.created = meta->created;
            ri.model = state->fingerprint.model;
            ri.prompt = state->prompt;
            if (state->terminal) ri.terminal = state->terminal->reason;
            const auto wildcard = s_->run_wildcard(*id);
            auto last = co_await s_->js->last_message(s_->stream, wildcard, s_->options.op_timeout);
            if (last) ri.updated = gocompat::to_go_time(last->time);
            out.push_back(std::move(ri));
        }
        std::sort(out.begin(), out.end(), [](const run_info& a, const run_info& b) { return a.run_id < b.run_id; });
        co_return out;
    }

    asio::awaitable<result<void>> remove(std::string id) override {
        if (auto valid = validate_id(id); !valid) co_return valid.error();
        // Purging the run wildcard removes every record and is idempotent.
        const auto wildcard = s_->run_wildcard(id);
        auto purged = co_await s_->js->purge(s_->stream, wildcard, s_->options.op_timeout);
        if (!purged) {
            co_return storage_error(
                fmt::format("jetstream session: deleting run {}: {}", quote(id), purged.error().message));
        }
        co_return result<void>{};
    }

    [[nodiscard]] std::string location() const override { return fmt::format("stream {}", quote(s_->stream)); }

private:
    std::shared_ptr<const shared_store> s_;
};

}  // namespace

asio::awaitable<std::shared_ptr<store>> bind_jetstream_store(jetstream_store_options options, const context& ctx) {
    if (options.stream.empty()) {
        throw startup_error(
            "jetstream session: options.stream is required (the JetStream stream name); the stream must already "
            "exist");
    }
    if (!ctx.nats) {
        throw startup_error(
            "jetstream session: requires a NATS connection but none is configured; set nats_context in the config to "
            "a context created with `nats context add`");
    }
    js::context_options jo;
    jo.default_timeout = options.op_timeout;
    auto jsc = std::make_shared<js::context>(*ctx.nats, ctx.blocking, jo);
    std::string no_filter;
    auto info = co_await jsc->get_stream_info(options.stream, std::move(no_filter), options.bind_timeout);
    if (!info) {
        if (info.error().code == js::errc::not_found)
            throw startup_error(js_layout::missing_stream_text(options.stream));
        if (info.error().code == js::errc::no_responders) {
            throw startup_error(fmt::format("jetstream session: cannot bind stream {}: {}", quote(options.stream),
                                            jsc->not_enabled_text()));
        }
        throw startup_error(
            fmt::format("jetstream session: binding stream {}: {}", quote(options.stream), info.error().message));
    }
    auto prefix = js_layout::derive_prefix(info->config.subjects);
    if (const auto* bad = std::get_if<js_layout::prefix_error>(&prefix)) {
        throw startup_error(fmt::format("jetstream session: stream {} {}", quote(options.stream), bad->text));
    }
    if (auto bad = js_layout::check_stream_config(info->config, options.stream)) throw startup_error(*bad);

    auto shared = std::make_shared<shared_store>();
    shared->js = std::move(jsc);
    shared->stream = options.stream;
    shared->prefix = std::get<std::string>(prefix);
    shared->options = std::move(options);
    co_return std::make_shared<jetstream_store>(std::move(shared));
}

std::shared_ptr<store> make_jetstream_store(std::string_view options_json, const context& ctx) {
    const auto object = decode_options(options_json, "jetstream session", {"stream"});
    jetstream_store_options options;
    if (const auto* v = object.if_contains("stream")) {
        if (!v->is_string()) {
            throw startup_error(
                "invalid jetstream session options: \"stream\" must be a string (the JetStream stream name)");
        }
        options.stream = std::string(v->as_string());
    }
    asio::io_context io;
    auto done = asio::co_spawn(io, bind_jetstream_store(std::move(options), ctx), asio::use_future);
    io.run();
    return done.get();
}

}  // namespace fiskai::runstate
