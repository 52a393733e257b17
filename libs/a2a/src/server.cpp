#include <fiskai/a2a/codec.hpp>
#include <fiskai/a2a/server.hpp>
#include <fiskai/a2a/stamp.hpp>
#include <fiskai/a2a/validator.hpp>

#include <fiskai/gocompat/duration.hpp>
#include <fiskai/gocompat/json.hpp>
#include <fiskai/gocompat/name.hpp>
#include <fiskai/gocompat/quote.hpp>
#include <fiskai/toolkit/outcome.hpp>
#include <fiskai/toolkit/prompter.hpp>
#include <fiskai/toolkit/tool_call.hpp>

#include <optional>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/experimental/concurrent_channel.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json/value.hpp>

#include <algorithm>
#include <list>
#include <map>
#include <mutex>
#include <stdexcept>
#include <utility>
#include <vector>

namespace fiskai::a2a {

namespace asio = boost::asio;
using namespace asio::experimental::awaitable_operators;
using std::chrono::steady_clock;

// ---- logging ----

using gocompat::log_level;

// ---- the engine ----

struct server::impl {
    asio::any_io_executor executor;
    server_options options;
    toolkit::tool_list exposed;
    std::map<std::string, toolkit::tool_ptr, std::less<>> by_name;
    agent_card card;
    std::optional<toolkit::slot_pool> pool;

    std::mutex mutex;
    bool stopped = false;
    // The cancellation signal of each running call worker; touched on the executor only.
    std::list<std::shared_ptr<asio::cancellation_signal>> running;
    std::vector<intake*> intakes;  // open intakes of running serve() calls

    void log(log_level level, std::string_view message, std::initializer_list<gocompat::log_field> fields = {}) const {
        options.log(level, message, fields);
    }

    // The reply stamped against its request and encoded.
    template <class M>
    reply finish(M& m, const header& request) const {
        stamp_reply(m, request, options.identity);
        auto text = encode(m);
        if (!text) {
            log(log_level::warn, "Marshaling reply failed", {{"error", text.error().message}});
            return reply::refusal(500, "marshaling reply");
        }
        return reply::message(std::move(*text));
    }

    // Refused inbound bodies: the descriptions the Go server gives its 400s.
    static std::string describe(const error& e) {
        std::string text;
        if (e.code == errc::too_large) {
            text = "request exceeds " + std::to_string(max_message_size) + " bytes";
        } else if (e.code == errc::protocol_mismatch) {
            text = e.message;
        } else if (e.code == errc::invalid_field) {
            text = "unexpected message protocol: " + e.message;
        } else {
            text = "invalid request: " + e.message;
        }
        // One line: it travels in a header.
        std::replace_if(
            text.begin(), text.end(), [](char c) { return c == '\n' || c == '\r'; }, ' ');
        return text;
    }

    void select(toolkit::tool_list tools);

    asio::awaitable<void> discovery_loop(server& s, intake& in);
    asio::awaitable<void> tool_loop(server& s, intake& in);
    static asio::awaitable<void> run_call(server& s, admitted_call call, slot held, responder respond);
};

void server::impl::select(toolkit::tool_list tools) {
    for (auto& tool : tools) {
        if (!tool) continue;
        const std::string& name = tool->name();
        std::string_view reason;
        if (!tool->exposed().on(toolkit::surface::a2a)) {
            reason = "Skipping tool: it does not declare a2a exposure";
        } else if (const auto posture = tool->confirm().posture; posture == toolkit::confirm_posture::unknown) {
            reason =
                "Skipping tool: it cannot report whether it is confirmation-gated; it is refused rather than served "
                "ungated";
        } else if (posture == toolkit::confirm_posture::required) {
            reason =
                "Skipping tool: confirmation-gated commands are not served over a2a (no operator to approve); use "
                "ai:deny to suppress this";
        } else if (!gocompat::is_valid_name(name)) {
            reason = "Skipping tool: not a valid a2a tool name";
        } else if (tool->model_description().empty()) {
            reason =
                "Skipping tool: served tools must advertise a description; remote agents will not import a "
                "description-less tool";
        } else if (by_name.contains(name)) {
            reason = "Skipping tool: another served tool already has this name";
        }
        if (!reason.empty()) {
            log(log_level::warn, reason, {{"tool", name}});
            continue;
        }
        by_name.emplace(name, tool);
        exposed.push_back(std::move(tool));
    }

    card.name = options.identity;
    card.version = options.version.empty() ? "dev" : options.version;
    card.protocols = {std::string(protocols::v1)};
    for (const auto& tool : exposed) {
        const auto& schema = tool->input_schema();
        card.tools.push_back({tool->name(), tool->model_description(),
                              schema.empty() ? raw_json::parse(R"({"type":"object"})").value()
                                             : raw_json::from_value(boost::json::value(schema))});
    }
}

server::server(asio::any_io_executor executor, toolkit::tool_list tools, server_options options)
    : impl_(std::make_unique<impl>()) {
    if (!is_valid_identity(options.identity)) {
        throw std::invalid_argument("a2a server identity " + gocompat::quote(options.identity) + " is not valid");
    }
    if (options.concurrency == 0) options.concurrency = 2;
    if (options.call_timeout <= steady_clock::duration::zero()) options.call_timeout = std::chrono::seconds(30);
    impl_->executor = executor;
    impl_->options = std::move(options);
    impl_->pool.emplace(executor, impl_->options.concurrency);
    impl_->select(std::move(tools));
}

server::~server() = default;

const std::string& server::identity() const noexcept { return impl_->options.identity; }
const agent_card& server::card() const noexcept { return impl_->card; }
const toolkit::tool_list& server::exposed() const noexcept { return impl_->exposed; }

admission server::admit(route r, std::string_view body) const {
    const auto& im = *impl_;
    const auto want = r == route::discovery ? protocols::discovery_request : protocols::tool_request;
    auto m = default_validator().check(body, want);
    if (!m) {
        im.log(log_level::debug, "Refusing request", {{"route", to_string(r)}, {"error", m.error().message}});
        return reply::refusal(400, impl::describe(m.error()));
    }

    if (r == route::discovery) {
        discovery_reply d;
        static_cast<agent_card&>(d) = im.card;  // computed once, at construction
        return im.finish(d, header_of(*m));
    }

    auto& request = std::get<tool_request>(*m);
    const auto it = im.by_name.find(request.name);
    if (it == im.by_name.end()) {
        // Answered in-band, without a slot: nothing runs.
        im.log(log_level::warn, "Rejecting unknown tool call",
               {{"tool", request.name}, {"sender", request.sender.name.empty() ? "unknown" : request.sender.name}});
        tool_reply out;
        out.is_error = true;
        out.output = "tool " + gocompat::quote(request.name) + " is not available";
        return im.finish(out, request);
    }
    return admitted_call{std::move(request), it->second};
}

asio::awaitable<slot> server::acquire() { co_return co_await impl_->pool->acquire(); }

asio::awaitable<reply> server::execute(admitted_call call, slot& held) {
    if (!held) throw std::invalid_argument("a2a: a tool call runs only in a held slot");
    const auto& im = *impl_;
    const auto& request = call.request;
    const std::string sender = request.sender.name.empty() ? "unknown" : request.sender.name;

    // Absent or null input: the pipeline hands the tool an empty object.
    boost::json::value arguments = nullptr;
    if (request.input) arguments = request.input->to_value();

    toolkit::tool_call_policy policy;
    policy.timeout = im.options.call_timeout;
    // No approve step: nobody on this path can be asked, so a gated tool is refused (and
    // select() never serves one). The slot is already held, taken on the intake.
    policy.call.asker = &toolkit::default_deny_prompter();
    policy.on_start = [&](const toolkit::tool& t, const std::string&) {
        im.log(log_level::info, "Running tool call",
               {{"tool", t.name()},
                {"command", t.kind() == toolkit::tool_kind::command ? t.title() : t.name()},
                {"sender", sender}});
    };
    policy.on_finish = [&](const toolkit::tool& t, const std::string&, const toolkit::outcome& o,
                           steady_clock::duration took) {
        const auto duration = gocompat::format_duration(took);
        if (o.is_error()) {
            im.log(log_level::error, "Tool call failed",
                   {{"tool", t.name()}, {"duration", duration}, {"error", o.render()}});
            return;
        }
        const auto* c = o.command();
        const auto exit_code = std::to_string(c ? c->exit_code : 0);
        im.log(log_level::info, "Tool call completed",
               {{"tool", t.name()},
                {"duration", duration},
                {"exit_code", exit_code},
                {"truncated", c && c->truncated ? "true" : "false"}});
    };
    const auto outcome = co_await toolkit::run_tool_call(call.tool, std::move(arguments), std::move(policy));

    tool_reply out;
    switch (outcome.type()) {
        case toolkit::outcome::kind::command: {
            const auto* c = outcome.command();
            out.output = c->output;
            out.exec = exec_result{c->command, c->exit_code, c->truncated};
            break;
        }
        case toolkit::outcome::kind::json: gocompat::append_json(out.output, *outcome.json()); break;
        case toolkit::outcome::kind::content:
            // The tool reply carries text: the content as a model would read it.
            out.is_error = outcome.is_error();
            out.output = outcome.render();
            break;
        case toolkit::outcome::kind::error:
            out.is_error = true;
            out.output = outcome.error_message();
            break;
    }
    co_return im.finish(out, request);
}

asio::awaitable<void> server::impl::discovery_loop(server& s, intake& in) {
    while (auto request = co_await in.next()) {
        // Discovery is answered inline: the card is precomputed, nothing waits.
        auto verdict = s.admit(route::discovery, request->body);
        if (auto* r = std::get_if<reply>(&verdict)) request->respond(std::move(*r));
    }
}

// One call's worker. A function rather than a lambda: a coroutine lambda's captures live
// in the closure, which would die with the loop iteration that spawned the worker.
asio::awaitable<void> server::impl::run_call(server& s, admitted_call call, slot held, responder respond) {
    respond(co_await s.execute(std::move(call), held));
    // `held` is released here, after the reply has gone out.
}

asio::awaitable<void> server::impl::tool_loop(server& s, intake& in) {
    while (auto request = co_await in.next()) {
        auto verdict = s.admit(route::tool, request->body);
        if (auto* r = std::get_if<reply>(&verdict)) {
            request->respond(std::move(*r));
            continue;
        }
        // The slot is taken here, on the intake, before the worker starts: while every slot
        // is busy, the next request is not read.
        auto permit = co_await s.acquire();
        auto signal = running.insert(running.end(), std::make_shared<asio::cancellation_signal>());
        asio::co_spawn(
            executor,
            run_call(s, std::get<admitted_call>(std::move(verdict)), std::move(permit), std::move(request->respond)),
            asio::bind_cancellation_slot(
                (*signal)->slot(), [this, signal, keep = *signal](const std::exception_ptr& e) {
                    running.erase(signal);
                    if (!e) return;
                    try {
                        std::rethrow_exception(e);
                    } catch (const std::exception& ex) {
                        log(log_level::error, "Tool call worker failed", {{"error", ex.what()}});
                    }
                }));
    }
}

asio::awaitable<void> server::serve(transport& t) {
    auto& im = *impl_;
    auto discovery = co_await t.listen(route::discovery, im.options.identity);
    if (!discovery) throw boost::system::system_error(discovery.error().code, discovery.error().message);
    auto tools = co_await t.listen(route::tool, im.options.identity);
    if (!tools) {
        (*discovery)->close();
        throw boost::system::system_error(tools.error().code, tools.error().message);
    }
    intake* const both[] = {discovery->get(), tools->get()};
    {
        std::lock_guard lock(im.mutex);
        for (auto* i : both) {
            if (im.stopped) i->close();
            im.intakes.push_back(i);
        }
    }

    std::exception_ptr failure;
    try {
        // Separate intakes: discovery keeps answering while every tool slot is busy.
        co_await (im.discovery_loop(*this, **discovery) && im.tool_loop(*this, **tools));
    } catch (...) {
        failure = std::current_exception();
    }
    {
        std::lock_guard lock(im.mutex);
        for (auto* i : both) {
            i->close();
            std::erase(im.intakes, i);
        }
    }
    // Every running call holds a slot: holding them all means every call has been answered.
    std::vector<slot> all;
    for (std::size_t i = 0; i < im.options.concurrency; ++i) all.push_back(co_await acquire());
    if (failure) std::rethrow_exception(failure);
}

void server::cancel() {
    stop();
    // A copy: a worker that ends erases its own entry, and must not do so under this loop.
    const auto running = impl_->running;
    for (const auto& signal : running) signal->emit(asio::cancellation_type::terminal);
}

void server::stop() {
    std::lock_guard lock(impl_->mutex);
    impl_->stopped = true;
    for (auto* i : impl_->intakes) i->close();
}

}  // namespace fiskai::a2a
