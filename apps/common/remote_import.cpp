#include "remote_import.hpp"

#include "app_support.hpp"

#include <fiskai/a2a/client.hpp>
#include <fiskai/a2a_nats/peer_client.hpp>
#include <fiskai/gocompat/duration.hpp>
#include <fiskai/gocompat/json.hpp>
#include <fiskai/gocompat/quote.hpp>
#include <fiskai/remotetools/config_hosts.hpp>

#include <boost/asio/this_coro.hpp>
#include <boost/json/serialize.hpp>

#include <fmt/format.h>

namespace fiskai::app {

std::vector<remotetools::host_config> remote_hosts(const config::config& cfg) {
    return remotetools::hosts_from_config(cfg);
}

std::shared_ptr<a2a::client> connect_peers(const config::config& cfg, boost::asio::any_io_executor ex) {
    auto timeout = std::chrono::duration_cast<std::chrono::steady_clock::duration>(cfg.llm.budget.call_timeout);
    if (timeout <= std::chrono::steady_clock::duration::zero()) timeout = std::chrono::seconds(30);
    return a2a_nats::connect_peer_client(std::move(ex), {cfg.nats_context, cfg.identity, timeout, process_logger()});
}

boost::asio::awaitable<lenient_import> import_remote_tools_leniently(const config::config& cfg,
                                                                     const toolkit::tool_list& local) {
    lenient_import out;
    if (cfg.remote_tools.empty()) co_return out;
    std::shared_ptr<a2a::client> client;
    try {
        client = connect_peers(cfg, co_await boost::asio::this_coro::executor);
    } catch (const std::exception& e) {
        out.connect_error = e.what();
        co_return out;
    }
    std::set<std::string> taken;
    for (const auto& t : local) taken.insert(t->name());
    out.result = co_await remotetools::discover_and_import(std::move(client), remote_hosts(cfg), std::move(taken));
    co_return out;
}

boost::json::array imported_tools_json(const remotetools::import_result& r) {
    boost::json::array out;
    for (const auto& h : r.hosts) {
        for (const auto& name : h.imported) {
            for (const auto& t : r.tools) {
                if (t->name() != name) continue;
                auto j = tool_info_json(*t);
                j["remote"] = true;
                j["host"] = h.name;
                out.push_back(std::move(j));
            }
        }
    }
    return out;
}

std::string rtt_text(std::chrono::nanoseconds d) {
    return gocompat::format_duration(std::chrono::round<std::chrono::milliseconds>(d));
}

std::string host_status_line(const remotetools::host_outcome& h, const std::string& nats_context) {
    if (h.error) {
        return fmt::format("  {}: UNAVAILABLE via context {} after {}: {}", h.name,
                           gocompat::quote(nats_context.empty() ? "(selected)" : nats_context), rtt_text(h.rtt),
                           *h.error);
    }
    return fmt::format("  {} ({}): reachable in {}, advertised {} tool(s), imported {} as {}", h.name, h.version,
                       rtt_text(h.rtt), h.advertised, h.imported.size(), gocompat::quote(h.alias));
}

}  // namespace fiskai::app
