#pragma once
// Importing peer agents' tools. Pure policy over what discovery returned: per-host
// filters, naming that is the same for the same inputs whatever the host order, trust
// rules for the untrusted descriptors, and mapping a remote reply back to the result a
// local command tool returns. The transport is a function the caller supplies.

#include <fiskai/toolkit/tool.hpp>

#include <boost/asio/awaitable.hpp>
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

namespace fiskai::a2a {
class client;
}  // namespace fiskai::a2a

namespace fiskai::remotetools {

// One remote_tools entry of the config.
struct host_config {
    std::string name;                        // the peer's identity
    std::string alias;                       // prefix used only when a name clashes; defaults to name
    std::vector<std::string> include_tools;  // RE2, unanchored
    std::vector<std::string> include_tags;   // ignored (discovery carries no tags), with a warning
    std::vector<std::string> exclude_tools;

    [[nodiscard]] const std::string& effective_alias() const { return alias.empty() ? name : alias; }
};

// A tool as the peer's agent card describes it. Untrusted.
struct descriptor {
    std::string name;
    std::string description;
    std::optional<boost::json::value> input_schema;  // must be an object when present
};

// What discovering one host gave: its card, or why it failed.
struct discovery {
    std::string version;
    std::vector<descriptor> tools;
    std::optional<std::string> error;
    std::chrono::nanoseconds rtt{0};
};

// The peer's reply to one tool call, already decoded.
struct tool_reply {
    bool is_error = false;
    std::string output;
    std::optional<std::string> command;  // exec.command, when the peer ran a command
    int exit_code = 0;
    bool truncated = false;
};

// Calls `tool` (the peer's own name) on `host` with `input`; throws std::runtime_error
// on a transport or protocol failure.
using invoker =
    std::function<boost::asio::awaitable<tool_reply>(std::string host, std::string tool, boost::json::value input)>;

// How one host fared.
struct host_outcome {
    std::string name;
    std::string alias;
    std::string version;
    std::optional<std::string> error;
    std::chrono::nanoseconds rtt{0};
    std::size_t advertised = 0;
    std::vector<std::string> imported;  // local names
    std::vector<std::string> skipped;   // "<bare> (<why>)"
    bool include_tags_ignored = false;
};

struct import_result {
    toolkit::tool_list tools;  // host order, then advertised order
    std::vector<host_outcome> hosts;
    // Set when two or more tools claimed one final name; every one of them was skipped.
    std::optional<std::string> collision_error;

    // Warning lines for stderr (ignored include tags, skipped tools), host by host.
    [[nodiscard]] std::vector<std::string> warnings() const;
};

class import_error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// Filters each host's descriptors, names them in three passes (count bare names, choose
// final names, count final names, only then build) and builds the tools. `taken` are the
// names local tools already hold. Host errors are recorded, not thrown.
[[nodiscard]] import_result import_tools(const std::vector<host_config>& hosts, const std::vector<discovery>& found,
                                         const std::set<std::string>& taken, invoker call);

// Discovers every host in order through `client`, then filters and names their tools with
// import_tools. The tools call back through the same client, and keep it alive. Host
// failures are recorded; call require_complete for a strict import.
[[nodiscard]] boost::asio::awaitable<import_result> discover_and_import(std::shared_ptr<a2a::client> client,
                                                                        std::vector<host_config> hosts,
                                                                        std::set<std::string> taken);

// A run or a server depends on the tools: any host error or collision is an error.
// Throws import_error naming the host and its context, or the collisions.
void require_complete(const import_result& r, const std::string& nats_context);

// The result shape of a local command tool, byte for byte, for a remote reply.
[[nodiscard]] toolkit::outcome outcome_of(const tool_reply& reply);

// Applies one host's name filters. Throws import_error for an invalid pattern.
[[nodiscard]] std::vector<descriptor> filter_descriptors(const host_config& host, const std::vector<descriptor>& tools,
                                                         bool& include_tags_ignored);

}  // namespace fiskai::remotetools
