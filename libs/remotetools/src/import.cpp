// Discovery and calls over an a2a client: the I/O half of importing, on top of the pure
// policy in remotetools.cpp.

#include <fiskai/remotetools/remotetools.hpp>

#include <fiskai/a2a/client.hpp>
#include <fiskai/gocompat/json.hpp>

#include <stdexcept>

namespace fiskai::remotetools {

boost::asio::awaitable<import_result> discover_and_import(std::shared_ptr<a2a::client> client,
                                                          std::vector<host_config> hosts, std::set<std::string> taken) {
    std::vector<discovery> found;
    for (const auto& h : hosts) {
        discovery d;
        const auto start = std::chrono::steady_clock::now();
        auto card = co_await client->discover(h.name);
        d.rtt = std::chrono::steady_clock::now() - start;
        if (!card) {
            d.error = card.error().message;
        } else {
            d.version = card->version;
            for (const auto& t : card->tools) {
                descriptor desc{t.name, t.description, std::nullopt};
                if (t.input_schema) desc.input_schema = t.input_schema->to_value();
                d.tools.push_back(std::move(desc));
            }
        }
        found.push_back(std::move(d));
    }
    // Each tool holds the client: the connection lives as long as any of them.
    invoker call = [client](std::string host, std::string tool,
                            boost::json::value input) -> boost::asio::awaitable<tool_reply> {
        const std::string text = input.is_null() ? std::string() : gocompat::to_json(input);
        auto reply = co_await client->invoke(std::move(host), std::move(tool), text);
        if (!reply) throw std::runtime_error(reply.error().message);
        tool_reply r;
        r.is_error = reply->is_error;
        r.output = reply->output;
        if (reply->exec) {
            r.command = reply->exec->command;
            r.exit_code = static_cast<int>(reply->exec->exit_code);
            r.truncated = reply->exec->truncated;
        }
        co_return r;
    };
    co_return import_tools(hosts, found, taken, std::move(call));
}

}  // namespace fiskai::remotetools
