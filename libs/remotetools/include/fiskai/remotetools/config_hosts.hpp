#pragma once
// The config's remote_tools entries as import hosts: the one conversion every command that
// imports remote tools uses (fisk-ai-mcp, fisk-ai-a2a info, fisk-ai-serve).

#include <fiskai/config/config.hpp>
#include <fiskai/remotetools/remotetools.hpp>

#include <vector>

namespace fiskai::remotetools {

[[nodiscard]] std::vector<host_config> hosts_from_config(const config::config& cfg);

}  // namespace fiskai::remotetools
