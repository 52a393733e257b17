#include <fiskai/remotetools/config_hosts.hpp>

namespace fiskai::remotetools {

std::vector<host_config> hosts_from_config(const config::config& cfg) {
    std::vector<host_config> hosts;
    for (const auto& h : cfg.remote_tools)
        hosts.push_back({h.name, h.alias, h.include.tools, h.include.tags, h.exclude.tools});
    return hosts;
}

}  // namespace fiskai::remotetools
