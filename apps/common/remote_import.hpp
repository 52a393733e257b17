#pragma once
// The config's side of importing remote tools (the work itself is in libs/remotetools
// and libs/a2a-nats), and how `info` shows the result. Shared by fisk-ai-mcp
// (serve_remote_tools) and fisk-ai-a2a info.

#include <fiskai/config/config.hpp>
#include <fiskai/remotetools/remotetools.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/json/array.hpp>

#include <chrono>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace fiskai::a2a {
class client;
}  // namespace fiskai::a2a

namespace fiskai::app {

// The config's remote_tools entries as remotetools hosts.
[[nodiscard]] std::vector<remotetools::host_config> remote_hosts(const config::config& cfg);

// An a2a client over the config's nats_context (the selected context when empty) as this
// agent's identity; it owns its connection. Throws conns::connect_error or
// conns::context_error naming the context.
[[nodiscard]] std::shared_ptr<a2a::client> connect_peers(const config::config& cfg, boost::asio::any_io_executor ex);

// For `info`: imports every configured host's tools leniently, on the caller's executor.
// A host that does not answer, or a connection that cannot be made, is a status to show.
struct lenient_import {
    std::optional<remotetools::import_result> result;  // empty when no connection was made
    std::string connect_error;
};
[[nodiscard]] boost::asio::awaitable<lenient_import> import_remote_tools_leniently(const config::config& cfg,
                                                                                   const toolkit::tool_list& local);

// The imported tools as `info --json` lists them: each tool's info object with
// `remote: true` and the `host` serving it.
[[nodiscard]] boost::json::array imported_tools_json(const remotetools::import_result& r);

// One line per host for `info`: reachable with version, counts and alias, or UNAVAILABLE.
[[nodiscard]] std::string host_status_line(const remotetools::host_outcome& h, const std::string& nats_context);

// Go's Duration.String() rounded to milliseconds, for round-trip times.
[[nodiscard]] std::string rtt_text(std::chrono::nanoseconds d);

}  // namespace fiskai::app
