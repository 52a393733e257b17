#include <fiskai/a2a_nats/task_caller.hpp>

#include "nats_util.hpp"

#include <fiskai/a2a/codec.hpp>
#include <fiskai/a2a/ids.hpp>
#include <fiskai/a2a/stamp.hpp>
#include <fiskai/a2a/task_flow.hpp>
#include <fiskai/a2a/validator.hpp>
#include <fiskai/gocompat/duration.hpp>
#include <fiskai/gocompat/utf8.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/system/system_error.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <deque>
#include <optional>
#include <ostream>
#include <stdexcept>

namespace fiskai::a2a_nats {

namespace asio = boost::asio;
using clock = std::chrono::steady_clock;

void throw_exception_from_error(const task_problem& p, const boost::source_location&) {
    throw std::runtime_error(p.message);
}

std::ostream& operator<<(std::ostream& os, const task_problem& p) { return os << p.message; }

bool task_arrival::is_terminal() const noexcept {
    return std::holds_alternative<a2a::task_result>(message) || std::holds_alternative<a2a::task_error>(message);
}

namespace {

task_problem problem(task_failure kind, std::string message) { return {kind, std::move(message)}; }

// `60s` for whole seconds (as the accept text reads), Go's format otherwise.
std::string seconds_text(clock::duration d) {
    const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(d);
    if (ns.count() % 1'000'000'000 == 0) return fmt::format("{}s", ns.count() / 1'000'000'000);
    return gocompat::format_duration(ns);
}

}  // namespace

struct detail::task_caller_state : std::enable_shared_from_this<task_caller_state> {
    conns::connection* conn = nullptr;
    asio::any_io_executor executor;
    task_caller_options options;

    a2a::task_request request;
    std::string inbox;
    std::unique_ptr<async_subscription> subscription;

    // Arrivals that passed the pipeline, in order; `wake` is cancelled on each arrival.
    std::deque<task_arrival> queue;
    // Bounds on what a worker can make this caller hold: posted but not yet checked (the
    // subscription's budget), and checked but not yet read by the caller's owner.
    static constexpr std::size_t max_queued = 4096;
    std::shared_ptr<detail::delivery_budget> budget =
        std::make_shared<detail::delivery_budget>(1024, std::size_t{64} << 20);
    asio::steady_timer wake;
    clock::time_point last_arrival = clock::now();
    a2a::inbound_sequencer sequencer;
    bool closed = false;
    bool terminal_delivered = false;

    std::uint64_t next_outgoing = 1;
    std::string open_question;
    std::string held_question;
    std::shared_ptr<asio::steady_timer> keepalive_timer;

    task_caller_state(conns::connection& c, asio::any_io_executor ex, task_caller_options o)
        : conn(&c), executor(ex), options(std::move(o)), wake(ex) {
        if (options.idle_timeout < options.idle_floor) options.idle_timeout = options.idle_floor;
    }

    void warn(const std::string& text) const {
        if (options.log) options.log.warn(text);
    }
    void debug(const std::string& text) const {
        if (options.log) options.log.debug(text);
    }

    // Runs on the executor, in arrival order.
    // Only what is taken into the set restarts the idle limit: dropped, foreign and repeated
    // messages do not, so traffic that is never delivered cannot hold the caller forever.
    void arrived(detail::message_copy copy) {
        if (closed) return;
        if (const auto dropped = budget->take_dropped()) {
            warn(fmt::format("dropped {} messages in the reply set of {}: they came faster than they could be read",
                             dropped, request.request));
        }
        const bool status_reply = copy.no_responders || !copy.error_code.empty() || !copy.error.empty();
        if (status_reply && ack_seen) {
            // The request was taken: a status reply after the ack cannot undo it.
            warn(fmt::format("ignoring a status reply after the ack in the reply set of {}", request.request));
            return;
        }
        if (copy.no_responders) {
            no_responders = true;
            took_arrival();
            return;
        }
        if (status_reply) {
            // The intake refused the request before admitting it (a 400 service error).
            if (service_error.empty()) service_error = fmt::format("{} {}", copy.error_code, copy.error);
            took_arrival();
            return;
        }
        if (queue.size() >= max_queued) {
            warn(fmt::format("dropping a message in the reply set of {}: {} messages are already waiting to be read",
                             request.request, max_queued));
            return;
        }
        auto checked = a2a::default_validator().check(copy.data);
        if (!checked) {
            warn(
                fmt::format("dropping a message in the reply set of {}: {}", request.request, checked.error().message));
            return;
        }
        const auto& h = a2a::header_of(*checked);
        const auto proto = a2a::protocol_of(*checked);
        const bool reply_kind = proto == a2a::protocols::task_ack || proto == a2a::protocols::task_event ||
                                proto == a2a::protocols::task_question || proto == a2a::protocols::task_keepalive ||
                                proto == a2a::protocols::task_result || proto == a2a::protocols::task_error;
        if (!reply_kind) {
            warn(fmt::format("dropping a message in the reply set of {}: protocol {} does not belong in it",
                             request.request, proto));
            return;
        }
        if (h.request != request.request) {
            warn(fmt::format("dropping a message in the reply set of {}: it answers request \"{}\"", request.request,
                             h.request));
            return;
        }
        const auto verdict = sequencer.receive(h.sequence);
        if (verdict.kind == a2a::inbound_sequencer::verdict::duplicate) {
            debug(fmt::format("ignoring repeated message {} in the reply set of {}", h.sequence, request.request));
            return;
        }
        if (verdict.kind == a2a::inbound_sequencer::verdict::gap) {
            warn(fmt::format("gap in the reply set of {}: expected {}, got {}", request.request, verdict.expected,
                             h.sequence));
        }
        if (proto == a2a::protocols::task_ack) ack_seen = true;
        queue.push_back(task_arrival{std::move(*checked), std::move(copy.data), {}});
        took_arrival();
    }
    void took_arrival() {
        last_arrival = clock::now();
        wake.cancel();
    }
    bool no_responders = false;
    std::string service_error;
    // Kept for the life of the set (start() takes the ack out of the queue).
    bool ack_seen = false;
    // A cancel asked for before the ack: the worker subscribes the task's cancel subject
    // only as it admits the task, so one sent now would reach nobody. start() sends it as
    // soon as the task is accepted (and drops it with a refusal: nothing runs).
    std::optional<std::string> held_cancel;

    task_result<void> publish(a2a::message m, a2a::task_route route) {
        auto& h = a2a::header_of(m);
        a2a::stamp_request(h, options.self, options.agent);
        h.request = request.request;
        h.conversation = request.request;
        h.sequence = next_outgoing;
        auto body = a2a::encode(m);
        if (!body) return problem(task_failure::invalid_outgoing, "invalid outgoing request: " + body.error().message);
        if (auto ok = a2a::default_validator().check(*body); !ok) {
            return problem(task_failure::invalid_outgoing, "invalid outgoing request: " + ok.error().message);
        }
        // Keyed by the request's own id (a continuation has its own subjects).
        auto subject = a2a::task_subject(route, options.agent, request.id);
        if (!subject)
            return problem(task_failure::invalid_outgoing, "invalid outgoing request: " + subject.error().message);
        const natsStatus s = natsConnection_Publish(conn->native_handle(), subject->c_str(), body->data(),
                                                    static_cast<int>(body->size()));
        if (s != NATS_OK) {
            return problem(task_failure::transport,
                           fmt::format("publishing to \"{}\": {}", *subject, detail::status_text(s)));
        }
        // The number is spent only once the publish went out.
        ++next_outgoing;
        return {};
    }

    task_result<void> send_cancel(std::string reason) {
        a2a::task_cancel c;
        c.reason = std::move(reason);
        return publish(std::move(c), a2a::task_route::cancel);
    }

    void stop_keepalives() {
        held_question.clear();
        if (keepalive_timer) keepalive_timer->cancel();
        keepalive_timer.reset();
    }

    void arm_keepalive() {
        if (!keepalive_timer) return;
        std::weak_ptr<task_caller_state> weak = shared_from_this();
        auto timer = keepalive_timer;
        timer->expires_after(options.keepalive_interval);
        timer->async_wait([weak, timer](const boost::system::error_code& ec) {
            const auto self = weak.lock();
            if (ec || !self || self->keepalive_timer != timer || self->held_question.empty() || self->closed) return;
            a2a::task_keepalive k;
            k.question_id = self->held_question;
            if (auto sent = self->publish(std::move(k), a2a::task_route::elicit); !sent) {
                self->warn("could not keep question " + self->held_question + " open: " + sent.error().message);
            }
            self->arm_keepalive();
        });
    }

    void shut() {
        closed = true;
        stop_keepalives();
        wake.cancel();
        if (subscription) subscription->unsubscribe();
    }
};

task_caller::task_caller(conns::connection& nats, asio::any_io_executor executor, task_caller_options options)
    : state_(std::make_shared<detail::task_caller_state>(nats, std::move(executor), std::move(options))) {}

task_caller::~task_caller() { state_->shut(); }

clock::duration task_caller::idle_timeout() const noexcept { return state_->options.idle_timeout; }

const a2a::task_request& task_caller::request() const noexcept { return state_->request; }
const std::string& task_caller::task_id() const noexcept { return state_->request.request; }
const std::string& task_caller::open_question() const noexcept { return state_->open_question; }

asio::awaitable<task_result<a2a::task_ack>> task_caller::start() {
    const auto st = state_;
    auto& o = st->options;
    auto& r = st->request;
    r.prompt = o.prompt;
    r.context = o.context;
    r.tool_hints = o.tool_hints;
    r.budget = o.budget;
    r.stream = o.stream;
    a2a::stamp_request(r, o.self, o.agent);
    if (!o.continue_task.empty()) {
        // D7: a continuation names the task it continues and has its own id.
        r.request = o.continue_task;
        r.conversation = o.continue_task;
    }
    auto subject = a2a::task_subject(a2a::task_route::request, o.agent);
    if (!subject)
        co_return problem(task_failure::invalid_outgoing, "invalid outgoing request: " + subject.error().message);
    auto body = a2a::encode(r);
    if (!body) co_return problem(task_failure::invalid_outgoing, "invalid outgoing request: " + body.error().message);
    if (auto ok = a2a::default_validator().check(*body, a2a::protocols::task_request); !ok) {
        co_return problem(task_failure::invalid_outgoing, "invalid outgoing request: " + ok.error().message);
    }

    // The inbox is subscribed before the request goes out, so nothing of the set is missed.
    try {
        st->inbox = st->conn->new_inbox();
        std::weak_ptr<detail::task_caller_state> weak = st;
        auto ex = st->executor;
        st->subscription = detail::async_subscription::subscribe(
            st->conn->native_handle(), st->inbox, {}, [weak, ex, budget = st->budget](natsMsg* msg) {
                const auto size = static_cast<std::size_t>(natsMsg_GetDataLength(msg));
                if (!budget->reserve(size)) return;
                asio::post(ex, [weak, budget, size, copy = detail::copy_message(msg)]() mutable {
                    budget->release(size);
                    if (const auto self = weak.lock()) self->arrived(std::move(copy));
                });
            });
    } catch (const std::exception& e) {
        co_return problem(task_failure::transport, e.what());
    }
    const natsStatus s = natsConnection_PublishRequest(st->conn->native_handle(), subject->c_str(), st->inbox.c_str(),
                                                       body->data(), static_cast<int>(body->size()));
    if (s != NATS_OK) {
        co_return problem(task_failure::transport,
                          fmt::format("publishing to \"{}\": {}", *subject, detail::status_text(s)));
    }

    const auto deadline = clock::now() + o.accept_timeout;
    for (;;) {
        if (st->closed) co_return problem(task_failure::closed, "the task caller was closed");
        if (st->no_responders) {
            co_return problem(task_failure::unavailable,
                              fmt::format("remote agent unavailable: no reply on \"{}\": nats: no responders "
                                          "available for request",
                                          *subject));
        }
        if (!st->service_error.empty()) {
            co_return problem(task_failure::transport, "remote agent answered with an error: " + st->service_error);
        }
        // The ack is the first message of the set; events before it wait their turn. A
        // task's end before any ack is a worker breaking the flow: said at once, rather
        // than waiting out the accept timeout and blaming no worker.
        for (auto it = st->queue.begin(); it != st->queue.end(); ++it) {
            if (auto* ack = std::get_if<a2a::task_ack>(&it->message)) {
                auto out = std::move(*ack);
                st->queue.erase(it);
                if (auto held = std::exchange(st->held_cancel, std::nullopt); held && out.accepted) {
                    if (auto sent = st->send_cancel(std::move(*held)); !sent) co_return sent.error();
                }
                co_return out;
            }
            if (it->is_terminal()) {
                const auto* err = std::get_if<a2a::task_error>(&it->message);
                // The peer's text, bounded.
                const std::string said =
                    err ? "error: " + std::string(gocompat::utf8_prefix(err->error, 300)) : std::string("a result");
                co_return problem(task_failure::transport,
                                  fmt::format("remote agent \"{}\" ended the task before acknowledging it ({}); the "
                                              "worker does not follow the task flow",
                                              o.agent, said));
            }
        }
        if (clock::now() >= deadline) {
            co_return problem(task_failure::unavailable,
                              fmt::format("remote agent unavailable: no ack from \"{}\" within {} (no worker took the "
                                          "task)",
                                          o.agent, seconds_text(o.accept_timeout)));
        }
        st->wake.expires_at(deadline);
        co_await st->wake.async_wait(asio::as_tuple(asio::use_awaitable));
    }
}

asio::awaitable<task_result<task_arrival>> task_caller::next() {
    const auto st = state_;
    for (;;) {
        if (st->terminal_delivered) co_return problem(task_failure::closed, "the reply set is over");
        if (!st->queue.empty()) {
            auto a = std::move(st->queue.front());
            st->queue.pop_front();
            if (std::holds_alternative<a2a::task_ack>(a.message)) continue;  // a repeated ack under a new number
            const auto* keep = std::get_if<a2a::task_keepalive>(&a.message);
            const bool holds_open = keep && !st->open_question.empty() && keep->question_id == st->open_question;
            if (!st->open_question.empty() && !holds_open) {
                // Status before question (Amendment 2): whatever comes next means it closed.
                a.closed_question = std::exchange(st->open_question, {});
                if (st->held_question == a.closed_question) st->stop_keepalives();
            }
            if (const auto* q = std::get_if<a2a::task_question>(&a.message)) st->open_question = q->question_id;
            if (a.is_terminal()) {
                st->terminal_delivered = true;
                st->shut();
            }
            co_return a;
        }
        if (st->closed) co_return problem(task_failure::closed, "the task caller was closed");
        const auto idle_end = st->last_arrival + st->options.idle_timeout;
        if (clock::now() >= idle_end) {
            co_return problem(task_failure::idle,
                              fmt::format("no message from \"{}\" for {}; the task may still be running (wait, then "
                                          "continue it with --continue {})",
                                          st->options.agent, gocompat::format_duration(st->options.idle_timeout),
                                          st->request.request));
        }
        st->wake.expires_at(idle_end);
        co_await st->wake.async_wait(asio::as_tuple(asio::use_awaitable));
    }
}

task_result<void> task_caller::cancel(std::string reason) {
    const auto st = state_;
    if (!st->ack_seen && !st->closed) {
        st->held_cancel = std::move(reason);
        return {};
    }
    return st->send_cancel(std::move(reason));
}

task_result<void> task_caller::answer(a2a::task_answer answer) {
    const auto qid = answer.question_id;
    auto sent = state_->publish(std::move(answer), a2a::task_route::elicit);
    if (sent && state_->held_question == qid) state_->stop_keepalives();
    return sent;
}

task_result<void> task_caller::keepalive(std::string question_id) {
    a2a::task_keepalive k;
    k.question_id = std::move(question_id);
    return state_->publish(std::move(k), a2a::task_route::elicit);
}

void task_caller::hold_question(std::string question_id) {
    const auto st = state_;
    st->stop_keepalives();
    if (question_id.empty() || st->closed) return;
    st->held_question = std::move(question_id);
    st->keepalive_timer = std::make_shared<asio::steady_timer>(st->executor);
    st->arm_keepalive();
}

void task_caller::close() { state_->shut(); }

}  // namespace fiskai::a2a_nats
