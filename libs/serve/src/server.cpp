// The serve core's server (serve.md §5.2-5.5, Amendments 3 and 17): one puller per channel,
// a slot pool shared by every channel, one coroutine per taken work (run, then report), and
// the two stop stages. Everything here runs on the one io_context thread.

#include <fiskai/gocompat/duration.hpp>
#include <fiskai/serve/serve.hpp>
#include <fiskai/toolkit/prompter.hpp>
#include <fiskai/toolkit/slots.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/deferred.hpp>
#include <boost/asio/experimental/parallel_group.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/system/system_error.hpp>

#include <fmt/format.h>

#include <cassert>
#include <exception>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <system_error>
#include <utility>

namespace fiskai::serve {

namespace asio = boost::asio;

namespace {

std::string what_of(const std::exception_ptr& e) {
    try {
        std::rethrow_exception(e);
    } catch (const std::exception& ex) {
        return ex.what();
    } catch (...) {
        return "unknown exception";
    }
}

// A taken work with its two calls counted: each happens at most once, whatever path the
// work takes through the server (debug builds abort on a second call).
class taken_work {
public:
    explicit taken_work(std::unique_ptr<work> w) : work_(std::move(w)) {}
    [[nodiscard]] work& get() const noexcept { return *work_; }
    run_hooks run_context() {
        assert(!context_called_ && "run_context() called twice");
        context_called_ = true;
        return work_->run_context();
    }
    asio::awaitable<void> done(outcome result) {
        assert(!done_called_ && "done() called twice");
        done_called_ = true;
        co_await work_->done(std::move(result));
    }

private:
    std::unique_ptr<work> work_;
    bool context_called_ = false;
    bool done_called_ = false;
};

outcome outcome_for(const work& w, std::string error) {
    outcome o;
    o.error = std::move(error);
    o.session_id = w.session_id;
    return o;
}

// `<work_dir>/<session id>`, created 0700, or "" when no work_dir is configured.
// Session ids are derived hex, but a channel is code we do not control: a path-like id
// must not escape the directory.
std::optional<std::string> prepare_work_dir(const std::string& work_dir, const std::string& session_id,
                                            std::string& error) {
    if (work_dir.empty()) return std::string();
    if (session_id.empty() || session_id == "." || session_id == ".." ||
        session_id.find_first_of(std::string_view("/\0", 2)) != std::string::npos) {
        error = fmt::format(
            "session id \"{}\" cannot name a directory under expose.agent.work_dir; the channel must "
            "derive its session ids",
            session_id);
        return std::nullopt;
    }
    std::error_code ec;
    const auto dir = std::filesystem::absolute(work_dir, ec) / session_id;
    if (!ec) std::filesystem::create_directories(dir, ec);
    if (!ec)
        std::filesystem::permissions(dir, std::filesystem::perms::owner_all, std::filesystem::perm_options::replace,
                                     ec);
    if (ec) {
        error = fmt::format("cannot create the run's work directory {}: {}; check expose.agent.work_dir", dir.string(),
                            ec.message());
        return std::nullopt;
    }
    return dir.string();
}

}  // namespace

struct server::impl : std::enable_shared_from_this<impl> {
    struct channel_entry {
        std::shared_ptr<channel> ch;
        channel_options options;
    };
    impl(asio::any_io_executor ex, std::shared_ptr<const agent::runtime> rt, server_options opts)
        : executor(std::move(ex)),
          runtime(std::move(rt)),
          options(std::move(opts)),
          slots(executor, options.workers == 0 ? 1 : options.workers),
          idle(executor, asio::steady_timer::time_point::max()),
          cancelling(executor, asio::steady_timer::time_point::max()) {}

    asio::any_io_executor executor;
    std::shared_ptr<const agent::runtime> runtime;
    server_options options;
    toolkit::slot_pool slots;
    std::vector<channel_entry> channels;
    std::vector<std::shared_ptr<service>> services;

    bool started = false;
    bool hold_closed = false;
    bool drained = false;
    bool cancelled = false;
    std::optional<std::string> first_fault;
    // Pullers, services and taken works not yet reported: run() ends when it reaches zero.
    std::size_t active = 0;
    std::size_t in_flight = 0;  // runs in flight plus works waiting for a slot
    asio::steady_timer idle;    // cancelled when `active` reaches zero
    // Never expires; cancel() cancels it, ending every slot wait and run raced against it.
    // A parallel group owns the per-operation cancellation, so nothing is emitted into an
    // operation that has already finished.
    asio::steady_timer cancelling;

    void finished_one() {
        assert(active > 0);
        if (--active == 0) idle.cancel();
    }

    void fail(std::string text) {
        // A fault_watch channel's fault may also come out of its next().
        if (first_fault && *first_fault == text) return;
        options.log.error(text);
        if (!first_fault) first_fault = std::move(text);
        drain();
    }

    void drain() {
        if (drained) return;
        drained = true;
        hold_closed = true;
        for (auto& entry : channels) {
            if (auto* r = dynamic_cast<releasable*>(entry.ch.get())) {
                try {
                    r->release();
                } catch (const std::exception& e) {
                    options.log.warn(fmt::format("releasing channel \"{}\" failed: {}", entry.ch->name(), e.what()));
                }
            }
        }
        for (auto& svc : services) {
            try {
                svc->stop();
            } catch (const std::exception& e) {
                options.log.warn(fmt::format("stopping service \"{}\" failed: {}", svc->name(), e.what()));
            }
        }
    }

    void cancel() {
        drain();
        if (cancelled) return;
        cancelled = true;
        cancelling.cancel();
    }

    // A slot, or nothing when cancel() came first (the wait is bound to cancel(), never to
    // drain(): a drained server still runs the work it has taken).
    asio::awaitable<std::optional<toolkit::slot_pool::slot>> acquire() {
        if (cancelled) co_return std::nullopt;
        // Named, not a temporary inside the co_await expression (g++ 12).
        auto group = asio::experimental::make_parallel_group(asio::co_spawn(executor, slots.acquire(), asio::deferred),
                                                             cancelling.async_wait(asio::deferred));
        auto [order, acquire_error, granted, cancel_error] =
            co_await group.async_wait(asio::experimental::wait_for_one(), asio::use_awaitable);
        (void)order;
        (void)cancel_error;
        // A slot granted in the same turn as cancel() is given back: no run starts after it.
        if (acquire_error || cancelled) co_return std::nullopt;
        co_return std::move(granted);
    }

    asio::awaitable<void> pull(channel_entry entry) {
        auto self = shared_from_this();
        const std::string name(entry.ch->name());

        for (;;) {
            if (hold_closed) break;
            // Amendment 3: wait until a slot is free without taking one, so with every slot
            // busy no work is taken and the pressure stays in the transport.
            if (!(co_await acquire())) break;
            if (hold_closed) break;

            std::unique_ptr<work> w;
            std::optional<std::string> failure;
            try {
                w = co_await entry.ch->next();
            } catch (...) {
                failure = fmt::format("channel \"{}\" failed: {}", name, what_of(std::current_exception()));
            }
            if (failure) {
                fail(std::move(*failure));
                break;
            }
            if (!w) {
                if (!hold_closed) fail(fmt::format("channel \"{}\" ended unexpectedly", name));
                break;
            }

            if (w->follow_up && entry.options.deliveries_repeat) {
                // A follow-up continues a session; a redelivered one would continue it twice.
                auto refused = outcome_for(
                    *w, fmt::format("internal: follow-up work from channel \"{}\", whose deliveries repeat", name));
                options.log.info("work refused", {{"work", w->label}, {"session", w->session_id}});
                start_report(taken_work(std::move(w)), {}, std::move(refused));
                continue;
            }

            ++in_flight;
            auto slot = co_await acquire();
            if (!slot) {
                --in_flight;
                auto abandoned = outcome_for(*w, std::string(text::abandoned));
                abandoned.abandoned = true;
                options.log.info("work abandoned", {{"work", w->label}, {"session", w->session_id}});
                start_report(taken_work(std::move(w)), {}, std::move(abandoned));
                continue;
            }
            start_run(taken_work(std::move(w)), std::move(*slot));
        }
    }

    void start_run(taken_work w, toolkit::slot_pool::slot slot) {
        ++active;
        auto self = shared_from_this();
        asio::co_spawn(executor, run_work(std::move(w), std::move(slot)), [self](const std::exception_ptr& e) {
            if (e) self->options.log.error(fmt::format("serve: a run ended by an exception: {}", what_of(e)));
            self->finished_one();
        });
    }

    void start_report(taken_work w, toolkit::slot_pool::slot slot, outcome result) {
        ++active;
        auto self = shared_from_this();
        asio::co_spawn(executor, report(std::move(w), std::move(slot), std::move(result)),
                       [self](const std::exception_ptr& e) {
                           if (e) self->options.log.error(fmt::format("serve: a report failed: {}", what_of(e)));
                           self->finished_one();
                       });
    }

    asio::awaitable<outcome> run_agent(taken_work& tw) {
        auto& w = tw.get();
        if (cancelled) {
            // cancel() came between the slot and this coroutine's start: it never started.
            auto abandoned = outcome_for(w, std::string(text::abandoned));
            abandoned.abandoned = true;
            co_return abandoned;
        }
        std::string dir_error;
        const auto work_dir = prepare_work_dir(runtime->cfg.serve.work_dir, w.session_id, dir_error);
        if (!work_dir) {
            // Nothing started: run_context() stays uncalled, as for an abandoned work.
            auto failed = outcome_for(w, std::move(dir_error));
            failed.reason = "error";
            options.log.error(failed.error, {{"work", w.label}, {"session", w.session_id}});
            co_return failed;
        }

        run_hooks hooks;
        try {
            hooks = tw.run_context();
        } catch (const std::exception& e) {
            options.log.error(fmt::format("run_context for {} failed: {}", w.label, e.what()));
            auto crashed = outcome_for(w, std::string(agent::text::crashed));
            crashed.crashed = true;
            co_return crashed;
        }

        toolkit::prompter* asker = w.prompter != nullptr ? w.prompter : &toolkit::default_deny_prompter();
        std::optional<toolkit::bounded_prompter> bounded;
        if (w.prompt_wait) {
            bounded.emplace(*asker, std::chrono::duration_cast<std::chrono::steady_clock::duration>(*w.prompt_wait));
            asker = &*bounded;
        }

        agent::run_request request;
        request.mode = w.follow_up ? agent::session_mode::follow_up : agent::session_mode::open_or_create;
        request.session_id = w.session_id;
        request.prompt = w.prompt;
        request.effective = effective_limits(runtime->configured, w.limits);
        request.asker = asker;
        request.stop = hooks.stop;
        request.events = hooks.events;
        request.tool_work_dir = *work_dir;

        options.log.info("work started", {{"work", w.label}, {"session", w.session_id}});
        outcome result;
        agent::agent runner(executor, runtime);
        // Raced against cancel(): when it comes first the group cancels the run (the hard
        // stop) and still waits for the run's own result, the suspended terminal.
        auto group = asio::experimental::make_parallel_group(
            asio::co_spawn(executor, runner.run(std::move(request)), asio::deferred),
            cancelling.async_wait(asio::deferred));
        auto [order, run_error, got, cancel_error] =
            co_await group.async_wait(asio::experimental::wait_for_one(), asio::use_awaitable);
        (void)cancel_error;
        if (run_error) {
            // The agent turns its own failures into a crash result; this is the barrier for
            // anything that still escapes.
            options.log.error(fmt::format("the run for {} failed: {}", w.label, what_of(run_error)));
            result = outcome_for(w, std::string(agent::text::crashed));
            result.crashed = true;
        } else {
            result = to_outcome(got);
        }
        result.interrupted = order[0] == 1 && result.reason == "suspended";
        options.log.info("work ended", {{"work", w.label},
                                        {"session", w.session_id},
                                        {"reason", result.crashed ? std::string_view("crashed") : result.reason}});
        co_return result;
    }

    asio::awaitable<void> run_work(taken_work w, toolkit::slot_pool::slot slot) {
        auto self = shared_from_this();
        auto result = co_await run_agent(w);
        --in_flight;
        co_await report(std::move(w), std::move(slot), std::move(result));
    }

    // On no run's cancellation: a cancelled run still records what happened. Bounded by
    // report_timeout; on expiry done() is cancelled and left to finish on its own (it keeps
    // the work alive), so a stuck channel cannot hold a slot or run() for ever.
    asio::awaitable<void> report(taken_work w, toolkit::slot_pool::slot slot, outcome result) {
        auto self = shared_from_this();
        struct reporting {
            explicit reporting(const asio::any_io_executor& ex) : deadline(ex) {}
            asio::steady_timer deadline;
            asio::cancellation_signal signal;
            bool finished = false;
        };
        const std::string label = w.get().label;
        auto state = std::make_shared<reporting>(executor);
        auto owned = std::make_shared<taken_work>(std::move(w));
        auto call_done = [](std::shared_ptr<taken_work> tw, outcome o) -> asio::awaitable<void> {
            co_await tw->done(std::move(o));
        };
        auto log = options.log;
        asio::co_spawn(
            executor, call_done(owned, std::move(result)),
            asio::bind_cancellation_slot(state->signal.slot(), [state, log, label](const std::exception_ptr& e) {
                state->finished = true;
                state->deadline.cancel();
                if (e) log.warn(fmt::format("done for {} failed: {}", label, what_of(e)));
            }));
        if (options.report_timeout.count() > 0) {
            state->deadline.expires_after(options.report_timeout);
        } else {
            state->deadline.expires_at(asio::steady_timer::time_point::max());
        }
        while (!state->finished) {
            auto [ec] = co_await state->deadline.async_wait(asio::as_tuple(asio::use_awaitable));
            if (!ec && !state->finished) {
                log.warn(fmt::format("done for {} did not finish within {}", label,
                                     gocompat::format_duration(options.report_timeout)));
                state->signal.emit(asio::cancellation_type::terminal);
                break;
            }
        }
        slot = {};
        owned.reset();
    }

    asio::awaitable<void> run() {
        if (started) throw std::logic_error("serve::server::run() called twice");
        started = true;
        auto self = shared_from_this();
        // A server drained before it ran starts no service: each would only be stopped.
        const bool start_services = !drained;
        active = channels.size() + (start_services ? services.size() : 0);
        for (auto& entry : channels) {
            if (auto* watched = dynamic_cast<fault_watch*>(entry.ch.get())) {
                ++active;
                const std::string name(entry.ch->name());
                // The handler holds the channel: the coroutine runs on its object.
                asio::co_spawn(executor, watched->ended(), [self, ch = entry.ch, name](const std::exception_ptr& e) {
                    if (e) self->fail(fmt::format("channel \"{}\" failed: {}", name, what_of(e)));
                    self->finished_one();
                });
            }
        }
        if (start_services) {
            for (auto& svc : services) {
                asio::co_spawn(executor, svc->run(), [self, svc](const std::exception_ptr& e) {
                    if (e) self->fail(fmt::format("service \"{}\" failed: {}", svc->name(), what_of(e)));
                    self->finished_one();
                });
            }
        }
        for (auto& entry : channels) {
            asio::co_spawn(executor, pull(entry), [self](const std::exception_ptr& e) {
                if (e) self->fail(fmt::format("serve: a puller ended by an exception: {}", what_of(e)));
                self->finished_one();
            });
        }
        while (active > 0) {
            auto [ec] = co_await idle.async_wait(asio::as_tuple(asio::use_awaitable));
            if (ec && active > 0 &&
                (co_await asio::this_coro::cancellation_state).cancelled() != asio::cancellation_type::none) {
                // Cancelling the awaiting coroutine is the second stage.
                cancel();
                co_await asio::this_coro::reset_cancellation_state();
            }
        }
        drain();
        if (first_fault) throw fault(*first_fault);
    }
};

server::server(asio::any_io_executor executor, std::shared_ptr<const agent::runtime> runtime, server_options options)
    : impl_(std::make_shared<impl>(std::move(executor), std::move(runtime), std::move(options))) {}

server::~server() = default;

void server::add(std::shared_ptr<channel> ch, channel_options options) {
    if (impl_->started) throw std::logic_error("serve::server::add() after run()");
    impl_->channels.push_back({std::move(ch), options});
}

void server::add(std::shared_ptr<service> svc) {
    if (impl_->started) throw std::logic_error("serve::server::add() after run()");
    impl_->services.push_back(std::move(svc));
}

asio::awaitable<void> server::run() {
    auto self = impl_;
    co_await self->run();
}

void server::drain() { impl_->drain(); }

void server::cancel() { impl_->cancel(); }

std::size_t server::running() const noexcept { return impl_->in_flight; }

}  // namespace fiskai::serve
