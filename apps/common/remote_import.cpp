#include "remote_import.hpp"

#include "app_support.hpp"

#include <fiskai/a2a/client.hpp>
#include <fiskai/a2a_nats/transport.hpp>
#include <fiskai/gocompat/duration.hpp>
#include <fiskai/gocompat/json.hpp>
#include <fiskai/gocompat/quote.hpp>
#include <fiskai/conns/connection.hpp>
#include <fiskai/conns/context.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/json/serialize.hpp>

#include <fmt/format.h>

namespace fiskai::app {

struct remote_link {
    std::unique_ptr<conns::connection> connection;
    std::unique_ptr<a2a_nats::nats_transport> transport;
    std::unique_ptr<a2a::client> client;
};

std::shared_ptr<remote_link> open_remote_link(const config::config& cfg, boost::asio::any_io_executor ex,
                                              std::chrono::steady_clock::duration timeout) {
    auto link = std::make_shared<remote_link>();
    const auto ctx = conns::load_context(cfg.nats_context);
    conns::connect_options o;
    o.name = conns::connection_name(cfg.identity);
    link->connection = conns::connection::dial(ctx, o);
    link->transport = std::make_unique<a2a_nats::nats_transport>(*link->connection, ex, a2a_nats::transport_options{timeout, {}});
    link->client = std::make_unique<a2a::client>(*link->transport, a2a::client_options{cfg.identity, timeout});
    return link;
}

boost::asio::awaitable<remotetools::import_result> import_remote_tools(std::shared_ptr<remote_link> link,
                                                                       const config::config& cfg,
                                                                       std::set<std::string> taken) {
    std::vector<remotetools::host_config> hosts;
    std::vector<remotetools::discovery> found;
    for (const auto& h : cfg.remote_tools) {
        hosts.push_back({h.name, h.alias, h.include.tools, h.include.tags, h.exclude.tools});
        remotetools::discovery d;
        const auto start = std::chrono::steady_clock::now();
        auto card = co_await link->client->discover(h.name);
        d.rtt = std::chrono::steady_clock::now() - start;
        if (!card) {
            d.error = card.error().message;
        } else {
            d.version = card->version;
            for (const auto& t : card->tools) {
                remotetools::descriptor desc{t.name, t.description, std::nullopt};
                if (t.input_schema) desc.input_schema = t.input_schema->to_value();
                d.tools.push_back(std::move(desc));
            }
        }
        found.push_back(std::move(d));
    }
    // The tools hold the link: the connection lives as long as any of them.
    remotetools::invoker call = [link](std::string host, std::string tool,
                                       boost::json::value input) -> boost::asio::awaitable<remotetools::tool_reply> {
        const std::string text = input.is_null() ? std::string() : gocompat::to_json(input);
        auto reply = co_await link->client->invoke(std::move(host), std::move(tool), text);
        if (!reply) throw std::runtime_error(reply.error().message);
        remotetools::tool_reply r;
        r.is_error = reply->is_error;
        r.output = reply->output;
        if (reply->exec) {
            r.command = reply->exec->command;
            r.exit_code = static_cast<int>(reply->exec->exit_code);
            r.truncated = reply->exec->truncated;
        }
        co_return r;
    };
    co_return remotetools::import_tools(hosts, found, taken, std::move(call));
}

lenient_import import_remote_tools_leniently(const config::config& cfg, const toolkit::tool_list& local) {
    lenient_import out;
    if (cfg.remote_tools.empty()) return out;
    boost::asio::io_context ioc;
    auto timeout = std::chrono::duration_cast<std::chrono::steady_clock::duration>(cfg.llm.budget.call_timeout);
    if (timeout <= std::chrono::steady_clock::duration::zero()) timeout = std::chrono::seconds(30);
    std::shared_ptr<remote_link> link;
    try {
        link = open_remote_link(cfg, ioc.get_executor(), timeout);
    } catch (const std::exception& e) {
        out.connect_error = e.what();
        return out;
    }
    std::set<std::string> taken;
    for (const auto& t : local) taken.insert(t->name());
    auto f = boost::asio::co_spawn(ioc, import_remote_tools(link, cfg, taken), boost::asio::use_future);
    while (f.wait_for(std::chrono::seconds(0)) != std::future_status::ready) {
        if (ioc.stopped()) ioc.restart();
        ioc.run_one_for(std::chrono::milliseconds(100));
    }
    out.result = f.get();
    return out;
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
