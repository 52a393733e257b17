#include <fiskai/a2a/codec.hpp>
#include <fiskai/a2a/ids.hpp>
#include <fiskai/a2a/task_flow.hpp>
#include <fiskai/a2a/validator.hpp>
#include <fiskai/a2a_nats/task_transport.hpp>
#include <fiskai/gocompat/duration.hpp>
#include <fiskai/gocompat/quote.hpp>
#include <fiskai/runstate/store.hpp>
#include <fiskai/serve/a2a_channel.hpp>
#include <fiskai/serve/a2a_rules.hpp>
#include <fiskai/serve/session_ids.hpp>
#include <fiskai/toolkit/prompter.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <fmt/format.h>

#include <deque>
#include <map>
#include <optional>
#include <set>
#include <utility>

namespace fiskai::serve {

namespace asio = boost::asio;
namespace rules = a2a_rules;
using std::chrono::steady_clock;

namespace {

// How a reply went: `invalid` is a bug (the message could not be encoded or validated;
// its number is not consumed), `failed` a publish nats.c refused.
enum class sent { ok, invalid, failed };

}  // namespace

struct a2a_channel::impl : std::enable_shared_from_this<a2a_channel::impl> {
    asio::any_io_executor executor;
    std::shared_ptr<runstate::store> sessions;
    a2a_channel_options options;
    a2a_nats::task_transport transport;
    bool released = false;
    std::set<std::string> busy;  // sessions admitted here and not yet reported
    rules::held_approvals held;

    impl(conns::connection& nats, asio::any_io_executor ex, std::shared_ptr<runstate::store> s, a2a_channel_options o)
        : executor(ex), sessions(std::move(s)), options(std::move(o)), transport(nats, ex, options.log) {}

    // Stamps, encodes (capped), validates and publishes one reply of a task.
    sent publish_reply(a2a::message m, const a2a::header& request, std::string_view session_id, std::string_view inbox,
                       a2a::reply_sequencer& seq) {
        a2a::stamp_task_reply(a2a::header_of(m), request, options.identity, session_id, seq.next());
        auto body = a2a::encode_capped(m);
        if (!body) {
            options.log.error("a2a: bug: a reply could not be encoded",
                              {{"task", request.request}, {"error", body.error().message}});
            return sent::invalid;
        }
        // The schema check only: the typed decode that check() adds would rebuild the message
        // this body was just encoded from, and the protocol is the one encoded.
        if (auto v = a2a::default_validator().validate(*body); !v) {
            options.log.error("a2a: bug: a reply failed its own validation",
                              {{"task", request.request}, {"error", v.error().message}});
            return sent::invalid;
        }
        if (!transport.publish(inbox, *body)) {
            options.log.warn("a2a: a reply could not be published", {{"task", request.request}});
            return sent::failed;
        }
        seq.published();
        return sent::ok;
    }

    // A refusal: a negative ack, then the terminal error (§6.4 rule 3).
    void refuse(const std::string& inbox, const a2a::task_request& request, const rules::refusal& r) {
        options.log.info(
            "a2a: refused a task",
            {{"task", request.request}, {"sender", request.sender.name}, {"code", r.code}, {"reason", r.reason}});
        const auto session = a2a_session_id(options.identity, request.sender.name, request.request);
        a2a::reply_sequencer seq;
        a2a::task_ack ack;
        ack.accepted = false;
        ack.reason = r.reason;
        publish_reply(std::move(ack), request, session, inbox, seq);
        if (publish_reply(rules::refusal_terminal(r), request, session, inbox, seq) == sent::invalid)
            publish_reply(rules::crashed_terminal(), request, session, inbox, seq);
    }

    // A request that is not a task request at all: a 400 service error, no reply set.
    void reject_malformed(const std::string& inbox, std::string_view text) {
        options.log.debug("a2a: rejected a request", {{"error", std::string(text)}});
        transport.publish_error(inbox, 400, text);
    }

    // A request taken while draining (Amendment 16).
    void refuse_inbound(const a2a_nats::inbound& in, const rules::refusal& r) {
        if (!rules::answerable(in.reply)) return;
        auto checked = a2a::default_validator().check_as<a2a::task_request>(in.data);
        if (!checked) {
            reject_malformed(in.reply, checked.error().message);
            return;
        }
        refuse(in.reply, *checked, r);
    }

    std::optional<toolkit::approval> take_held(const std::string& session, const std::string& call) {
        return held.take(session, call, steady_clock::now());
    }

    void hold(const std::string& session, const std::string& call, toolkit::approval choice) {
        held.hold(session, call, choice, steady_clock::now());
    }

    asio::awaitable<std::unique_ptr<work>> admit(a2a_nats::inbound in);
};

namespace {

// One admitted task: owns its reply sink from the ack to the terminal, its cancel and
// elicit subscriptions, its stop gate and its open question. All on the executor.
class a2a_task final : public agent::event_sink,
                       public toolkit::prompter,
                       public std::enable_shared_from_this<a2a_task> {
public:
    a2a_task(std::shared_ptr<a2a_channel::impl> ch, a2a::header request, std::string inbox, rules::admitted a)
        : channel_(std::move(ch)),
          request_(std::move(request)),
          inbox_(std::move(inbox)),
          admitted_(std::move(a)),
          filter_(admitted_.task, admitted_.sender),
          keepalive_timer_(channel_->executor),
          question_timer_(channel_->executor) {}

    [[nodiscard]] const rules::admitted& admitted() const noexcept { return admitted_; }
    agent::stop_gate& stop() noexcept { return stop_; }
    void set_subscriptions(std::unique_ptr<a2a_nats::task_subscriptions> s) { subs_ = std::move(s); }

    // The ack, sequence 1, then whatever was queued while the task was being admitted.
    sent send_ack() {
        a2a::task_ack ack;
        ack.accepted = true;
        const auto s = publish(std::move(ack));
        if (s == sent::ok) {
            acked_ = true;
            publish_queued_events();
        }
        return s;
    }

    // Publishes now, after any events still queued: the order and numbering on the wire are
    // those of the calls.
    sent send(a2a::message m) {
        publish_queued_events();
        return publish(std::move(m));
    }

    // `stream: false` suppresses events only. An event is queued and published from a handler
    // posted to the executor: the run goes straight on to its next step (the model request
    // or the tool's spawn is under way while its events are encoded, checked and published)
    // instead of waiting for them. Every other reply goes through send(), which publishes the
    // queue first, so no event is ever overtaken.
    void send_event(a2a::block b) {
        if (!admitted_.stream || closed_) return;
        a2a::task_event e;
        e.block = std::move(b);
        queued_events_.push_back(std::move(e));
        if (queued_events_.size() == 1) {
            asio::post(channel_->executor, [weak = weak_from_this()] {
                if (auto self = weak.lock()) self->publish_queued_events();
            });
        }
    }

    void start_keepalives() {
        last_publish_ = steady_clock::now();
        auto self = shared_from_this();
        asio::co_spawn(channel_->executor, keepalive_loop(self), asio::detached);
    }

    // Caller-to-worker messages (§6.5).
    void on_message(a2a::task_route route, std::string body) {
        if (closed_) return;
        auto v = filter_.receive(route, body);
        if (!v.warning.empty()) channel_->options.log.warn(v.warning);
        if (!v.accepted) {
            channel_->options.log.debug("a2a: dropped a message", {{"task", admitted_.task}, {"why", v.why}});
            return;
        }
        if (std::holds_alternative<a2a::task_cancel>(*v.accepted)) {
            on_cancel();
        } else if (auto* a = std::get_if<a2a::task_answer>(&*v.accepted)) {
            on_answer(*a);
        } else if (auto* k = std::get_if<a2a::task_keepalive>(&*v.accepted)) {
            on_keepalive(*k);
        }
    }

    // The terminal (§6.4), then the subscriptions close.
    void finish(const outcome& o) {
        if (closed_) return;
        give_up_question();
        if (send(rules::terminal_for(o)) == sent::invalid) send(rules::crashed_terminal());
        close();
    }

    // Nothing is published after this (events still queued go first; never acked, the task
    // is refused next, with a reply set of its own, so they are dropped).
    void close() {
        if (closed_) return;
        if (acked_)
            publish_queued_events();
        else
            queued_events_.clear();
        closed_ = true;
        keepalive_timer_.cancel();
        question_timer_.cancel();
        if (subs_) subs_->close();
        channel_->busy.erase(admitted_.session_id);
    }

    // ---- agent::event_sink ----
    void status(std::int64_t iteration, std::string_view phase, const llm::usage& so_far) override {
        iteration_ = iteration;
        usage_ = so_far;
        send_event(rules::status_event(iteration, phase, so_far));
    }
    void message(const llm::response& reply, bool /*terminal*/) override {
        for (auto& b : rules::response_events(reply, channel_->options.provider)) send_event(std::move(b));
    }
    void tool_result(const agent::tool_result_trace& trace) override { send_event(rules::tool_result_event(trace)); }

    // ---- toolkit::prompter ----
    [[nodiscard]] bool can_prompt() const override { return !closed_; }

    asio::awaitable<toolkit::approval_reply> approve(toolkit::approval_request request) override {
        if (auto choice = channel_->take_held(admitted_.session_id, request.call_id)) {
            toolkit::approval_reply r;
            r.status = toolkit::reply_status::answered;
            r.choice = *choice;
            co_return r;
        }
        const auto id = a2a::new_id();
        // GCC 12: no temporaries inside a co_await expression.
        auto question = rules::approval_question(request, id, window());
        rules::question_shape shape{"approval", 0};
        auto outcome = co_await ask_and_wait(std::move(question), std::move(shape));
        toolkit::approval_reply r;
        r.question_id = id;
        if (outcome == toolkit::reply_status::answered && answer_) {
            r = rules::approval_reply_from(*answer_);
            r.question_id = id;
        } else {
            r.status = outcome;
        }
        co_return r;
    }

    asio::awaitable<toolkit::question_reply> ask(toolkit::question q) override {
        const auto id = a2a::new_id();
        auto msg = rules::tool_question(q, id, window());
        rules::question_shape shape{msg.kind, msg.options.size()};
        auto outcome = co_await ask_and_wait(std::move(msg), std::move(shape));
        toolkit::question_reply r;
        if (outcome == toolkit::reply_status::answered && answer_)
            r = rules::question_reply_from(*answer_);
        else
            r.status = outcome;
        r.question_id = id;
        co_return r;
    }

private:
    struct open_question {
        std::string id;
        rules::question_shape shape;
        std::string call_id;
        rules::question_slot slot;
        steady_clock::time_point deadline;
    };

    [[nodiscard]] std::chrono::nanoseconds window() const {
        return rules::question_window(channel_->options.question_timeout, channel_->options.question_timeout_floor);
    }

    static asio::awaitable<void> keepalive_loop(std::shared_ptr<a2a_task> self) {
        const auto interval =
            std::chrono::duration_cast<steady_clock::duration>(self->channel_->options.keepalive_interval);
        for (;;) {
            if (self->closed_) co_return;
            const auto due = self->last_publish_ + interval;
            if (steady_clock::now() >= due) {
                a2a::task_keepalive k;
                // While a question is open the keepalive names it (§6.4 rule 6).
                if (self->question_ && self->question_->slot.current() == rules::question_slot::state::open)
                    k.question_id = self->question_->id;
                if (self->send(std::move(k)) != sent::ok) self->last_publish_ = steady_clock::now();
                continue;
            }
            self->keepalive_timer_.expires_at(due);
            boost::system::error_code ec;
            co_await self->keepalive_timer_.async_wait(asio::redirect_error(asio::use_awaitable, ec));
        }
    }

    // Amendment 2: status waiting-for-answer first, then the question; then the first of
    // answer, window expiry (restarted by keepalives), stop gate, run cancelled.
    asio::awaitable<toolkit::reply_status> ask_and_wait(a2a::task_question q, rules::question_shape shape) {
        auto self = shared_from_this();
        if (closed_ || stop_.closed()) co_return toolkit::reply_status::silent;
        question_.emplace();
        question_->id = q.question_id;
        question_->shape = shape;
        question_->call_id = q.call_id;
        question_->deadline = steady_clock::now() + std::chrono::duration_cast<steady_clock::duration>(window());
        answer_.reset();
        send_event(rules::status_event(iteration_, "waiting-for-answer", usage_));
        if (send(std::move(q)) != sent::ok) {
            question_->slot.resolve(rules::question_slot::verdict::give_up);
            co_return toolkit::reply_status::unavailable;
        }
        for (;;) {
            const auto st = question_->slot.current();
            if (st == rules::question_slot::state::delivered) co_return toolkit::reply_status::answered;
            if (st == rules::question_slot::state::given_up) co_return toolkit::reply_status::silent;
            if (steady_clock::now() >= question_->deadline) {
                question_->slot.resolve(rules::question_slot::verdict::give_up);
                co_return toolkit::reply_status::silent;
            }
            question_timer_.expires_at(question_->deadline);
            boost::system::error_code ec;
            co_await question_timer_.async_wait(asio::redirect_error(asio::use_awaitable, ec));
            auto cs = co_await asio::this_coro::cancellation_state;
            if (cs.cancelled() != asio::cancellation_type::none) {
                question_->slot.resolve(rules::question_slot::verdict::give_up);
                co_return toolkit::reply_status::cancelled;
            }
        }
    }

    void give_up_question() {
        if (question_ &&
            question_->slot.resolve(rules::question_slot::verdict::give_up) == rules::question_slot::effect::given_up)
            question_timer_.cancel();
    }

    // §6.6: the stop gate closes (the run's context is not cancelled); an open question is
    // given up.
    void on_cancel() {
        if (stop_.closed()) return;
        stop_.close();
        send_event(rules::status_event(iteration_, "stopping", usage_));
        give_up_question();
    }

    void on_answer(const a2a::task_answer& a) {
        auto& log = channel_->options.log;
        if (!question_ || a.question_id != question_->id) {
            log.debug("a2a: ignoring an answer for a question that is not open here",
                      {{"task", admitted_.task}, {"question", a.question_id}});
            return;
        }
        if (auto why = rules::answer_mismatch(question_->shape, a)) {
            log.warn(fmt::format("ignoring answer for question {}: {}", a.question_id, *why));
            return;
        }
        switch (question_->slot.resolve(rules::question_slot::verdict::answer)) {
            case rules::question_slot::effect::delivered:
                answer_ = a;
                question_timer_.cancel();
                return;
            case rules::question_slot::effect::late:
                // §6.7 rule 6: a late approval is held for the continuation's re-ask.
                if (question_->shape.kind == "approval" && a.decision) {
                    channel_->hold(admitted_.session_id, question_->call_id, rules::approval_reply_from(a).choice);
                    send_event(rules::status_event(iteration_, "answer-held", usage_));
                    return;
                }
                log.debug("a2a: ignoring a late answer", {{"task", admitted_.task}, {"question", a.question_id}});
                return;
            default:
                log.debug("a2a: ignoring a second answer", {{"task", admitted_.task}, {"question", a.question_id}});
                return;
        }
    }

    sent publish(a2a::message m) {
        if (closed_) return sent::failed;
        auto r = channel_->publish_reply(std::move(m), request_, admitted_.session_id, inbox_, seq_);
        if (r == sent::ok) last_publish_ = steady_clock::now();
        return r;
    }

    void publish_queued_events() {
        // Nothing goes before the ack (sequence 1, §6.4): a cancel that came while the task
        // was being admitted queued its status here, and it follows the ack.
        if (!acked_) return;
        while (!queued_events_.empty()) {
            auto e = std::move(queued_events_.front());
            queued_events_.pop_front();
            publish(std::move(e));
        }
    }

    // A keepalive naming the open question (or none) restarts its window.
    void on_keepalive(const a2a::task_keepalive& k) {
        if (!question_ || question_->slot.current() != rules::question_slot::state::open) return;
        if (!k.question_id.empty() && k.question_id != question_->id) return;
        question_->deadline = steady_clock::now() + std::chrono::duration_cast<steady_clock::duration>(window());
        question_timer_.expires_at(question_->deadline);
    }

    std::shared_ptr<a2a_channel::impl> channel_;
    a2a::header request_;
    std::string inbox_;
    rules::admitted admitted_;
    a2a_nats::inbound_filter filter_;
    a2a::reply_sequencer seq_;
    std::deque<a2a::task_event> queued_events_;  // see send_event()
    bool closed_ = false;
    bool acked_ = false;
    steady_clock::time_point last_publish_ = steady_clock::now();
    asio::steady_timer keepalive_timer_;
    asio::steady_timer question_timer_;
    agent::stop_gate stop_;
    std::unique_ptr<a2a_nats::task_subscriptions> subs_;
    std::int64_t iteration_ = 0;
    llm::usage usage_;
    std::optional<open_question> question_;
    std::optional<a2a::task_answer> answer_;
};

class a2a_work final : public work {
public:
    explicit a2a_work(std::shared_ptr<a2a_task> t) : task_(std::move(t)) {}
    ~a2a_work() override { task_->close(); }

    run_hooks run_context() override { return run_hooks{task_.get(), &task_->stop()}; }

    asio::awaitable<void> done(outcome result) override {
        task_->finish(result);
        co_return;
    }

private:
    std::shared_ptr<a2a_task> task_;
};

}  // namespace

asio::awaitable<std::unique_ptr<work>> a2a_channel::impl::admit(a2a_nats::inbound in) {
    auto self = shared_from_this();
    if (!rules::answerable(in.reply)) {
        options.log.debug("a2a: dropped a request whose reply subject cannot be answered",
                          {{"reply", gocompat::quote_bounded(in.reply)}});
        co_return nullptr;
    }
    auto checked = a2a::default_validator().check_as<a2a::task_request>(in.data);
    if (!checked) {
        reject_malformed(in.reply, checked.error().message);
        co_return nullptr;
    }
    const auto& request = *checked;
    if (released) {
        refuse(in.reply, request, {std::string(rules::code::shutting_down), std::string(rules::text::shutting_down)});
        co_return nullptr;
    }
    rules::admit_options ao;
    ao.identity = options.identity;
    ao.accept_window = options.accept_window;
    ao.now = std::chrono::system_clock::now();
    ao.tool_names = options.tool_names;
    auto decided = rules::admit(request, ao);
    if (auto* m = std::get_if<rules::malformed>(&decided)) {
        reject_malformed(in.reply, m->text);
        co_return nullptr;
    }
    if (auto* r = std::get_if<rules::refusal>(&decided)) {
        refuse(in.reply, request, *r);
        co_return nullptr;
    }
    auto a = std::get<rules::admitted>(std::move(decided));
    // Busy first: whether the session exists does not matter while it is taken here.
    if (busy.contains(a.session_id)) {
        refuse(in.reply, request, *rules::follow_up_rule(a, a.continuation, true));
        co_return nullptr;
    }
    // Held from here until done(), so a second request for the session waits its turn.
    busy.insert(a.session_id);
    bool exists = false;
    if (sessions) {
        auto found = co_await sessions->exists(a.session_id);
        if (!found) {
            busy.erase(a.session_id);
            refuse(in.reply, request,
                   {std::string(rules::code::transport),
                    fmt::format("could not read the session store: {}", found.error().message)});
            co_return nullptr;
        }
        exists = *found;
    }
    if (auto r = rules::follow_up_rule(a, exists, false)) {
        busy.erase(a.session_id);
        refuse(in.reply, request, *r);
        co_return nullptr;
    }

    auto task = std::make_shared<a2a_task>(self, static_cast<const a2a::header&>(request), in.reply, a);
    std::weak_ptr<a2a_task> weak = task;
    auto on_message = [weak](a2a::task_route route, std::string body) {
        if (auto t = weak.lock()) t->on_message(route, std::move(body));
    };
    auto subs = co_await transport.open_task(options.identity, a.id, on_message);
    if (!subs) {
        task->close();
        refuse(in.reply, request,
               {std::string(rules::code::transport),
                fmt::format("could not open the task's cancel and elicit subscriptions: {}", subs.error().message)});
        co_return nullptr;
    }
    task->set_subscriptions(std::move(*subs));
    if (released) {
        task->close();
        refuse(in.reply, request, {std::string(rules::code::shutting_down), std::string(rules::text::shutting_down)});
        co_return nullptr;
    }
    if (task->send_ack() != sent::ok) {
        task->close();
        co_return nullptr;
    }
    task->start_keepalives();

    auto w = std::make_unique<a2a_work>(task);
    w->session_id = a.session_id;
    w->prompt = a.prompt;
    w->follow_up = a.continuation && exists;
    w->from = caller{a.sender, false};
    w->limits = a.limits;
    w->prompter = options.elicitation ? static_cast<toolkit::prompter*>(task.get()) : nullptr;
    w->label = fmt::format("a2a request {} from {}", a.task, a.sender);
    options.log.info("a2a: accepted a task", {{"task", a.task},
                                              {"sender", a.sender},
                                              {"session", a.session_id},
                                              {"follow_up", w->follow_up ? "true" : "false"}});
    co_return w;
}

a2a_channel::a2a_channel(conns::connection& nats, asio::any_io_executor executor,
                         std::shared_ptr<runstate::store> sessions, a2a_channel_options options) {
    if (options.question_timeout < options.question_timeout_floor) {
        options.log.warn(fmt::format("expose.agent.a2a.prompts.question_timeout {} is below {}; using {}",
                                     gocompat::format_duration(options.question_timeout),
                                     gocompat::format_duration(options.question_timeout_floor),
                                     gocompat::format_duration(options.question_timeout_floor)));
        options.question_timeout = options.question_timeout_floor;
    }
    impl_ = std::make_shared<impl>(nats, std::move(executor), std::move(sessions), std::move(options));
    if (impl_->options.request_service) {
        impl_->transport.open_intake(impl_->options.request_service, impl_->options.identity);
    } else {
        impl_->transport.open_intake(impl_->options.identity);
    }
}

a2a_channel::~a2a_channel() { release(); }

asio::awaitable<std::unique_ptr<work>> a2a_channel::next() {
    auto st = impl_;
    for (;;) {
        if (st->released) co_return nullptr;
        auto in = co_await st->transport.next_request();
        if (!in) co_return nullptr;
        auto w = co_await st->admit(std::move(*in));
        if (w) co_return w;
    }
}

void a2a_channel::release() {
    if (impl_->released) return;
    impl_->released = true;
    std::weak_ptr<impl> weak = impl_;
    impl_->transport.drain_intake([weak](a2a_nats::inbound in) {
        if (auto st = weak.lock())
            st->refuse_inbound(in, {std::string(rules::code::shutting_down), std::string(rules::text::shutting_down)});
    });
}

std::string a2a_channel::description() const {
    return fmt::format("a2a: requests on {} (queue group {}), elicitation {}", impl_->transport.intake_subject(),
                       impl_->options.identity, impl_->options.elicitation ? "on" : "off");
}

std::size_t a2a_channel::pending_requests() const noexcept { return impl_->transport.pending(); }

std::size_t a2a_channel::held_approvals() const noexcept { return impl_->held.size(); }

}  // namespace fiskai::serve
