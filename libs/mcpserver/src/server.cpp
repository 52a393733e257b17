// The MCP dispatcher: sessions, methods, and the tools/call pipeline with its gate.

#include "server_impl.hpp"

#include <fiskai/gocompat/name.hpp>
#include <fiskai/gocompat/quote.hpp>
#include <fiskai/toolkit/prompter.hpp>
#include <fiskai/toolkit/schema_validator.hpp>
#include <fiskai/toolkit/tool_call.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json/array.hpp>
#include <boost/json/serialize.hpp>

#include <fmt/format.h>
#include <openssl/rand.h>

#include <cmath>
#include <stdexcept>

namespace fiskai::mcpserver {
namespace {

namespace json = boost::json;
namespace asio = boost::asio;
using namespace asio::experimental::awaitable_operators;
constexpr auto tuple_awaitable = asio::as_tuple(asio::use_awaitable);

std::string random_session_id() {
    unsigned char bytes[16];
    if (RAND_bytes(bytes, sizeof bytes) != 1) throw std::runtime_error("no cryptographic randomness for a session id");
    static constexpr char hex[] = "0123456789abcdef";
    std::string id;
    for (unsigned char b : bytes) {
        id += hex[b >> 4];
        id += hex[b & 0xF];
    }
    return id;
}

bool valid_mcp_tool_name(const std::string& name) { return gocompat::is_valid_name(name) && name.size() <= 128; }

}  // namespace

std::string id_key(const json::value& id) { return json::serialize(id); }

std::string describe_duration(std::chrono::steady_clock::duration d) {
    using namespace std::chrono;
    const auto ms = duration_cast<milliseconds>(d).count();
    if (ms % 60000 == 0) return fmt::format("{}m", ms / 60000);
    if (ms % 1000 == 0) return fmt::format("{}s", ms / 1000);
    return fmt::format("{}ms", ms);
}

void outbound_stream::push(const json::object& message) {
    if (dead || finished) return;
    append(json::serialize(message));
    sent_anything = true;
    if (!writer_attached && over_bounds()) abandon();
    wake.cancel();
}

void outbound_stream::finish(std::optional<json::object> final_message) {
    if (finished) return;
    if (final_message && !dead) append(json::serialize(*final_message));
    if (!writer_attached && over_bounds()) abandon();
    finished = true;
    wake.cancel();
}

std::shared_ptr<outbound_stream> session::new_stream(asio::any_io_executor ex,
                                                     std::shared_ptr<retention_budget> budget) {
    auto st = std::make_shared<outbound_stream>(ex, std::to_string(next_stream++), std::move(budget));
    // Bounded: a session keeps at most 64 resumable streams, dropping the oldest.
    while (resumable.size() >= 64) resumable.erase(resumable.begin());
    resumable.emplace(st->stream_id, st);
    return st;
}

void check_builtin_collisions(const toolkit::tool_list& commands, const toolkit::tool_list& builtins) {
    for (const auto& b : builtins) {
        for (const auto& c : commands) {
            if (c->name() == b->name()) {
                throw std::runtime_error(fmt::format(
                    "cannot expose built-in {} over MCP: a wrapped command already exposes a tool with that name; "
                    "exclude or rename it",
                    gocompat::quote(b->name())));
            }
        }
    }
}

server::impl::impl(asio::any_io_executor ex, server_options o)
    : executor(ex), options(std::move(o)), slots(ex, options.max_concurrent_calls) {}

void server::impl::register_tools(const toolkit::tool_list& commands, const toolkit::tool_list& builtins) {
    auto add = [&](const toolkit::tool_ptr& t, std::string_view kind) {
        const auto quoted = gocompat::quote(t->name());
        if (!t->exposed().on(toolkit::surface::mcp)) {
            report.warnings.push_back(fmt::format("skipping {} {}: it does not declare MCP exposure", kind, quoted));
            return;
        }
        if (t->confirm().posture == toolkit::confirm_posture::unknown) {
            // Serving it ungated would make an absent gate look like not needing one.
            report.warnings.push_back(
                fmt::format("skipping {} {}: it cannot report whether it needs approval", kind, quoted));
            return;
        }
        if (!valid_mcp_tool_name(t->name())) {
            report.warnings.push_back(fmt::format("skipping {} {}: not a valid MCP tool name", kind, quoted));
            return;
        }
        if (by_name.contains(t->name())) {
            report.warnings.push_back(
                fmt::format("skipping {} {}: a tool registered earlier already exposes that name", kind, quoted));
            return;
        }
        // Say now which keywords of its schema go unchecked, rather than ignore them silently.
        try {
            const toolkit::schema_validator check(t->input_schema());
            if (!check.unenforced_keywords().empty()) {
                std::string list;
                for (const auto& k : check.unenforced_keywords()) list += (list.empty() ? "" : ", ") + k;
                report.warnings.push_back(
                    fmt::format("{} {}: its input schema uses keywords this server passes on but does not enforce: {}",
                                kind, quoted, list));
            }
        } catch (const std::exception& e) {
            report.warnings.push_back(fmt::format("{} {}: {}", kind, quoted, e.what()));
        }
        by_name.emplace(t->name(), t);
        tools.push_back(t);
        report.served.push_back(t->name());
        if (t->confirm().posture == toolkit::confirm_posture::required) ++report.confirm_count;
    };
    // Commands first: a built-in can never shadow a command tool and strip its gate.
    for (const auto& t : commands) add(t, "tool");
    for (const auto& t : builtins) add(t, "built-in");
}

toolkit::tool_ptr server::impl::find_tool(std::string_view name) const {
    auto it = by_name.find(std::string(name));
    return it == by_name.end() ? nullptr : it->second;
}

std::shared_ptr<session> server::impl::create_session(std::string& error) {
    expire_idle_sessions();
    if (sessions.size() >= options.max_sessions) {
        // Make room by ending the least recently active session that has nothing running.
        std::shared_ptr<session> oldest;
        for (const auto& [id, s] : sessions) {
            if (s->in_flight.empty() && (!oldest || s->last_seen < oldest->last_seen)) oldest = s;
        }
        if (!oldest) {
            error = fmt::format("too many active sessions (limit {}); try again later", options.max_sessions);
            return nullptr;
        }
        end_session(oldest);
    }
    auto s = std::make_shared<session>();
    s->id = random_session_id();
    s->last_seen = std::chrono::steady_clock::now();
    sessions.emplace(s->id, s);
    return s;
}

std::shared_ptr<session> server::impl::find_session(std::string_view id) {
    auto it = sessions.find(std::string(id));
    if (it == sessions.end()) return nullptr;
    it->second->last_seen = std::chrono::steady_clock::now();
    return it->second;
}

void server::impl::end_session(const std::shared_ptr<session>& s) {
    s->ended = true;
    for (auto& [id, call] : s->in_flight) call->cancel();
    for (auto& [id, ch] : s->pending) ch->close();
    if (s->listening) s->listening->abandon();
    for (auto& [id, st] : s->resumable) st->abandon();
    sessions.erase(s->id);
}

void server::impl::expire_idle_sessions() {
    const auto now = std::chrono::steady_clock::now();
    std::vector<std::shared_ptr<session>> idle;
    for (const auto& [id, s] : sessions) {
        const bool busy =
            !s->in_flight.empty() || (s->listening && s->listening->writer_attached && !s->listening->finished);
        if (!busy && now - s->last_seen > options.session_idle_timeout) idle.push_back(s);
    }
    for (const auto& s : idle) {
        log(log_level::debug,
            fmt::format("session {} expired after {} idle", s->id, describe_duration(options.session_idle_timeout)));
        end_session(s);
    }
}

json::object server::impl::initialize(session& s, const json::object& params) {
    std::string requested;
    if (const auto* v = params.if_contains("protocolVersion"); v && v->is_string()) requested = v->get_string();
    s.protocol_version = negotiate_protocol_version(requested);
    if (const auto* c = params.if_contains("capabilities"); c && c->is_object())
        s.client_capabilities = c->get_object();
    if (const auto* ci = params.if_contains("clientInfo"); ci && ci->is_object()) {
        if (const auto* n = ci->get_object().if_contains("name"); n && n->is_string() && !n->get_string().empty()) {
            s.client_name = n->get_string();
        }
    }
    json::object result{{"protocolVersion", s.protocol_version},
                        {"capabilities", capabilities()},
                        {"serverInfo", json::object{{"name", options.name}, {"version", options.version}}}};
    if (!options.instructions.empty()) result["instructions"] = options.instructions;
    return result;
}

json::object server::impl::capabilities() const {
    json::object caps{{"logging", json::object{}}, {"tools", json::object{{"listChanged", false}}}};
    if (!resources.empty() || !templates.empty()) {
        caps["resources"] = json::object{{"subscribe", true}, {"listChanged", false}};
    }
    if (!prompts.empty()) caps["prompts"] = json::object{{"listChanged", false}};
    if (completion) caps["completions"] = json::object{};
    return caps;
}

json::object server::impl::list_tools(const json::object& params, bool& invalid_cursor) const {
    return paged(tools, params, options.page_size, "tools", invalid_cursor,
                 [](const toolkit::tool_ptr& t) { return tool_descriptor(*t); });
}

void server::impl::send_log(session& s, const std::shared_ptr<outbound_stream>& out, log_level level,
                            std::string_view text) {
    if (!s.level || level < *s.level || !out) return;
    out->push(make_notification("notifications/message",
                                json::object{{"level", to_string(level)}, {"logger", options.name}, {"data", text}}));
}

asio::awaitable<json::object> server::impl::ask_client(std::shared_ptr<session> s, std::shared_ptr<outbound_stream> out,
                                                       std::string method, json::object params,
                                                       std::chrono::steady_clock::duration timeout) {
    co_await asio::this_coro::throw_if_cancelled(false);
    if (!out || out->dead) throw std::runtime_error("the client's stream for this request is closed");
    if (method == "elicitation/create" && !client_can_elicit_form(s->client_capabilities)) {
        if (client_declares_elicitation(s->client_capabilities))
            throw std::runtime_error(std::string(no_form_elicitation_text));
        throw std::runtime_error("the client did not declare the elicitation capability");
    }
    if (method == "sampling/createMessage" && !s->client_capabilities.contains("sampling")) {
        throw std::runtime_error("the client did not declare the sampling capability");
    }
    // Ids are unique across the whole server, not only the session, so an answer can
    // never be matched to another session's question.
    const json::value id = static_cast<std::int64_t>(next_server_request_id++);
    const auto key = id_key(id);
    auto channel = std::make_shared<response_channel>(executor, 1);
    s->pending[key] = channel;
    out->push(make_request(id, std::move(method), std::move(params)));

    asio::steady_timer deadline(executor, timeout);
    auto first = co_await (channel->async_receive(tuple_awaitable) || deadline.async_wait(tuple_awaitable));
    s->pending.erase(key);
    if (first.index() == 1) {
        if (std::get<0>(std::get<1>(first))) throw std::runtime_error("the call was cancelled");
        throw std::runtime_error(fmt::format("no answer within {}", describe_duration(timeout)));
    }
    auto [ec, response] = std::get<0>(std::move(first));
    if (ec) throw std::runtime_error(s->ended ? "the session ended" : "the call was cancelled");
    if (const auto* e = response.if_contains("error")) {
        std::string message = "no message";
        if (e->is_object()) {
            if (const auto* m = e->get_object().if_contains("message"); m && m->is_string()) message = m->get_string();
        }
        throw std::runtime_error(fmt::format("the client answered with an error: {}", message));
    }
    const auto* result = response.if_contains("result");
    if (!result || !result->is_object()) throw std::runtime_error("the client's answer has no result object");
    co_return result->get_object();
}

// The client behind one call, lent to the tool for the length of the call.
class server::impl::call_channel final : public client_channel {
public:
    call_channel(impl& server, std::shared_ptr<session> s, std::shared_ptr<outbound_stream> out)
        : server_(server), session_(std::move(s)), out_(std::move(out)) {}
    asio::awaitable<json::object> request(std::string method, json::object params) const override {
        return server_.ask_client(session_, out_, std::move(method), std::move(params),
                                  server_.options.elicitation_timeout);
    }
    void interrupt_stream() const override { out_->interrupt(); }

private:
    impl& server_;
    std::shared_ptr<session> session_;
    std::shared_ptr<outbound_stream> out_;
};

const client_channel* client_channel_of(const toolkit::call_options& options) noexcept {
    return dynamic_cast<const client_channel*>(options.facilities);
}

asio::awaitable<json::object> server::impl::call_tool(std::shared_ptr<session> s, json::value request_id,
                                                      json::object params, std::shared_ptr<outbound_stream> out) {
    (void)request_id;
    const auto* name_value = params.if_contains("name");
    const std::string name = name_value && name_value->is_string() ? std::string(name_value->get_string()) : "";
    auto t = find_tool(name);
    if (!t) {
        co_return error_result(
            fmt::format("unknown tool {}; call tools/list for the tools this server offers", gocompat::quote(name)));
    }
    json::value arguments = nullptr;
    if (const auto* a = params.if_contains("arguments")) arguments = *a;

    std::optional<json::value> progress_token;
    if (const auto* meta = params.if_contains("_meta"); meta && meta->is_object()) {
        if (const auto* tok = meta->get_object().if_contains("progressToken");
            tok && (tok->is_string() || tok->is_int64() || tok->is_uint64())) {
            progress_token = *tok;
        }
    }

    toolkit::tool_call_policy policy;
    policy.timeout = options.call_timeout;
    policy.slots = &slots;
    policy.in_flight = &calls_in_flight;
    policy.approve = [this, s, out](const toolkit::tool& gated,
                                    std::string command_line) -> asio::awaitable<std::optional<toolkit::outcome>> {
        const auto requirement = gated.confirm();
        if (options.confirm == confirm_mode::never) co_return std::nullopt;
        // Read the capability now, not at connect time: the session is the authority. Any
        // declared elicitation goes to the prompt, so a URL-only client is refused there
        // (fail closed) instead of running ungated.
        if (client_declares_elicitation(s->client_capabilities)) {
            std::optional<std::string> denial;
            try {
                const auto answer =
                    co_await ask_client(s, out, "elicitation/create",
                                        approval_elicitation(options.name, command_line, requirement.trigger_tag),
                                        options.elicitation_timeout);
                denial = interpret_approval(answer, command_line);
            } catch (const std::exception& e) {
                denial = approval_failed_text(command_line, e.what());
            }
            if (!denial) co_return std::nullopt;
            log(log_level::info, fmt::format("not running {}: {}", command_line, *denial));
            co_return toolkit::outcome::failure(std::move(*denial));
        }
        if (options.confirm == confirm_mode::always)
            co_return toolkit::outcome::failure(cannot_elicit_text(command_line));
        log(log_level::warning, fmt::format("running {} ungated: gated by {} but the client cannot elicit approval",
                                            gocompat::quote(command_line), requirement.trigger_tag));
        co_return std::nullopt;
    };
    policy.on_queued = [this](const toolkit::tool&, const std::string& command_line) {
        log(log_level::info, fmt::format("Waiting for a free slot to run {}", command_line));
    };
    policy.on_start = [this, s, out](const toolkit::tool&, const std::string& command_line) {
        log(log_level::info, fmt::format("Running {}", command_line));
        send_log(*s, out, log_level::info, fmt::format("Running {}", command_line));
    };
    policy.on_finish = [this](const toolkit::tool&, const std::string& command_line, const toolkit::outcome& result,
                              std::chrono::steady_clock::duration took) {
        log(log_level::info, fmt::format("Finished {} in {}{}", command_line, describe_duration(took),
                                         result.is_error() ? " (failed)" : ""));
    };

    auto& call_opts = policy.call;
    call_opts.asker = &toolkit::default_deny_prompter();  // nothing on this path can prompt a human
    call_opts.on_log = [this, s, out](std::string_view level, std::string_view text) {
        send_log(*s, out, parse_log_level(level).value_or(log_level::info), text);
    };
    const call_channel channel(*this, s, out);
    call_opts.facilities = &channel;
    if (progress_token) {
        // An in-process tool reports its own progress through on_progress; a command gets a
        // heartbeat while it runs: clients reset their request timeouts on progress, and a
        // person sees the call is alive.
        call_opts.on_progress = [out, token = *progress_token](const toolkit::progress_update& u) {
            out->push(progress_notification(token, u.progress, u.total, u.message));
        };
        policy.alongside = [this, out, token = *progress_token](
                               const toolkit::tool& running, const std::string& command_line) -> asio::awaitable<void> {
            if (running.kind() != toolkit::tool_kind::command) co_return;
            auto beat = [&](std::int64_t n, std::string message) {
                out->push(progress_notification(token, static_cast<double>(n), std::nullopt, message));
            };
            beat(0, fmt::format("running {}", command_line));
            asio::steady_timer tick(executor);
            for (std::int64_t n = 1;; ++n) {
                tick.expires_after(options.progress_interval);
                auto [ec] = co_await tick.async_wait(tuple_awaitable);
                if (ec) co_return;
                beat(n,
                     fmt::format("running {} for {}", command_line, describe_duration(options.progress_interval * n)));
            }
        };
    }

    co_return call_result(co_await toolkit::run_tool_call(std::move(t), std::move(arguments), std::move(policy)));
}

asio::awaitable<std::optional<json::object>> server::impl::dispatch_request(std::shared_ptr<session> s,
                                                                            rpc_request request,
                                                                            std::shared_ptr<outbound_stream> out) {
    const auto& m = request.method;
    if (m == "ping") co_return make_result(request.id, json::object{});
    // Nothing runs before the handshake is complete (the SDK clients always send
    // notifications/initialized first; the conformance suite does too).
    if (!s->initialized && !allowed_before_initialized(m)) {
        co_return make_error(request.id, rpc_error::invalid_request,
                             fmt::format("Invalid Request: {} before notifications/initialized; send "
                                         "notifications/initialized after the initialize result, then retry",
                                         m));
    }
    if (m == "initialize") co_return make_result(request.id, initialize(*s, request.params));
    if (m == "logging/setLevel") {
        const auto* lv = request.params.if_contains("level");
        const auto level = lv && lv->is_string() ? parse_log_level(lv->get_string()) : std::nullopt;
        if (!level) {
            co_return make_error(request.id, rpc_error::invalid_params,
                                 "Invalid params: level must be one of debug, info, notice, warning, error, critical, "
                                 "alert, emergency");
        }
        s->level = level;
        co_return make_result(request.id, json::object{});
    }
    if (m == "tools/list") {
        bool invalid_cursor = false;
        auto result = list_tools(request.params, invalid_cursor);
        if (invalid_cursor)
            co_return make_error(request.id, rpc_error::invalid_params, "Invalid params: unknown cursor");
        co_return make_result(request.id, std::move(result));
    }
    if (m == "tools/call") {
        const auto* name = request.params.if_contains("name");
        if (!name || !name->is_string()) {
            co_return make_error(request.id, rpc_error::invalid_params,
                                 "Invalid params: tools/call needs a string name");
        }
        auto result = co_await call_tool(s, request.id, request.params, out);
        co_return make_result(request.id, std::move(result));
    }
    bool handled = false;
    auto extension = co_await dispatch_extension(s, request, handled);
    if (handled) co_return extension;
    co_return make_error(request.id, rpc_error::method_not_found, fmt::format("Method not found: {}", m));
}

void server::impl::handle_notification(const std::shared_ptr<session>& s, const rpc_notification& n) {
    if (n.method == "notifications/initialized") {
        if (s->initialized) return;
        s->initialized = true;
        const bool can_elicit = client_can_elicit_form(s->client_capabilities);
        std::string what;
        if (options.confirm == confirm_mode::never) {
            what = "confirm-tagged tools run ungated (confirm_over_mcp=never)";
        } else if (!can_elicit && client_declares_elicitation(s->client_capabilities)) {
            what = "URL elicitation only, confirm-tagged tools will be refused (approval needs form elicitation)";
        } else if (can_elicit) {
            what = "elicitation supported, confirm-tagged tools will request approval";
        } else if (options.confirm == confirm_mode::always) {
            what = "elicitation unsupported, confirm-tagged tools will be refused (confirm_over_mcp=always)";
        } else {
            what = "elicitation unsupported, confirm-tagged tools run ungated";
        }
        log(log_level::info, fmt::format("Client {} connected: {}", gocompat::quote(s->client_name), what));
        return;
    }
    if (n.method == "notifications/cancelled") {
        const auto* rid = n.params.if_contains("requestId");
        if (!rid) return;
        auto it = s->in_flight.find(id_key(*rid));
        if (it == s->in_flight.end()) return;  // finished already, or never ours: ignored
        log(log_level::info, fmt::format("cancelling request {} at the client's request", id_key(*rid)));
        it->second->cancel();
        return;
    }
    // Other notifications (progress, roots changes) need nothing from a tools server.
}

void server::impl::handle_response(const std::shared_ptr<session>& s, rpc_response r) {
    auto it = s->pending.find(id_key(r.id));
    if (it == s->pending.end()) {
        log(log_level::debug, fmt::format("ignoring an answer to unknown request {}", id_key(r.id)));
        return;
    }
    json::object response{{"id", r.id}};
    if (r.error) {
        response["error"] = *r.error;
    } else {
        response["result"] = r.result ? *r.result : json::value(nullptr);
    }
    it->second->try_send(boost::system::error_code{}, std::move(response));
}

void server::add_resource(resource r) { impl_->resources.push_back(std::move(r)); }
void server::add_resource_template(resource_template t) { impl_->templates.push_back(std::move(t)); }
void server::add_prompt(prompt p) { impl_->prompts.push_back(std::move(p)); }
void server::set_completion_handler(completion_handler h) { impl_->completion = std::move(h); }

void server::notify_resource_updated(const std::string& uri) {
    for (auto& [id, s] : impl_->sessions) {
        if (s->subscriptions.contains(uri) && s->listening) {
            s->listening->push(make_notification("notifications/resources/updated", json::object{{"uri", uri}}));
        }
    }
}

server::server(asio::any_io_executor ex, server_options options, toolkit::tool_list commands,
               toolkit::tool_list builtins)
    : impl_(std::make_shared<impl>(std::move(ex), std::move(options))) {
    impl_->register_tools(commands, builtins);
}

server::~server() { shutdown(); }

const registration& server::registered() const noexcept { return impl_->report; }
const server_options& server::options() const noexcept { return impl_->options; }
bool server::stopping() const noexcept { return impl_->stopping; }
std::size_t server::session_count() const noexcept { return impl_->sessions.size(); }
bool server::has_session(std::string_view id) const { return impl_->sessions.contains(std::string(id)); }
std::size_t server::calls_in_flight() const noexcept { return impl_->calls_in_flight; }

void server::shutdown() {
    if (impl_->stopping) return;
    impl_->stopping = true;
    // Cancel calls (their process groups are killed) and release held-open streams; the
    // responses already under way still finish.
    for (auto& [id, s] : impl_->sessions) {
        // Not call->cancel(): a call cut short by shutdown still answers, with its error.
        for (auto& [rid, call] : s->in_flight) call->signal.emit(asio::cancellation_type::terminal);
        for (auto& [pid, ch] : s->pending) ch->close();
        if (s->listening) s->listening->finish();
    }
    for (auto& w : impl_->open_streams) {
        if (auto st = w.lock(); st && !st->finished) st->wake.cancel();
    }
}

}  // namespace fiskai::mcpserver
