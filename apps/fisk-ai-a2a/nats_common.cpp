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

std::string go_duration_ms(std::chrono::steady_clock::duration d) {
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(d + std::chrono::microseconds(500)).count();
    if (ms == 0) return "0s";
    if (ms < 1000) return fmt::format("{}ms", ms);
    const auto minutes = ms / 60000;
    const auto rest = ms % 60000;
    std::string secs = fmt::format("{}", rest / 1000);
    if (rest % 1000 != 0) {
        std::string frac = fmt::format("{:03}", rest % 1000);
        while (frac.back() == '0') frac.pop_back();
        secs += "." + frac;
    }
    return minutes > 0 ? fmt::format("{}m{}s", minutes, secs) : secs + "s";
}

}  // namespace fiskai::a2a::app
