#include <fiskai/mcpclient/session.hpp>

#include "transport.hpp"

#include <fiskai/gocompat/quote.hpp>

#include <boost/asio/this_coro.hpp>
#include <fmt/format.h>
#include <re2/re2.h>

namespace fiskai::mcpclient {
namespace {

namespace asio = boost::asio;
namespace json = boost::json;

// A server that hands out cursors for ever must not hold startup for ever either.
constexpr int max_tool_pages = 1000;

clock::time_point deadline_after(std::chrono::nanoseconds d) {
    if (d.count() <= 0) return clock::time_point::max();
    return clock::now() + std::chrono::duration_cast<clock::duration>(d);
}

bool matches_any(const std::vector<std::string>& patterns, const std::string& name) {
    for (const auto& p : patterns) {
        // The patterns were compiled once by the config decoder, which refused bad ones.
        re2::RE2 re(p, re2::RE2::Quiet);
        if (re.ok() && re2::RE2::PartialMatch(name, re)) return true;
    }
    return false;
}

std::string prefix(const config::mcp_server& s) { return fmt::format("mcp server {}", gocompat::quote(s.name)); }

}  // namespace

session::session(config::mcp_server server, session_options options, std::shared_ptr<transport> t)
    : server_(std::move(server)), options_(std::move(options)), transport_(std::move(t)) {}

// Dropped without close (an owner that forgot, or unwound): the child must not outlive the
// session, so its group is killed now; the transport's own coroutines then reap it.
session::~session() {
    if (closed_) return;
    transport_->on_death = nullptr;
    transport_->fail("the session was dropped without being closed");
}

std::string_view session::transport_name() const noexcept { return transport_->name(); }
int session::child_pid() const noexcept { return transport_->child_pid(); }
std::optional<std::string> session::fault() const {
    if (closed_) return std::nullopt;
    return transport_->dead();
}

void session::on_fault(std::function<void(const std::string&)> handler) {
    if (auto why = fault()) {
        handler(*why);
        return;
    }
    transport_->on_death = std::move(handler);
}

asio::awaitable<text_result<std::shared_ptr<session>>> session::open(config::mcp_server server,
                                                                     session_options options) {
    auto ex = co_await asio::this_coro::executor;
    auto started = server.url.empty() ? start_stdio(ex, server, options.log) : start_http(ex, server, options.log);
    if (!started) co_return started.error();
    auto s = std::make_shared<session>(std::move(server), std::move(options), std::move(*started));
    const auto deadline = deadline_after(s->server_.startup_timeout);
    auto problem = co_await s->handshake(deadline);
    if (!problem) problem = co_await s->list_tools(deadline);
    if (problem) {
        co_await s->close();
        co_return *problem;
    }
    s->options_.log.info("mcp client: session open", {{"server", s->server_.name},
                                                      {"transport", s->transport_name()},
                                                      {"protocol", s->identity_.protocol_version},
                                                      {"tools", std::to_string(s->tools_.size())}});
    co_return s;
}

// One request and its answer; an HTTP session the server forgot is initialized again
// once, transparently, and the request repeated. A session that cannot be re-established
// is dead (the fault).
asio::awaitable<rpc_result> session::exchange(json::object message, std::int64_t id, clock::time_point deadline) {
    auto answer = co_await transport_->request(message, id, deadline);
    if (answer || answer.error().what != rpc_failure::kind::session_expired) co_return answer;
    options_.log.info("mcp client: the server lost the session; initializing again", {{"server", server_.name}});
    transport_->reset_session();
    if (auto problem = co_await handshake(deadline)) {
        auto why = fmt::format("the session could not be re-established: {}", *problem);
        transport_->fail(why);
        co_return rpc_failure{rpc_failure::kind::dead, why};
    }
    id = next_id_++;
    message["id"] = id;
    answer = co_await transport_->request(message, id, deadline);
    if (!answer && answer.error().what == rpc_failure::kind::session_expired) {
        std::string why = "the server lost the session again right after a new initialize";
        transport_->fail(why);
        co_return rpc_failure{rpc_failure::kind::dead, why};
    }
    co_return answer;
}

asio::awaitable<std::optional<std::string>> session::handshake(clock::time_point deadline) {
    const auto id = next_id_++;
    auto answer = co_await transport_->request(initialize_request(id, options_.client_version), id, deadline);
    if (!answer) {
        const auto& f = answer.error();
        switch (f.what) {
            case rpc_failure::kind::timeout:
                co_return no_answer_text(server_.name, "initialize", server_.startup_timeout);
            case rpc_failure::kind::dead:
                co_return fmt::format("{}: it stopped before answering initialize: {}", prefix(server_), f.why);
            case rpc_failure::kind::cancelled: co_return fmt::format("{}: initialize was cancelled", prefix(server_));
            default: co_return fmt::format("{}: initialize failed: {}", prefix(server_), f.why);
        }
    }
    auto identity = read_initialize_response(server_.name, *answer);
    if (!identity) co_return identity.error();
    identity_ = std::move(*identity);
    transport_->set_protocol_version(identity_.protocol_version);
    if (auto failed = co_await transport_->notify(initialized_notification(), deadline)) {
        co_return fmt::format("{}: notifications/initialized failed: {}", prefix(server_), failed->why);
    }
    co_return std::nullopt;
}

asio::awaitable<std::optional<std::string>> session::list_tools(clock::time_point deadline) {
    std::optional<std::string> cursor;
    const auto& alias = server_.effective_alias();
    for (int page_no = 0;; ++page_no) {
        if (page_no == max_tool_pages) {
            co_return fmt::format("{}: tools/list still had more after {} pages", prefix(server_), max_tool_pages);
        }
        const auto id = next_id_++;
        auto answer = co_await exchange(tools_list_request(id, cursor), id, deadline);
        if (!answer) {
            const auto& f = answer.error();
            if (f.what == rpc_failure::kind::timeout) {
                co_return no_answer_text(server_.name, "tools/list", server_.startup_timeout);
            }
            if (f.what == rpc_failure::kind::dead) co_return not_running_text(server_.name, f.why);
            co_return fmt::format("{}: tools/list failed: {}", prefix(server_), f.why);
        }
        auto page = read_tools_page(server_.name, *answer);
        if (!page) co_return page.error();
        for (auto& t : page->tools) {
            if (!server_.include.tools.empty() && !matches_any(server_.include.tools, t.name)) continue;
            if (matches_any(server_.exclude.tools, t.name)) continue;
            if (!local_tool_name(alias, t.name)) {
                options_.log.warn(skipping_tool_text(server_.name, t.name));
                continue;
            }
            tools_.push_back(std::move(t));
        }
        if (!page->next_cursor) break;
        cursor = std::move(page->next_cursor);
    }
    co_return std::nullopt;
}

asio::awaitable<toolkit::outcome> session::call(std::string tool, json::value arguments,
                                                std::chrono::nanoseconds timeout) {
    // The cancellation path below must still run after the caller is cancelled.
    co_await asio::this_coro::throw_if_cancelled(false);
    if (closed_) co_return toolkit::outcome::failure(not_running_text(server_.name, "the session was closed"));
    if (auto why = transport_->dead()) co_return toolkit::outcome::failure(not_running_text(server_.name, *why));
    const auto id = next_id_++;
    auto answer = co_await exchange(tools_call_request(id, tool, arguments), id, deadline_after(timeout));
    if (answer) co_return call_outcome(server_.name, tool, *answer);
    const auto& f = answer.error();
    const auto tool_prefix = fmt::format("{} tool {}", prefix(server_), gocompat::quote(tool));
    switch (f.what) {
        case rpc_failure::kind::timeout:
            transport_->post_notification(cancelled_notification(id, "the call timed out"));
            co_return toolkit::outcome::failure(call_timeout_text(server_.name, tool, timeout));
        case rpc_failure::kind::cancelled:
            transport_->post_notification(cancelled_notification(id, "the caller cancelled the call"));
            co_return toolkit::outcome::failure(tool_prefix + ": cancelled");
        case rpc_failure::kind::dead: co_return toolkit::outcome::failure(not_running_text(server_.name, f.why));
        default: co_return toolkit::outcome::failure(fmt::format("{}: {}", tool_prefix, f.why));
    }
}

asio::awaitable<void> session::close() {
    if (closed_) co_return;
    closed_ = true;
    co_await transport_->close();
}

}  // namespace fiskai::mcpclient
