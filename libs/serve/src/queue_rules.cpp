#include <fiskai/a2a/codec.hpp>
#include <fiskai/a2a/task_flow.hpp>
#include <fiskai/a2a/validator.hpp>
#include <fiskai/gocompat/duration.hpp>
#include <fiskai/gocompat/quote.hpp>
#include <fiskai/serve/a2a_rules.hpp>
#include <fiskai/serve/queue_rules.hpp>
#include <fiskai/serve/session_ids.hpp>

#include <boost/json.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <limits>

namespace fiskai::serve::queue_rules {

namespace json = boost::json;

namespace {

bool task_token_ok(std::string_view s) {
    if (s.empty() || s.size() > 64) return false;
    return std::all_of(s.begin(), s.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
    });
}

a2a::task_error error_answer(std::string_view stop_reason, std::string_view c, std::string_view text) {
    a2a::task_error e;
    e.stop_reason = std::string(stop_reason);
    e.code = std::string(c);
    e.error = std::string(text);
    return e;
}

std::string_view ack_policy_name(jetstream::ack_policy p) {
    switch (p) {
        case jetstream::ack_policy::none: return "none";
        case jetstream::ack_policy::all: return "all";
        case jetstream::ack_policy::explicit_ack: return "explicit";
    }
    return "explicit";
}

}  // namespace

std::string work_subject(std::string_view identity) { return fmt::format("choria.fisk-ai.work.{}", identity); }

std::string answer_key(std::string_view identity, std::string_view task) {
    return fmt::format("{}.{}", identity, task);
}

std::variant<job, invalid_job> decode_job(std::string_view body, const std::optional<std::string>& msg_id,
                                          std::string_view identity, std::span<const std::string> tool_names) {
    const std::string header_task = msg_id && task_token_ok(*msg_id) ? *msg_id : std::string();
    auto checked = a2a::default_validator().check_as<a2a::task_request>(body);
    if (!checked) {
        // A body that is not a valid request still gets its error answer under the task it
        // names, when that is a well-formed key; else under the header's.
        auto named = a2a::request_named_by(body);
        return invalid_job{task_token_ok(named) ? std::move(named) : header_task, checked.error().message};
    }
    auto& request = *checked;
    const std::string task = task_token_ok(request.request) ? request.request : header_task;

    a2a_rules::admit_options ao;
    ao.identity = identity;
    // A job may wait in the stream for as long as the operator keeps it: no accept window.
    ao.accept_window = std::nullopt;
    ao.tool_names = tool_names;
    auto decided = a2a_rules::admit(request, ao);
    if (auto* m = std::get_if<a2a_rules::malformed>(&decided)) return invalid_job{task, m->text};
    if (auto* r = std::get_if<a2a_rules::refusal>(&decided)) return invalid_job{task, r->reason};
    auto a = std::get<a2a_rules::admitted>(std::move(decided));
    // Deliveries repeat, so a queue job never follows up (Amendment 17).
    if (a.continuation)
        return invalid_job{task, fmt::format("a queue job must be a new task: its request {} differs from its id {}",
                                             gocompat::quote(a.task), gocompat::quote(a.id))};
    job j;
    j.task = a.task;
    j.session_id = queue_session_id(identity, a.task);
    j.prompt = std::move(a.prompt);
    j.limits = a.limits;
    j.request = std::move(request);
    return j;
}

decision decide(const outcome& o, std::uint64_t delivery, std::int64_t max_deliver) {
    const bool last = max_deliver > 0 && delivery >= static_cast<std::uint64_t>(max_deliver);
    // A hard stop parks the run (suspended, interrupted): nothing failed, so another worker
    // resumes it at once; on the last delivery the stop is stored instead (Amendment 13).
    if (o.abandoned) {
        if (!last) return {settle::nak, {}};
        return {settle::store_then_ack,
                error_answer("canceled", code::abandoned, o.error.empty() ? serve::text::abandoned : o.error), true};
    }
    if (o.reason == "suspended" && o.interrupted) {
        if (!last) return {settle::nak, {}};
        return {settle::store_then_ack, error_answer("canceled", code::interrupted, a2a_rules::text::interrupted),
                true};
    }
    if (o.crashed) {
        if (!last) return {settle::nak_with_delay, {}};
        return {settle::store_then_ack, a2a_rules::terminal_for(o), true};
    }
    return {settle::store_then_ack, a2a_rules::terminal_for(o)};
}

a2a::task_error invalid_answer(std::string_view error) { return error_answer("error", code::invalid_request, error); }

a2a::task_error max_deliveries_answer(std::uint64_t deliveries) {
    return error_answer("error", code::crashed,
                        fmt::format("the job was delivered {} times without finishing", deliveries));
}

std::string encode_answer(a2a::message terminal, const a2a::header& request, std::string_view identity,
                          std::string_view session_id) {
    auto attempt = [&](a2a::message m) -> std::optional<std::string> {
        a2a::stamp_task_reply(a2a::header_of(m), request, identity, session_id, 1);
        auto body = a2a::encode_capped(m);
        if (!body) return std::nullopt;
        if (!a2a::default_validator().check(*body, a2a::protocol_of(m))) return std::nullopt;
        return std::move(*body);
    };
    if (auto body = attempt(std::move(terminal))) return std::move(*body);
    if (auto body = attempt(a2a_rules::crashed_terminal())) return std::move(*body);
    return {};
}

namespace text {

std::string jetstream_disabled(const storage_names& n) {
    return fmt::format("queue: JetStream is not enabled on the NATS server of context {}", gocompat::quote(n.context));
}

std::string stream_missing(const storage_names& n) {
    return fmt::format(
        "queue: work queue stream {} does not exist; create it first, e.g. `nats stream add {} --subjects "
        "'choria.fisk-ai.work.>' --retention=work --max-msg-size=1048576`",
        gocompat::quote(n.stream), n.stream);
}

std::string bucket_missing(const storage_names& n) {
    return fmt::format(
        "queue: task store KV bucket {} does not exist; create it first, e.g. `nats kv add {} --history=1 "
        "--max-value-size=786432 --ttl=168h`",
        gocompat::quote(n.task_store), n.task_store);
}

std::string consumer_missing(const storage_names& n) {
    return fmt::format(
        "queue: consumer {} on stream {} does not exist; create it first, e.g. `nats consumer add {} {} --pull "
        "--filter '{}' --ack explicit --wait 30s --max-deliver 5 --max-pending 1000 --deliver all --replay instant`",
        gocompat::quote(n.consumer), gocompat::quote(n.stream), n.stream, n.consumer, work_subject(n.identity));
}

std::string consumer_taken(const storage_names& n) {
    return fmt::format(
        "queue: stream {} already has another consumer on {} (a work-queue stream allows one consumer per subject); "
        "use it as expose.agent.queue.consumer or remove it",
        gocompat::quote(n.stream), gocompat::quote(work_subject(n.identity)));
}

std::string dropped_invalid(std::uint64_t stream_seq, std::string_view error) {
    return fmt::format("queue: dropped an invalid job (stream seq {}): {}", stream_seq, error);
}

}  // namespace text

std::optional<std::string> check_stream(const storage_names& n, const jetstream::stream_info& info) {
    const auto& c = info.config;
    if (c.retention != jetstream::retention_policy::work_queue)
        return fmt::format(
            "queue: stream {} has {} retention, not work queue; jobs would be kept after they are done. Recreate it "
            "with --retention=work",
            gocompat::quote(n.stream), c.retention == jetstream::retention_policy::limits ? "limits" : "interest");
    const auto subject = work_subject(n.identity);
    const bool binds =
        std::any_of(c.subjects.begin(), c.subjects.end(), [&](const auto& p) { return subject_matches(p, subject); });
    if (!binds)
        return fmt::format("queue: stream {} does not bind subject {}; add it, e.g. --subjects 'choria.fisk-ai.work.>'",
                           gocompat::quote(n.stream), gocompat::quote(subject));
    if (c.max_msg_size > 0 && c.max_msg_size < min_stream_msg_size)
        return fmt::format(
            "queue: stream {} max message size is {} bytes, below the {} bytes a capped job and its Nats-Msg-Id need; "
            "recreate it with --max-msg-size=1048576",
            gocompat::quote(n.stream), c.max_msg_size, min_stream_msg_size);
    return std::nullopt;
}

std::optional<std::string> check_bucket(const storage_names& n, const jetstream::kv_status& status) {
    if (status.max_value_size > 0 && status.max_value_size < min_kv_value_size)
        return fmt::format(
            "queue: task store KV bucket {} max value size is {} bytes, below the 786432-byte a2a message cap; "
            "recreate it with --max-value-size=786432",
            gocompat::quote(n.task_store), status.max_value_size);
    return std::nullopt;
}

std::optional<std::string> check_consumer(const storage_names& n, const jetstream::consumer_info& info,
                                          const consumer_expectation& want) {
    const auto& c = info.config;
    auto conflict = [&](std::string_view field, const std::string& got, const std::string& wanted) {
        return fmt::format(
            "queue: consumer {} on stream {} has {} {}, want {}; remove it (nats consumer rm {} {}) or set "
            "expose.agent.queue.consumer",
            gocompat::quote(n.consumer), gocompat::quote(n.stream), field, got, wanted, n.stream, n.consumer);
    };
    if (c.ack != jetstream::ack_policy::explicit_ack)
        return conflict("AckPolicy", std::string(ack_policy_name(c.ack)), "explicit");
    if (c.ack_wait != want.ack_wait)
        return conflict("AckWait", gocompat::format_duration(c.ack_wait), gocompat::format_duration(want.ack_wait));
    if (c.max_deliver != want.max_deliver)
        return conflict("MaxDeliver", std::to_string(c.max_deliver), std::to_string(want.max_deliver));
    if (c.max_ack_pending != want.max_ack_pending)
        return conflict("MaxAckPending", std::to_string(c.max_ack_pending), std::to_string(want.max_ack_pending));
    const auto subject = work_subject(n.identity);
    if (c.filter_subject != subject)
        return conflict("FilterSubject", gocompat::quote(c.filter_subject), gocompat::quote(subject));
    return std::nullopt;
}

std::string dead_letter_subject(std::string_view identity) { return fmt::format("choria.fisk-ai.dead.{}", identity); }

jetstream::headers dead_letter_headers(const dead_letter& d) {
    std::string error = d.error.substr(0, 1024);
    for (auto& c : error)
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = ' ';
    jetstream::headers h;
    if (!d.task.empty()) h.emplace_back(dead_letter_header::task, d.task);
    h.emplace_back(dead_letter_header::stream_seq, std::to_string(d.stream_seq));
    h.emplace_back(dead_letter_header::deliveries, std::to_string(d.deliveries));
    h.emplace_back(dead_letter_header::error, error);
    return h;
}

std::optional<dead_letter> read_dead_letter(const jetstream::headers& h) {
    auto seq = jetstream::find_header(h, dead_letter_header::stream_seq);
    auto deliveries = jetstream::find_header(h, dead_letter_header::deliveries);
    if (!seq || !deliveries) return std::nullopt;
    dead_letter d;
    try {
        d.stream_seq = std::stoull(*seq);
        d.deliveries = std::stoull(*deliveries);
    } catch (const std::exception&) {
        return std::nullopt;
    }
    d.task = jetstream::find_header(h, dead_letter_header::task).value_or("");
    d.error = jetstream::find_header(h, dead_letter_header::error).value_or("");
    return d;
}

namespace text {

std::string dead_letter_missing(std::string_view stream) {
    return fmt::format(
        "queue: dead-letter stream {} does not exist; create it first, e.g. `nats stream add {} --subjects "
        "'choria.fisk-ai.dead.>' --retention=limits --max-msg-size=1048576 --max-age=720h`",
        gocompat::quote(stream), stream);
}

std::string dead_letter_unbound(std::string_view stream, std::string_view identity) {
    return fmt::format(
        "queue: dead-letter stream {} does not bind subject {}; add it, e.g. --subjects "
        "'choria.fisk-ai.dead.>'",
        gocompat::quote(stream), gocompat::quote(dead_letter_subject(identity)));
}

}  // namespace text

bool subject_matches(std::string_view pattern, std::string_view subject) {
    for (;;) {
        const auto pdot = pattern.find('.');
        const auto sdot = subject.find('.');
        const auto ptok = pattern.substr(0, pdot);
        const auto stok = subject.substr(0, sdot);
        if (ptok == ">") return !subject.empty();
        if (ptok != "*" && ptok != stok) return false;
        if (pdot == std::string_view::npos || sdot == std::string_view::npos)
            return pdot == std::string_view::npos && sdot == std::string_view::npos;
        pattern.remove_prefix(pdot + 1);
        subject.remove_prefix(sdot + 1);
    }
}

std::string max_deliveries_subject(std::string_view stream, std::string_view consumer) {
    return fmt::format("$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES.{}.{}", stream, consumer);
}

std::optional<max_deliveries> parse_max_deliveries(std::string_view body) {
    boost::system::error_code ec;
    auto v = json::parse(body, ec);
    if (ec || !v.is_object()) return std::nullopt;
    const auto& o = v.as_object();
    auto str = [&](std::string_view k) -> std::string {
        auto* p = o.if_contains(k);
        return p && p->is_string() ? std::string(p->as_string()) : std::string();
    };
    auto num = [&](std::string_view k) -> std::uint64_t {
        auto* p = o.if_contains(k);
        if (!p) return 0;
        if (p->is_uint64()) return p->as_uint64();
        if (p->is_int64() && p->as_int64() > 0) return static_cast<std::uint64_t>(p->as_int64());
        return 0;
    };
    if (str("type") != "io.nats.jetstream.advisory.v1.max_deliver") return std::nullopt;
    max_deliveries m;
    m.stream = str("stream");
    m.consumer = str("consumer");
    m.stream_seq = num("stream_seq");
    m.deliveries = num("deliveries");
    if (m.stream_seq == 0) return std::nullopt;
    return m;
}

}  // namespace fiskai::serve::queue_rules
