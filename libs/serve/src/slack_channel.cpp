#include <fiskai/serve/a2a_rules.hpp>
#include <fiskai/serve/session_ids.hpp>
#include <fiskai/serve/slack_channel.hpp>
#include <fiskai/serve/slack_rules.hpp>

#include <fiskai/agent/agent.hpp>
#include <fiskai/config/config.hpp>
#include <fiskai/net/url.hpp>
#include <fiskai/net/http_client.hpp>
#include <fiskai/net/websocket.hpp>
#include <fiskai/runstate/store.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <deque>
#include <map>
#include <optional>
#include <random>
#include <set>

namespace fiskai::serve {

namespace asio = boost::asio;
namespace json = boost::json;
namespace rules = slack_rules;
using steady_clock = std::chrono::steady_clock;
using rules::human_message;

boost::system::result<slack_tokens, std::string> slack_tokens_from_environment(std::string_view app_token_env,
                                                                               std::string_view bot_token_env) {
    const std::string app_name(app_token_env), bot_name(bot_token_env);
    const char* bot = std::getenv(bot_name.c_str());
    if (bot == nullptr || *bot == '\0')
        return {boost::system::in_place_error,
                fmt::format("slack: environment variable {} is not set; export the bot token (xoxb-…)", bot_name)};
    const char* app = std::getenv(app_name.c_str());
    if (app == nullptr || *app == '\0')
        return {
            boost::system::in_place_error,
            fmt::format("slack: environment variable {} is not set; export the app-level token (xapp-…)", app_name)};
    return slack_tokens{app, bot};
}

boost::system::result<slack_channel_options, std::string> slack_channel_options_from(
    const config::slack_settings& settings, std::string identity, gocompat::logger log) {
    auto tokens = slack_tokens_from_environment(settings.app_token_env, settings.bot_token_env);
    if (!tokens) return {boost::system::in_place_error, tokens.error()};
    if (auto refused = net::check_url(settings.api_base_url, "expose.agent.slack.api_base_url", false))
        return {boost::system::in_place_error, *refused};
    slack_channel_options o;
    o.identity = std::move(identity);
    o.tokens = std::move(*tokens);
    o.api_base_url = settings.api_base_url;
    while (!o.api_base_url.empty() && o.api_base_url.back() == '/') o.api_base_url.pop_back();
    o.channels = settings.channels;
    o.approvers = settings.approvers;
    o.max_admitted = static_cast<std::size_t>(std::max(1, settings.max_admitted));
    // libs/config already warned about a timeout under 30 s; the window floors it again.
    o.question_timeout = settings.question_timeout;
    o.log = std::move(log);
    return o;
}

namespace {

steady_clock::duration to_steady(std::chrono::nanoseconds d) {
    return std::chrono::duration_cast<steady_clock::duration>(d);
}

// Wakes a waiting coroutine: a timer set to the far future, cancelled to wake.
asio::awaitable<void> wait_on(asio::steady_timer& t, steady_clock::time_point until) {
    t.expires_at(until);
    boost::system::error_code ec;
    co_await t.async_wait(asio::redirect_error(asio::use_awaitable, ec));
}

std::string form_encode(std::string_view s) {
    std::string out;
    for (const unsigned char c : s) {
        if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~')
            out += static_cast<char>(c);
        else
            out += fmt::format("%{:02X}", c);
    }
    return out;
}

std::string new_question_id() {
    static thread_local std::mt19937_64 rng{std::random_device{}()};
    return fmt::format("{:016x}{:016x}", rng(), rng());
}

}  // namespace

class slack_turn;

// A turn's status line, shared with the coroutine writing it: that writer may still be in a
// chat.update when the turn is destroyed (done() cancelled by the server's report timeout).
struct status_line {
    explicit status_line(const asio::any_io_executor& ex) : interval(ex) {}
    asio::steady_timer interval;  // between two edits; cancelled to end the wait
    std::string wanted, shown;
    bool busy = false;    // a writer is running
    bool closed = false;  // done() took over: the writer stops after its current edit
};

// One admitted turn, waiting for its thread and a slot.
struct queued_turn {
    human_message msg;
    std::string session_id;
    std::string status_ts;  // the status message, once posted
    bool resume = false;
    std::string resume_prompt;                                      // confirm/select answered late
    std::optional<std::pair<std::string, toolkit::approval>> held;  // approval answered late: call id, choice
    std::string held_call;  // that call id, kept after use until the turn reports (held_calls)
    bool ready = false;     // its status message was posted (or the post failed)
    std::string label;
};

struct open_question {
    std::string id, session_id, thread_key, call_id, kind, channel, message_ts;
    std::vector<std::string> options;
    json::value blocks;
    std::string question_text;
    a2a_rules::question_slot slot;
    asio::steady_timer* waiter = nullptr;
    // The delivered answer.
    rules::action_value value;
    std::string input_text;
};

struct slack_channel::impl : std::enable_shared_from_this<slack_channel::impl> {
    asio::any_io_executor executor;
    std::shared_ptr<runstate::store> sessions;
    slack_channel_options options;
    net::http_client http;
    rules::self_identity me;
    rules::seen_ids seen_envelopes, seen_events;

    std::optional<net::websocket> socket;
    std::size_t connections = 0;
    std::exception_ptr fault;
    bool socket_done = false;

    std::deque<std::shared_ptr<queued_turn>> queue;  // admitted, not handed out
    std::map<std::string, std::size_t> thread_load;  // session → turns admitted or running here
    std::set<std::string> running;                   // sessions with a turn handed out
    std::size_t handed_out = 0;                      // works handed out, not yet reported
    // Questions asked here, open or closed. A closed one is kept (closed_questions, oldest
    // first) so a second click on it is told "already decided" instead of becoming a turn.
    std::map<std::string, std::shared_ptr<open_question>> questions;
    std::deque<std::pair<steady_clock::time_point, std::string>> closed_questions;
    // (session, call id) of approvals answered late whose resume turn is admitted or running:
    // until that turn reports, the journal still shows the call pending, yet it is decided.
    std::set<std::pair<std::string, std::string>> held_calls;
    std::size_t intake_inflight = 0, posts_inflight = 0;
    std::map<std::string, std::deque<std::pair<std::string, json::object>>> lanes;  // post_detached, per target
    bool released = false, ended = false;
    asio::steady_timer wake;          // next() waits here
    asio::steady_timer ended_signal;  // ended() waits here: one waiter per timer
    // The watchdog's ping interval and the reconnect backoff: cancelled when the socket is
    // done, so nothing keeps the io_context running for up to 30 s after the channel closed.
    asio::steady_timer ping_timer, backoff_timer;

    impl(asio::any_io_executor ex, std::shared_ptr<runstate::store> s, slack_channel_options o)
        : executor(ex),
          sessions(std::move(s)),
          options(std::move(o)),
          http(ex),
          wake(ex, steady_clock::time_point::max()),
          ended_signal(ex, steady_clock::time_point::max()),
          ping_timer(ex),
          backoff_timer(ex) {}

    void notify() {
        wake.cancel();
        ended_signal.cancel();
    }

    // ---- Web API (§8.1, Amendment 18) ----
    asio::awaitable<boost::system::result<json::object, std::string>> call(std::string method, json::object args) {
        const bool app = method == "apps.connections.open";
        const bool write = method == "chat.postMessage" || method == "chat.update";
        net::http_request req;
        req.url = fmt::format("{}/{}", options.api_base_url, method);
        req.headers.emplace_back("Authorization",
                                 fmt::format("Bearer {}", app ? options.tokens.app_token : options.tokens.bot_token));
        if (write) {
            req.headers.emplace_back("Content-Type", "application/json; charset=utf-8");
            req.body = json::serialize(args);
        } else {
            req.headers.emplace_back("Content-Type", "application/x-www-form-urlencoded");
            for (const auto& [k, v] : args) {
                if (!req.body.empty()) req.body += '&';
                const std::string value = v.is_string() ? std::string(v.get_string()) : json::serialize(v);
                req.body += fmt::format("{}={}", form_encode(k), form_encode(value));
            }
        }
        for (int attempt = 0;; ++attempt) {
            const auto deadline = steady_clock::now() + to_steady(options.call_timeout);
            auto copy = req;
            auto res = co_await http.send(std::move(copy), deadline);
            if (!res) co_return fmt::format("slack {}: {}", method, res.error().message);
            if (res->status == 429 && attempt < 3) {
                int seconds = 1;
                if (auto h = res->header("Retry-After")) {
                    try {
                        seconds = std::clamp(std::stoi(std::string(*h)), 0, 60);
                    } catch (const std::exception&) {}
                }
                options.log.warn("slack: rate limited", {{"method", method}, {"retry_after", std::to_string(seconds)}});
                asio::steady_timer t(executor, std::chrono::seconds(seconds));
                boost::system::error_code ec;
                co_await t.async_wait(asio::redirect_error(asio::use_awaitable, ec));
                continue;
            }
            boost::system::error_code ec;
            auto body = json::parse(res->body, ec);
            if (ec || !body.is_object())
                co_return fmt::format("slack {}: HTTP {} with a body that is not a JSON object", method, res->status);
            auto& o = body.as_object();
            if (const auto* ok = o.if_contains("ok"); ok == nullptr || !ok->is_bool() || !ok->get_bool()) {
                const auto* err = o.if_contains("error");
                co_return fmt::format("slack {}: {}", method,
                                      err != nullptr && err->is_string() ? std::string(err->get_string())
                                                                         : fmt::format("HTTP {}", res->status));
            }
            co_return std::move(o);
        }
    }

    // Fire-and-forget posts are counted so release() can wait for them (§8.7 step 4), and
    // sent in order per target (an edit per message, a post per thread): the given-up edit
    // and the answered edit of one question, made a moment apart, land in the order they
    // were made, so the message ends showing the state that won.
    void post_detached(std::string method, json::object args) {
        ++posts_inflight;
        auto field = [&](std::string_view k) {
            const auto* v = args.if_contains(k);
            return v != nullptr && v->is_string() ? std::string(v->get_string()) : std::string();
        };
        auto key = fmt::format("{}/{}", field("channel"), method == "chat.update" ? field("ts") : field("thread_ts"));
        auto& lane = lanes[key];
        lane.emplace_back(std::move(method), std::move(args));
        // The lane's head stays queued while it is sent: a lane of one has no sender yet.
        if (lane.size() == 1) asio::co_spawn(executor, send_lane(shared_from_this(), std::move(key)), asio::detached);
    }

    static asio::awaitable<void> send_lane(std::shared_ptr<impl> self, std::string key) {
        for (;;) {
            auto head = self->lanes.at(key).front();
            auto r = co_await self->call(head.first, std::move(head.second));
            if (!r) self->options.log.warn("slack: a post failed", {{"error", r.error()}});
            --self->posts_inflight;
            self->notify();
            auto& lane = self->lanes.at(key);
            lane.pop_front();
            if (lane.empty()) {
                self->lanes.erase(key);
                co_return;
            }
        }
    }

    // ---- Socket Mode ----
    asio::awaitable<void> connect_once() {
        auto opened = co_await call("apps.connections.open", {});
        if (!opened) throw slack_error(opened.error());
        const auto* url = opened->if_contains("url");
        if (url == nullptr || !url->is_string()) throw slack_error("slack apps.connections.open: no url in the answer");
        net::websocket_options wo;
        wo.ca_file = options.ca_file;
        const auto deadline = steady_clock::now() + to_steady(options.hello_timeout);
        auto ws = co_await net::websocket::connect(std::string(url->get_string()), deadline, wo);
        if (!ws) throw slack_error(fmt::format("slack: Socket Mode: {}", ws.error().message));
        auto hello = co_await ws->read(deadline);
        if (!hello) throw slack_error(fmt::format("slack: Socket Mode: no hello: {}", hello.error().message));
        auto f = rules::parse_frame(hello->data);
        if (!f || f->what != rules::frame::kind::hello)
            throw slack_error(fmt::format("slack: Socket Mode: expected hello, got {}", hello->data.substr(0, 200)));
        socket.emplace(std::move(*ws));
        ++connections;
    }

    asio::awaitable<void> start() {
        auto who = co_await call("auth.test", {});
        if (!who) throw slack_error(who.error());
        auto field = [&](std::string_view k) {
            const auto* v = who->if_contains(k);
            return v != nullptr && v->is_string() ? std::string(v->get_string()) : std::string();
        };
        me = {field("user_id"), field("bot_id"), field("team_id")};
        co_await connect_once();
        auto self = shared_from_this();
        asio::co_spawn(executor, socket_loop(self), asio::detached);
        asio::co_spawn(executor, watchdog(self), asio::detached);
    }

    // A socket that answers no ping within ping_interval + pong_timeout is dead: close it,
    // and the reader reconnects.
    static asio::awaitable<void> watchdog(std::shared_ptr<impl> self) {
        auto& t = self->ping_timer;
        while (!self->socket_done) {
            t.expires_after(to_steady(self->options.ping_interval));
            boost::system::error_code ec;
            co_await t.async_wait(asio::redirect_error(asio::use_awaitable, ec));
            if (self->socket_done || !self->socket || !self->socket->is_open()) continue;
            const auto silent = steady_clock::now() - self->socket->last_received();
            if (silent > to_steady(self->options.ping_interval + self->options.pong_timeout)) {
                self->options.log.warn("slack: the socket answered no ping; reconnecting");
                self->socket->abort();
                continue;
            }
            auto* ws = &*self->socket;
            const auto deadline = steady_clock::now() + to_steady(self->options.pong_timeout);
            auto sent = co_await ws->ping("fiskai", deadline);
            if (!sent) self->options.log.debug("slack: ping failed", {{"error", sent.error().message}});
        }
    }

    static asio::awaitable<void> socket_loop(std::shared_ptr<impl> self) {
        int failures = 0;
        auto backoff = to_steady(self->options.reconnect_backoff);
        while (!self->socket_done) {
            if (!self->socket || !self->socket->is_open()) {
                std::optional<std::string> failed;
                try {
                    co_await self->connect_once();
                    failures = 0;
                    backoff = to_steady(self->options.reconnect_backoff);
                } catch (const slack_error& e) {
                    failed = e.what();
                }
                if (failed) {
                    if (self->socket_done) break;
                    if (++failures >= 10) {
                        self->set_fault(fmt::format("{} (10 reconnects failed)", *failed));
                        co_return;
                    }
                    self->options.log.warn("slack: reconnect failed", {{"error", *failed}});
                    auto& t = self->backoff_timer;
                    t.expires_after(backoff);
                    boost::system::error_code ec;
                    co_await t.async_wait(asio::redirect_error(asio::use_awaitable, ec));
                    backoff = std::min(backoff * 2, to_steady(self->options.reconnect_backoff_max));
                    continue;
                }
            }
            auto* ws = &*self->socket;
            auto msg = co_await ws->read(steady_clock::time_point::max());
            if (self->socket_done) break;
            if (!msg) {
                self->options.log.info("slack: socket lost; reconnecting", {{"error", msg.error().message}});
                self->socket.reset();
                continue;
            }
            auto f = rules::parse_frame(msg->data);
            if (!f) continue;
            if (f->what == rules::frame::kind::disconnect) {
                if (rules::fatal_disconnect(f->reason)) {
                    self->set_fault(fmt::format("slack: Socket Mode disconnected: {}", f->reason));
                    co_return;
                }
                self->options.log.info("slack: disconnect; reconnecting", {{"reason", f->reason}});
                self->socket->abort();
                self->socket.reset();
                continue;
            }
            if (f->what != rules::frame::kind::envelope) continue;
            // Ack at once, before any admission (§8.1).
            auto ack = rules::ack_text(f->envelope_id);
            const auto deadline = steady_clock::now() + std::chrono::seconds(2);
            auto acked = co_await ws->send_text(std::move(ack), deadline);
            if (!acked) self->options.log.warn("slack: ack failed", {{"error", acked.error().message}});
            const auto now = steady_clock::now();
            if (!self->seen_envelopes.first_time(f->envelope_id, now)) continue;
            if (f->type == "events_api") {
                const auto* id = f->payload.if_contains("event_id");
                if (id != nullptr && id->is_string() &&
                    !self->seen_events.first_time(std::string(id->get_string()), now))
                    continue;
                asio::co_spawn(self->executor, on_event(self, std::move(f->payload)), asio::detached);
            } else if (f->type == "interactive") {
                asio::co_spawn(self->executor, on_click(self, std::move(f->payload)), asio::detached);
            }
        }
        if (self->socket) {
            auto* ws = &*self->socket;
            const auto deadline = steady_clock::now() + std::chrono::seconds(2);
            co_await ws->close(deadline);
        }
    }

    void set_fault(std::string what) {
        options.log.error("slack: channel failed", {{"error", what}});
        fault = std::make_exception_ptr(slack_error(std::move(what)));
        finish_socket();
        notify();
    }

    void close_socket_if_done() {
        if (ended && handed_out == 0 && !socket_done) finish_socket();
    }

    void finish_socket() {
        socket_done = true;
        if (socket) socket->abort();
        ping_timer.cancel();
        backoff_timer.cancel();
        // Every post has landed by now; an idle keep-alive connection's sweeper would
        // otherwise keep the io_context (and the process) alive for its idle timeout.
        http.close_idle();
    }

    // ---- Intake (§8.2) ----
    static asio::awaitable<void> on_event(std::shared_ptr<impl> self, json::object payload) {
        std::string why;
        auto m = rules::classify_event(payload, self->me, self->options.channels, why);
        if (!m) {
            self->options.log.debug("slack: ignoring an event", {{"why", why}});
            co_return;
        }
        ++self->intake_inflight;
        co_await self->intake(std::move(*m));
        --self->intake_inflight;
        self->notify();
    }

    void reply_in_thread(const human_message& m, std::string_view text) {
        post_detached("chat.postMessage",
                      json::object{{"channel", m.channel}, {"thread_ts", m.thread_ts}, {"text", text}});
    }

    asio::awaitable<void> intake(human_message m) {
        const auto session = slack_session_id(options.identity, m.team, m.channel, m.thread_ts);
        if (m.what == human_message::kind::thread_reply) {
            // The answer to an open input question of this thread.
            for (auto& [id, q] : questions) {
                if (q->session_id == session && q->kind == "input" &&
                    q->slot.current() == a2a_rules::question_slot::state::open) {
                    if (q->slot.resolve(a2a_rules::question_slot::verdict::answer) ==
                        a2a_rules::question_slot::effect::delivered) {
                        q->input_text = m.prompt;
                        if (q->waiter != nullptr) q->waiter->cancel();
                    }
                    co_return;
                }
            }
            // Amendment 14: a turn when a turn of the thread is here, or the store holds it.
            bool ours = thread_load.contains(session);
            if (!ours && sessions) {
                auto found = co_await sessions->exists(session);
                ours = found && *found;
            }
            if (!ours) co_return;
        }
        if (released) {
            reply_in_thread(m, rules::text::restarting);
            co_return;
        }
        if (queue.size() >= options.max_admitted) {
            reply_in_thread(m, rules::busy_text(queue.size()));
            co_return;
        }
        auto t = std::make_shared<queued_turn>();
        t->msg = std::move(m);
        t->session_id = session;
        t->label = fmt::format("slack message {} in {} from {}", t->msg.ts, t->msg.channel, t->msg.user);
        co_await admit(t);
    }

    // Queued in its thread's order at once, handed out only once its status message exists:
    // a turn that ran before the post returned had no status to edit, and its "Queued" landed
    // after its answer and stayed.
    asio::awaitable<void> admit(std::shared_ptr<queued_turn> t) {
        ++thread_load[t->session_id];
        queue.push_back(t);
        auto args =
            json::object{{"channel", t->msg.channel}, {"thread_ts", t->msg.thread_ts}, {"text", rules::text::queued}};
        auto posted = co_await call("chat.postMessage", std::move(args));
        if (!posted) {
            options.log.warn("slack: could not post the status", {{"error", posted.error()}});
        } else if (const auto* ts = posted->if_contains("ts"); ts != nullptr && ts->is_string()) {
            t->status_ts = std::string(ts->get_string());
        }
        t->ready = true;
        notify();
    }

    // ---- Clicks (§8.4) ----
    static asio::awaitable<void> on_click(std::shared_ptr<impl> self, json::object payload) {
        std::string why;
        auto c = rules::parse_click(payload, why);
        if (!c) {
            self->options.log.debug("slack: ignoring an interaction", {{"why", why}});
            co_return;
        }
        ++self->intake_inflight;
        co_await self->click_arrived(std::move(*c));
        --self->intake_inflight;
        self->notify();
    }

    void edit(const std::string& channel, const std::string& ts, std::string text, json::value blocks) {
        json::object args{{"channel", channel}, {"ts", ts}, {"text", std::move(text)}};
        if (!blocks.is_null()) args["blocks"] = std::move(blocks);
        post_detached("chat.update", std::move(args));
    }

    asio::awaitable<void> click_arrived(rules::click c) {
        const auto& v = c.value;
        if (v.kind == "approval" && !options.approvers.empty() &&
            std::find(options.approvers.begin(), options.approvers.end(), c.user) == options.approvers.end()) {
            options.log.warn(
                fmt::format("slack: ignoring approval click by {}: not in expose.agent.slack.approvers", c.user));
            co_return;
        }
        auto it = questions.find(v.question_id);
        std::shared_ptr<open_question> q = it == questions.end() ? nullptr : it->second;
        if (q && q->slot.current() == a2a_rules::question_slot::state::open) {
            // The one transition: delivered here, or given up by the window, never both.
            if (q->slot.resolve(a2a_rules::question_slot::verdict::answer) ==
                a2a_rules::question_slot::effect::delivered) {
                q->value = v;
                if (q->waiter != nullptr) q->waiter->cancel();
                const auto label = rules::choice_label(v, q->options);
                auto m = rules::answered_message(q->question_text, label, c.user);
                edit(c.channel, c.message_ts, m.text, m.blocks);
            }
            co_return;
        }
        if (released) {
            // Controls kept (§8.7): the person clicks again once the worker is back.
            const auto& shown = c.message_blocks.is_array() || !q ? c.message_blocks : q->blocks;
            edit(c.channel, c.message_ts, std::string(rules::text::restarting_click),
                 rules::noted_blocks(shown, rules::text::restarting_click));
            co_return;
        }
        if (q && q->slot.resolve(a2a_rules::question_slot::verdict::answer) != a2a_rules::question_slot::effect::late) {
            // Amendment 14: the decision was taken (delivered, or a first late click resumed
            // the conversation); the message only says so.
            already_decided(c);
            co_return;
        }
        // A late click (given up, or unknown after a restart). The session comes from where
        // the click happened, never from the value.
        const auto session = slack_session_id(options.identity, c.team, c.channel, c.thread_ts);
        if (v.kind == "approval") {
            co_await late_approval(std::move(c), session);
            co_return;
        }
        bool exists = false;
        if (sessions) {
            auto found = co_await sessions->exists(session);
            exists = found && *found;
        }
        if (!exists) {
            ignore_foreign_click(session);
            co_return;
        }
        auto t = resume_turn(c, session);
        t->resume_prompt = rules::resume_prompt(c.question_text, c.choice_text);
        auto m = rules::answered_message(c.question_text, c.choice_text, c.user);
        edit(c.channel, c.message_ts, m.text, m.blocks);
        co_await admit(t);
    }

    // The turn a click days later becomes (§8.4): the clicked thread's session, resumed.
    static std::shared_ptr<queued_turn> resume_turn(const rules::click& c, const std::string& session) {
        auto t = std::make_shared<queued_turn>();
        t->msg.team = c.team;
        t->msg.channel = c.channel;
        t->msg.thread_ts = c.thread_ts;
        t->msg.user = c.user;
        t->msg.ts = c.message_ts;
        t->session_id = session;
        t->resume = true;
        t->label = fmt::format("slack click on {} in {} by {}", c.message_ts, c.channel, c.user);
        return t;
    }

    void already_decided(const rules::click& c) {
        auto m = rules::answered_message(c.question_text, rules::text::already_decided, c.user);
        edit(c.channel, c.message_ts, m.text, m.blocks);
    }

    void ignore_foreign_click(const std::string& session) {
        options.log.warn("slack: ignoring a click for a conversation this worker does not hold",
                         {{"session", session}});
    }

    // A late approval click: a resume turn only while the journal still holds the gated call
    // awaiting a decision (§8.4); a call already decided only gets its message edited
    // (Amendment 14). Pending-ness is the journal's answer, so it survives a restart.
    asio::awaitable<void> late_approval(rules::click c, std::string session) {
        const auto& v = c.value;
        const auto choice = rules::approval_choice(v.choice);
        if (!choice) co_return;
        // The call was re-dispatched by a turn running now and asked again: the click answers that.
        for (auto& [id, open] : questions) {
            if (open->session_id != session || open->kind != "approval" || open->call_id != v.call_id ||
                open->slot.current() != a2a_rules::question_slot::state::open)
                continue;
            if (open->slot.resolve(a2a_rules::question_slot::verdict::answer) !=
                a2a_rules::question_slot::effect::delivered)
                continue;
            open->value = v;
            if (open->waiter != nullptr) open->waiter->cancel();
            auto m = rules::answered_message(open->question_text, c.choice_text, c.user);
            edit(open->channel, open->message_ts, m.text, m.blocks);
            auto clicked = rules::answered_message(c.question_text, c.choice_text, c.user);
            edit(c.channel, c.message_ts, clicked.text, clicked.blocks);
            co_return;
        }
        const auto key = std::make_pair(session, v.call_id);
        if (held_calls.contains(key)) {
            already_decided(c);
            co_return;
        }
        if (!sessions) {
            ignore_foreign_click(session);
            co_return;
        }
        auto loaded = co_await sessions->load(session);
        if (!loaded) {
            if (loaded.error().code == runstate::errc::not_found)
                ignore_foreign_click(session);
            else
                options.log.warn("slack: could not read the session for a late click",
                                 {{"session", session}, {"error", loaded.error().message}});
            co_return;
        }
        // Another click for the same call may have been admitted while the journal was read.
        if (!rules::awaiting_decision(*loaded, v.call_id) || held_calls.contains(key)) {
            already_decided(c);
            co_return;
        }
        held_calls.insert(key);
        auto t = resume_turn(c, session);
        t->held.emplace(v.call_id, *choice);
        t->held_call = v.call_id;
        auto m = rules::answered_message(c.question_text, c.choice_text, c.user);
        edit(c.channel, c.message_ts, m.text, m.blocks);
        co_await admit(t);
    }

    // §8.7 steps 2-4, started by release() whether or not a puller is in next(): with every
    // slot busy the server calls next() no more, and queued turns must still be told.
    static asio::awaitable<void> drain(std::shared_ptr<impl> self) {
        asio::steady_timer poll(self->executor);
        while (self->intake_inflight > 0) co_await wait_on(poll, steady_clock::now() + std::chrono::milliseconds(20));
        for (auto& t : self->queue) {
            if (!t->status_ts.empty())
                self->edit(t->msg.channel, t->status_ts, std::string(rules::text::not_started), nullptr);
            else
                self->reply_in_thread(t->msg, rules::text::not_started);
            self->forget(*t);
        }
        self->queue.clear();
        while (self->posts_inflight > 0) co_await wait_on(poll, steady_clock::now() + std::chrono::milliseconds(20));
        self->ended = true;
        self->notify();
        self->close_socket_if_done();
    }

    // The asking call has returned: an input question is forgotten (nothing to click), any
    // other is kept for later clicks, within closed_questions_kept and closed_question_ttl.
    void question_closed(const open_question& q) {
        if (q.kind == "input") {
            questions.erase(q.id);
            return;
        }
        closed_questions.emplace_back(steady_clock::now(), q.id);
        prune_questions();
    }

    // A click on a pruned question is handled as one after a restart (§8.4): a late click.
    void prune_questions() {
        const auto now = steady_clock::now();
        while (!closed_questions.empty() && (closed_questions.size() > options.closed_questions_kept ||
                                             now - closed_questions.front().first >= options.closed_question_ttl)) {
            questions.erase(closed_questions.front().second);
            closed_questions.pop_front();
        }
    }

    // A turn handed out has reported (done() returned, failed or was cancelled): its thread
    // may hand out its next turn, and the socket may close if it was the last.
    void turn_reported(const queued_turn& t) {
        running.erase(t.session_id);
        forget(t);
        --handed_out;
        notify();
        close_socket_if_done();
    }

    // A turn that leaves (reported, or never started): its thread's load and held call.
    void forget(const queued_turn& t) {
        if (auto it = thread_load.find(t.session_id); it != thread_load.end() && --it->second == 0)
            thread_load.erase(it);
        if (!t.held_call.empty()) held_calls.erase({t.session_id, t.held_call});
    }

    asio::awaitable<std::unique_ptr<work>> next();
};

// One turn handed out: the work, its prompter and its event sink.
class slack_turn final : public work, public agent::event_sink, public toolkit::prompter {
public:
    slack_turn(std::shared_ptr<slack_channel::impl> ch, std::shared_ptr<queued_turn> t)
        : channel_(std::move(ch)), turn_(std::move(t)), status_(std::make_shared<status_line>(channel_->executor)) {
        session_id = turn_->session_id;
        label = turn_->label;
        from.name = turn_->msg.user;
        work::prompter = static_cast<toolkit::prompter*>(this);
    }

    run_hooks run_context() override {
        set_status(std::string(rules::text::working));
        return run_hooks{this, nullptr};
    }

    // The turn leaves the channel's books however post_outcome() ends: the server's report timeout
    // cancels it, and the next co_await then throws.
    asio::awaitable<void> done(outcome o) override {
        std::exception_ptr failed;
        try {
            co_await post_outcome(std::move(o));
        } catch (...) {
            failed = std::current_exception();
        }
        channel_->turn_reported(*turn_);
        if (failed) std::rethrow_exception(failed);
    }

    // ---- event_sink (§8.3) ----
    void status(std::int64_t iteration, std::string_view phase, const llm::usage&) override {
        if (phase == "calling-llm") set_status(fmt::format(":gear: Calling the model (step {})", iteration));
    }
    void tool_call(const agent::tool_call_trace& trace) override {
        set_status(fmt::format(":gear: Running `{}`", rules::escape(a2a_rules::sanitize(trace.display, 200))));
    }

    // ---- prompter (§8.4) ----
    [[nodiscard]] bool can_prompt() const override { return true; }

    asio::awaitable<toolkit::approval_reply> approve(toolkit::approval_request request) override {
        toolkit::approval_reply r;
        if (turn_->held && turn_->held->first == request.call_id) {
            r.status = toolkit::reply_status::answered;
            r.choice = turn_->held->second;
            turn_->held.reset();
            co_return r;
        }
        const auto id = new_question_id();
        auto m = rules::approval_message(request, id);
        auto q = std::make_shared<open_question>();
        q->kind = "approval";
        q->call_id = request.call_id;
        auto st = co_await ask_and_wait(id, std::move(m), q);
        r.question_id = id;
        r.status = st;
        if (st == toolkit::reply_status::answered)
            r.choice = rules::approval_choice(q->value.choice).value_or(toolkit::approval::deny);
        co_return r;
    }

    asio::awaitable<toolkit::question_reply> ask(toolkit::question question) override {
        toolkit::question_reply r;
        const auto id = new_question_id();
        auto m = rules::tool_question_message(question, id);
        auto q = std::make_shared<open_question>();
        q->kind = question.what == toolkit::question::kind::confirm  ? "confirm"
                  : question.what == toolkit::question::kind::select ? "select"
                                                                     : "input";
        q->call_id = question.call_id;
        q->options = question.options;
        auto st = co_await ask_and_wait(id, std::move(m), q);
        r.question_id = id;
        r.status = st;
        if (st == toolkit::reply_status::answered) {
            if (q->kind == "confirm") r.confirmed = q->value.choice == "yes";
            if (q->kind == "select") {
                try {
                    r.selected = std::stoi(q->value.choice);
                } catch (const std::exception&) {
                    r.status = toolkit::reply_status::declined;
                }
            }
            if (q->kind == "input") r.value = q->input_text;
        }
        co_return r;
    }

private:
    // The answer and the final status.
    asio::awaitable<void> post_outcome(outcome o) {
        auto ch = channel_;
        // The status writer finishes first so the final status is the last edit.
        status_->closed = true;
        status_->interval.cancel();
        while (status_->busy) {
            asio::steady_timer t(ch->executor, std::chrono::milliseconds(10));
            boost::system::error_code ec;
            co_await t.async_wait(asio::redirect_error(asio::use_awaitable, ec));
        }
        if (!o.text.empty()) {
            for (auto& part : rules::split_answer(rules::to_mrkdwn(o.text))) {
                json::object args{{"channel", turn_->msg.channel}, {"thread_ts", turn_->msg.thread_ts}, {"text", part}};
                auto r = co_await ch->call("chat.postMessage", std::move(args));
                if (!r) ch->options.log.warn("slack: could not post the answer", {{"error", r.error()}});
            }
        }
        if (!turn_->status_ts.empty()) {
            // A gate that gave up on its question suspends the run: the question is still answerable.
            auto status =
                gave_up_ && o.reason == "suspended" ? std::string(rules::text::waiting) : rules::status_for(o);
            json::object args{{"channel", turn_->msg.channel}, {"ts", turn_->status_ts}, {"text", std::move(status)}};
            auto r = co_await ch->call("chat.update", std::move(args));
            if (!r) ch->options.log.warn("slack: could not edit the status", {{"error", r.error()}});
        }
    }

    asio::awaitable<toolkit::reply_status> ask_and_wait(std::string id, rules::question_message m,
                                                        std::shared_ptr<open_question> q) {
        auto ch = channel_;
        q->id = id;
        q->session_id = turn_->session_id;
        q->channel = turn_->msg.channel;
        q->blocks = m.blocks;
        q->question_text = m.text;
        json::object args{{"channel", turn_->msg.channel},
                          {"thread_ts", turn_->msg.thread_ts},
                          {"text", m.text},
                          {"blocks", m.blocks}};
        auto posted = co_await ch->call("chat.postMessage", std::move(args));
        if (!posted) {
            ch->options.log.warn("slack: could not post a question", {{"error", posted.error()}});
            co_return toolkit::reply_status::unavailable;
        }
        q->message_ts = std::string(posted->at("ts").as_string());
        ch->prune_questions();
        ch->questions[id] = q;
        set_status(std::string(rules::text::waiting));
        asio::steady_timer waiter(ch->executor);
        q->waiter = &waiter;
        const auto deadline =
            steady_clock::now() +
            to_steady(a2a_rules::question_window(ch->options.question_timeout, ch->options.question_timeout_floor));
        toolkit::reply_status result = toolkit::reply_status::silent;
        for (;;) {
            const auto state = q->slot.current();
            if (state == a2a_rules::question_slot::state::delivered) {
                result = toolkit::reply_status::answered;
                break;
            }
            if (state == a2a_rules::question_slot::state::given_up) break;
            if (steady_clock::now() >= deadline) {
                if (q->slot.resolve(a2a_rules::question_slot::verdict::give_up) ==
                    a2a_rules::question_slot::effect::given_up) {
                    gave_up_ = true;
                    ch->edit(q->channel, q->message_ts, q->question_text, rules::given_up_blocks(q->blocks));
                }
                continue;
            }
            co_await wait_on(waiter, deadline);
            auto cs = co_await asio::this_coro::cancellation_state;
            if (cs.cancelled() != asio::cancellation_type::none) {
                if (q->slot.resolve(a2a_rules::question_slot::verdict::give_up) ==
                    a2a_rules::question_slot::effect::given_up) {
                    ch->edit(q->channel, q->message_ts, q->question_text, rules::given_up_blocks(q->blocks));
                    q->waiter = nullptr;
                    ch->question_closed(*q);
                    co_return toolkit::reply_status::cancelled;
                }
            }
        }
        q->waiter = nullptr;
        ch->question_closed(*q);
        set_status(std::string(rules::text::working));
        co_return result;
    }

    // Latest wins, at most one chat.update per status_interval (§8.3).
    void set_status(std::string text) {
        if (status_->closed || turn_->status_ts.empty()) return;
        status_->wanted = std::move(text);
        if (status_->busy) return;
        status_->busy = true;
        asio::co_spawn(channel_->executor, status_writer(channel_, turn_, status_), asio::detached);
    }

    // Owns what it touches: the turn may be gone when an edit returns.
    static asio::awaitable<void> status_writer(std::shared_ptr<slack_channel::impl> ch, std::shared_ptr<queued_turn> t,
                                               std::shared_ptr<status_line> line) {
        while (!line->closed && line->wanted != line->shown) {
            auto text = line->wanted;
            json::object args{{"channel", t->msg.channel}, {"ts", t->status_ts}, {"text", text}};
            auto r = co_await ch->call("chat.update", std::move(args));
            if (!r) ch->options.log.warn("slack: could not edit the status", {{"error", r.error()}});
            line->shown = text;
            if (line->closed) break;
            co_await wait_on(line->interval, steady_clock::now() + to_steady(ch->options.status_interval));
        }
        line->busy = false;
    }

    std::shared_ptr<slack_channel::impl> channel_;
    std::shared_ptr<queued_turn> turn_;
    std::shared_ptr<status_line> status_;
    bool gave_up_ = false;
};

asio::awaitable<std::unique_ptr<work>> slack_channel::impl::next() {
    auto self = shared_from_this();
    for (;;) {
        if (fault) std::rethrow_exception(fault);
        if (released) {
            // release() drains (§8.7 steps 2-4); next() ends once that is done (step 5).
            while (!ended) co_await wait_on(wake, steady_clock::time_point::max());
            co_return nullptr;
        }
        // The first ready turn of an idle thread; a turn never overtakes an earlier one of its thread.
        std::set<std::string> passed;
        auto it = std::find_if(queue.begin(), queue.end(), [&](const auto& t) {
            if (running.contains(t->session_id) || !passed.insert(t->session_id).second) return false;
            return t->ready;
        });
        if (it == queue.end()) {
            co_await wait_on(wake, steady_clock::time_point::max());
            continue;
        }
        auto t = *it;
        queue.erase(it);
        running.insert(t->session_id);
        // Counted from here: the drain must not close the socket under a work being handed out.
        ++handed_out;
        // Follow-up is the store's answer, never a map: a map is wrong after a restart.
        bool exists = false;
        if (sessions) {
            auto found = co_await sessions->exists(t->session_id);
            if (!found) options.log.warn("slack: could not read the session store", {{"error", found.error().message}});
            exists = found && *found;
        }
        auto w = std::make_unique<slack_turn>(self, t);
        w->follow_up = exists;
        if (t->resume) {
            w->prompt = t->resume_prompt;
        } else {
            w->prompt = t->msg.prompt;
            if (!exists && t->msg.in_thread) {
                json::object args{{"channel", t->msg.channel}, {"ts", t->msg.thread_ts}, {"limit", "50"}};
                auto replies = co_await call("conversations.replies", std::move(args));
                if (replies) {
                    const auto* messages = replies->if_contains("messages");
                    w->prompt = rules::compose_prompt(
                        t->msg.prompt,
                        rules::thread_context(messages ? *messages : json::value(nullptr), t->msg.ts, me));
                } else {
                    options.log.warn("slack: could not read the thread", {{"error", replies.error()}});
                }
            }
        }
        co_return w;
    }
}

slack_channel::slack_channel(asio::any_io_executor executor, std::shared_ptr<runstate::store> sessions,
                             slack_channel_options options)
    : impl_(std::make_shared<impl>(std::move(executor), std::move(sessions), std::move(options))) {}

slack_channel::~slack_channel() { impl_->finish_socket(); }

asio::awaitable<void> slack_channel::start() { co_await impl_->start(); }

asio::awaitable<std::unique_ptr<work>> slack_channel::next() { co_return co_await impl_->next(); }

asio::awaitable<void> slack_channel::ended() {
    auto self = impl_;
    while (!self->fault && !self->ended) co_await wait_on(self->ended_signal, steady_clock::time_point::max());
    if (self->fault) std::rethrow_exception(self->fault);
}

void slack_channel::release() {
    if (impl_->released) return;
    impl_->released = true;
    asio::co_spawn(impl_->executor, impl::drain(impl_), asio::detached);
    impl_->notify();
}

std::string slack_channel::description() const {
    return fmt::format("slack: Socket Mode as <@{}> on team {}, {}", impl_->me.bot_user, impl_->me.team,
                       impl_->options.channels.empty() ? std::string("any channel")
                                                       : fmt::format("{} channels", impl_->options.channels.size()));
}

std::size_t slack_channel::admitted() const noexcept { return impl_->queue.size(); }
std::size_t slack_channel::open_questions() const noexcept {
    return static_cast<std::size_t>(std::count_if(impl_->questions.begin(), impl_->questions.end(), [](const auto& kv) {
        return kv.second->slot.current() == a2a_rules::question_slot::state::open;
    }));
}
std::size_t slack_channel::known_questions() const noexcept { return impl_->questions.size(); }
std::size_t slack_channel::connections() const noexcept { return impl_->connections; }
bool slack_channel::socket_open() const noexcept { return impl_->socket && impl_->socket->is_open(); }

}  // namespace fiskai::serve
