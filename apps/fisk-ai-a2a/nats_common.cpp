#include "nats_commands.hpp"

#include "app_support.hpp"

#include <fmt/format.h>

namespace fiskai::a2a::app {

a2a::logger stderr_logger() {
    return [](a2a::log_level level, std::string_view text) {
        switch (level) {
        case a2a::log_level::debug: return;
        case a2a::log_level::info: fiskai::app::log_info(text); return;
        case a2a::log_level::warn: fiskai::app::log_warning(text); return;
        case a2a::log_level::error: fmt::print(stderr, "error: {}\n", text); return;
        }
    };
}

conns::logger stderr_conns_logger() {
    return [](conns::log_level level, std::string_view text) {
        if (level == conns::log_level::debug) return;
        if (level >= conns::log_level::warn) {
            fiskai::app::log_warning(text);
        } else {
            fiskai::app::log_info(text);
        }
    };
}

conns::connect_options connection_options(std::string_view identity, boost::asio::any_io_executor executor) {
    conns::connect_options o;
    o.name = conns::connection_name(identity);
    o.executor = std::move(executor);
    o.log = stderr_conns_logger();
    return o;
}

}  // namespace fiskai::a2a::app
