#pragma once
// Importing the tools of the config's remote_tools hosts over NATS: the connection, the
// a2a client, discovery of every host, and tools that call back through the same client.
// Shared by fisk-ai-mcp (serve_remote_tools) and fisk-ai-a2a info.

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

namespace fiskai::app {

// The NATS connection, transport and client the imported tools call through. Kept alive
// by every imported tool; closed when the last one goes.
struct remote_link;

// Dials the config's nats_context (the selected context when it is empty). Throws
// conns::connect_error or conns::context_error naming the context.
[[nodiscard]] std::shared_ptr<remote_link> open_remote_link(const config::config& cfg, boost::asio::any_io_executor ex,
                                                            std::chrono::steady_clock::duration timeout);

// Discovers every host in config order, then filters and names their tools. Host failures
// are recorded in the result; call remotetools::require_complete for a strict import.
boost::asio::awaitable<remotetools::import_result> import_remote_tools(std::shared_ptr<remote_link> link,
                                                                       const config::config& cfg,
                                                                       std::set<std::string> taken);

// For `info`: imports every configured host's tools on a private io_context, leniently.
// A host that does not answer, or a connection that cannot be made, is a status to show.
struct lenient_import {
    std::optional<remotetools::import_result> result;  // empty when no connection was made
    std::string connect_error;
};
[[nodiscard]] lenient_import import_remote_tools_leniently(const config::config& cfg, const toolkit::tool_list& local);

// The imported tools as `info --json` lists them: each tool's info object with
// `remote: true` and the `host` serving it.
[[nodiscard]] boost::json::array imported_tools_json(const remotetools::import_result& r);

// One line per host for `info`: reachable with version, counts and alias, or UNAVAILABLE.
[[nodiscard]] std::string host_status_line(const remotetools::host_outcome& h, const std::string& nats_context);

// Go's Duration.String() rounded to milliseconds, for round-trip times.
[[nodiscard]] std::string rtt_text(std::chrono::nanoseconds d);

}  // namespace fiskai::app
