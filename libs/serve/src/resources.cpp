#include <fiskai/serve/resources.hpp>

#include <fiskai/a2a/client.hpp>
#include <fiskai/a2a_nats/transport.hpp>
#include <fiskai/agent/hitl.hpp>
#include <fiskai/gocompat/quote.hpp>
#include <fiskai/jetstream/offload.hpp>
#include <fiskai/llm/provider.hpp>
#include <fiskai/mcpclient/session.hpp>
#include <fiskai/mcpclient/tools.hpp>
#include <fiskai/knowledge/builtins.hpp>
#include <fiskai/knowledge/store.hpp>
#include <fiskai/memory/builtins.hpp>
#include <fiskai/memory/store.hpp>
#include <fiskai/net/http_client.hpp>
#include <fiskai/remotetools/config_hosts.hpp>
#include <fiskai/remotetools/remotetools.hpp>
#include <fiskai/runstate/store.hpp>

#include <boost/asio/this_coro.hpp>
#include <boost/asio/thread_pool.hpp>

#include <fmt/format.h>

#include <chrono>
#include <exception>
#include <set>
#include <stdexcept>
#include <utility>

namespace fiskai::serve {

namespace asio = boost::asio;

namespace {

// The version MCP servers see in clientInfo (the apps' version).
constexpr std::string_view client_version = "0.1.0";
constexpr auto drain_bound = std::chrono::seconds(5);

// The remote tools' a2a client over a borrowed connection. Declared in build order, so the
// client goes before the transport it calls through.
struct remote_link {
    std::unique_ptr<a2a_nats::nats_transport> transport;
    std::unique_ptr<a2a::client> client;
};

bool stores_need_nats(const config::config& cfg) {
    if (runstate::needs_nats(cfg.harness.sessions.backend)) return true;
    if (cfg.harness.memory.enabled && memory::needs_nats(cfg.harness.memory.backend)) return true;
    return cfg.queue_channel_enabled() || !cfg.remote_tools.empty();
}

}  // namespace

struct resources::impl {
    // Declared so that destruction runs from the bottom up: the pool outlives nothing that
    // posts to it, the connections outlive the stores and tools that borrow them.
    asio::thread_pool pool{4};
    std::unique_ptr<conns::embedded_broker> broker;
    conns::provider channel;
    conns::provider store;  // borrows channel's connection when they are one
    std::unique_ptr<net::http_client> http;
    std::shared_ptr<remote_link> remote;
    std::vector<std::shared_ptr<mcpclient::session>> mcp;
    std::shared_ptr<agent::runtime> rt = std::make_shared<agent::runtime>();
    resource_summary summary;
    gocompat::logger log;
    bool closed = false;

    void warn(std::string_view line) const { log.warn(line); }
};

resources::resources(std::unique_ptr<impl> p) noexcept : impl_(std::move(p)) {}

resources::~resources() {
    if (!impl_) return;
    // Without close(): the MCP children still die with their sessions (PDEATHSIG and the
    // session destructor), the connections close without a drain.
    impl_->pool.join();
}

std::shared_ptr<const agent::runtime> resources::runtime() const noexcept { return impl_->rt; }
conns::connection* resources::channel_nats() const noexcept { return impl_->channel.nats(); }
conns::connection* resources::store_nats() const noexcept { return impl_->store.nats(); }
const conns::embedded_broker* resources::broker() const noexcept { return impl_->broker.get(); }
asio::any_io_executor resources::blocking() const { return impl_->pool.get_executor(); }
const resource_summary& resources::summary() const noexcept { return impl_->summary; }
const std::vector<std::shared_ptr<mcpclient::session>>& resources::mcp_sessions() const noexcept { return impl_->mcp; }

asio::awaitable<void> resources::close() {
    auto& d = *impl_;
    if (d.closed) co_return;
    d.closed = true;
    // MCP sessions first: their tools are the last users of a child process.
    for (auto& s : d.mcp) co_await s->close();
    d.mcp.clear();
    // Then the stores and the tools (remote tools hold the a2a client over store_nats).
    d.rt->tools.clear();
    d.rt->offers.reset();  // it holds the last run's tools, MCP-client tools among them
    d.rt->sessions.reset();
    d.rt->memory.reset();
    d.rt->knowledge.reset();
    d.rt->provider.reset();
    d.remote.reset();
    if (d.http) d.http->close_idle();
    // Then the connections, store_nats first; a drain blocks, so it runs on the pool.
    auto drain = [&](conns::provider& p, std::string_view which) -> asio::awaitable<void> {
        conns::connection* c = p.nats();
        if (!c || !p.owns()) {
            p.close();
            co_return;
        }
        const bool drained =
            co_await jetstream::offload_to_completion(d.pool.get_executor(), [c] { return c->drain(drain_bound); });
        if (!drained) d.warn(fmt::format("the {} NATS connection did not drain within 5s", which));
        p.close();
    };
    co_await drain(d.store, "store");
    co_await drain(d.channel, "channel");
    if (d.broker) {
        auto* b = d.broker.get();
        co_await jetstream::offload_to_completion(d.pool.get_executor(), [b] { return b->stop(); });
        d.broker.reset();
    }
}

std::optional<std::string> check_tool_names(const config::config& cfg, const toolkit::tool_list& tools,
                                            const std::string& config_path) {
    std::set<std::string> seen;
    auto claim = [&](const std::string& name) -> std::optional<std::string> {
        if (name.empty()) return std::string("a tool without a name cannot be offered to the model");
        if (!seen.insert(name).second) {
            return fmt::format("tool name {} is offered twice; rename or filter one of them", gocompat::quote(name));
        }
        return std::nullopt;
    };
    std::size_t offered = 0;
    for (const auto& t : tools) {
        if (t && !t->exposed().on(toolkit::surface::agent)) continue;
        if (auto clash = claim(t ? t->name() : std::string())) return clash;
        ++offered;
    }
    // The per-run built-ins take their names too.
    if (cfg.harness.human_in_the_loop_enabled) {
        for (const auto& t : agent::hitl_tools()) {
            if (auto clash = claim(t->name())) return clash;
            ++offered;
        }
    }
    if (cfg.harness.memory.enabled) {
        for (const auto& t : memory::memory_tools(nullptr)) {
            if (auto clash = claim(t->name())) return clash;
            ++offered;
        }
    }
    if (cfg.harness.knowledge.enabled) {
        for (const auto name : {knowledge::search_tool_name, knowledge::enumerate_tool_name}) {
            if (auto clash = claim(std::string(name))) return clash;
            ++offered;
        }
    }
    if (offered == 0) {
        if (cfg.application_path.empty()) {
            return std::string(
                "no tools available: this agent wraps no application (application_path unset) and enables no "
                "built-in or remote tools; set application_path, or enable harness.knowledge, harness.memory, "
                "human_in_the_loop, or remote_tools in the configuration");
        }
        return fmt::format("no tools available after filtering; check include/exclude in {}",
                           gocompat::quote(config_path));
    }
    return std::nullopt;
}

namespace {

asio::awaitable<void> build_into(resources::impl& d, const config::config& cfg, resource_options& o) {
    const auto io = co_await asio::this_coro::executor;
    d.log = o.log;

    // 1. Connections (Amendment 15): channel_nats carries the a2a channel and the tool
    //    service, store_nats the JetStream stores, the queue and remote tools; without a
    //    broker they are one connection.
    conns::connect_options co;
    co.name = conns::connection_name(cfg.identity);
    co.executor = io;
    co.log = o.log;
    co.shared_delivery = true;  // every callback of these libraries copies and posts
    const bool channel_needs = o.channel_needs_nats.value_or(cfg.a2a_channel_enabled() || cfg.a2a_serving_enabled());
    const bool store_needs = stores_need_nats(cfg);
    if (o.broker) {
        d.broker = std::make_unique<conns::embedded_broker>(*o.broker);
        // The broker's token (Amendment 12) is presented like a context's.
        conns::nats_context local;
        local.name = "embedded";
        local.url = d.broker->url();
        local.token = o.broker->token;
        d.channel = conns::provider::owning(conns::connection::dial(local, co));
        d.summary.nats_context = "embedded";
        d.summary.nats_url = d.broker->url();
        if (store_needs) d.store = conns::provider::dial(cfg.nats_context, cfg.identity, co);
    } else if (channel_needs || store_needs) {
        d.channel = conns::provider::dial(cfg.nats_context, cfg.identity, co);
        d.store = conns::provider(*d.channel.nats());
        const auto& ctx = d.channel.nats()->context();
        d.summary.nats_context = ctx.name.empty() ? std::string("(default)") : ctx.name;
        d.summary.nats_url = d.channel.nats()->connected_url();
    }

    // 2. JetStream binds through the backends (nothing is created): the session store,
    //    then the memory store.
    runstate::context sctx;
    sctx.blocking = d.pool.get_executor();
    sctx.store_dir = o.store_dir;
    sctx.nats = d.store.nats();
    d.rt->sessions = runstate::make_store(cfg.harness.sessions.backend, cfg.harness.sessions.options_json, sctx);
    d.summary.sessions_backend = cfg.harness.sessions.backend;
    d.summary.sessions_location = d.rt->sessions->location();
    if (cfg.harness.memory.enabled) {
        memory::context mctx;
        mctx.blocking = d.pool.get_executor();
        mctx.store_dir = o.store_dir;
        mctx.identity = cfg.identity;
        mctx.nats = d.store.nats();
        d.rt->memory = memory::make_store(cfg.harness.memory.backend, cfg.harness.memory.options_json, mctx);
        d.summary.memory_backend = cfg.harness.memory.backend;
        d.summary.memory_location = d.rt->memory->location();
    }
    // The knowledge index, read-only and shared by every run (the agent offers its
    // built-ins when it is set). A missing index is not an error: searches say
    // index_not_built until `fisk-ai-serve knowledge index` builds it.
    if (cfg.harness.knowledge.enabled) {
        auto opened = knowledge::store::open(io, knowledge::store_options_from(io, cfg, o.store_dir));
        if (!opened) throw std::runtime_error(fmt::format("knowledge: {}", opened.error().message));
        d.rt->knowledge = std::move(*opened);
    }

    // 3. The provider (credentials, base URL).
    d.http = std::make_unique<net::http_client>(io);
    llm::provider_config pc;
    pc.name = cfg.llm.provider;
    pc.base_url = cfg.llm.base_url;
    pc.api_key_env = cfg.llm.api_key_env;
    pc.max_retries = cfg.llm.max_retries;
    pc.insecure_http = cfg.llm.insecure_http;
    pc.log = o.log;
    d.rt->provider = llm::make_provider(pc, io, *d.http);

    // 4. Application tools (introspection).
    toolkit::tool_list tools;
    if (!o.application.application_path.empty()) {
        auto loaded = co_await toolkit::load_application_tools(o.application);
        for (const auto& dropped : loaded.dropped) {
            d.log.debug(fmt::format("left out: {} ({})", dropped.command, dropped.reason));
        }
        tools = std::move(loaded.tools);
    }
    d.summary.application_tools = tools.size();

    // 5. Remote tools, strictly: an unreachable host or a collision refuses the start.
    if (!cfg.remote_tools.empty()) {
        auto timeout = std::chrono::duration_cast<std::chrono::steady_clock::duration>(cfg.llm.budget.call_timeout);
        if (timeout <= std::chrono::steady_clock::duration::zero()) timeout = std::chrono::seconds(30);
        auto link = std::make_shared<remote_link>();
        link->transport = std::make_unique<a2a_nats::nats_transport>(*d.store.nats(), io,
                                                                     a2a_nats::transport_options{timeout, o.log});
        link->client = std::make_unique<a2a::client>(*link->transport, a2a::client_options{cfg.identity, timeout});
        d.remote = link;
        std::set<std::string> taken;
        for (const auto& t : tools) taken.insert(t->name());
        auto imported =
            co_await remotetools::discover_and_import(std::shared_ptr<a2a::client>(link, link->client.get()),
                                                      remotetools::hosts_from_config(cfg), std::move(taken));
        for (const auto& w : imported.warnings()) d.warn(w);
        remotetools::require_complete(imported, cfg.nats_context);
        d.summary.remote_tools = imported.tools.size();
        for (auto& t : imported.tools) tools.push_back(std::move(t));
    }

    // 6. MCP-client sessions, started once for the worker's life.
    for (const auto& server : cfg.mcp_servers) {
        // Named, not a braced temporary in the co_await expression: GCC 12 copies such an
        // aggregate into the coroutine's frame bit for bit, so its string's short buffer is
        // freed from the wrong frame when open() fails before moving it (a crash at startup).
        mcpclient::session_options session_options{std::string(client_version), o.log};
        auto opened = co_await mcpclient::session::open(server, std::move(session_options));
        if (!opened) throw std::runtime_error(opened.error());
        auto session = *opened;
        d.mcp.push_back(session);
        auto made = mcpclient::make_tools(session);
        d.summary.mcp_servers.push_back({server.name, std::string(session->transport_name()), made.size()});
        for (auto& t : made) tools.push_back(std::move(t));
    }

    // 7. Name collisions and "no tools", then the runtime.
    if (auto bad = check_tool_names(cfg, tools, o.config_path)) throw std::runtime_error(*bad);
    d.rt->tools = std::move(tools);
    d.rt->cfg = cfg;
    d.rt->configured = agent::limits::from(cfg);
    d.rt->config_file = o.config_path;  // the agent's own "no tools" text names it, as Go
}

}  // namespace

asio::awaitable<std::shared_ptr<resources>> build_resources(const config::config& cfg, resource_options options) {
    auto built = std::make_shared<resources>(std::make_unique<resources::impl>());
    std::exception_ptr failure;
    try {
        co_await build_into(*built->impl_, cfg, options);
    } catch (...) {
        failure = std::current_exception();
    }
    if (failure) {
        co_await built->close();
        std::rethrow_exception(failure);
    }
    co_return built;
}

}  // namespace fiskai::serve
