#include <fiskai/runstate/file_store.hpp>
#include <fiskai/runstate/jetstream_store.hpp>
#include <fiskai/runstate/store.hpp>

#include "internal.hpp"

#include <fiskai/gocompat/quote.hpp>
#include <fiskai/gocompat/strict_json.hpp>

#include <boost/json.hpp>

#include <fmt/format.h>

#include <map>
#include <mutex>
#include <stdexcept>

namespace fiskai::runstate {

boost::asio::awaitable<result<run_state>> store::load(std::string id) {
    auto records = co_await read(std::move(id));
    if (!records) co_return records.error();
    co_return fold(*records);
}

namespace {

struct registration {
    factory make;
    bool requires_nats = false;
};

struct registry {
    std::mutex mutex;
    std::map<std::string, registration, std::less<>> backends;

    registry() {
        backends.emplace(std::string(backend_file), registration{detail::file_store_factory, false});
        backends.emplace(std::string(backend_jetstream), registration{make_jetstream_store, true});
    }
};

registry& the_registry() {
    static registry r;
    return r;
}

}  // namespace

void register_backend(std::string name, factory make, bool requires_nats) {
    if (name.empty()) throw std::logic_error("runstate: register_backend called with an empty backend name");
    if (!make) throw std::logic_error("runstate: register_backend called with an empty factory for backend " + name);
    auto& r = the_registry();
    std::lock_guard lock(r.mutex);
    if (r.backends.contains(name))
        throw std::logic_error("runstate: register_backend called twice for backend " + name);
    r.backends.emplace(std::move(name), registration{std::move(make), requires_nats});
}

std::vector<std::string> backends() {
    auto& r = the_registry();
    std::lock_guard lock(r.mutex);
    std::vector<std::string> out;
    for (const auto& [name, reg] : r.backends) out.push_back(name);
    return out;
}

bool needs_nats(std::string_view backend) {
    auto& r = the_registry();
    std::lock_guard lock(r.mutex);
    const auto it = r.backends.find(backend);
    return it != r.backends.end() && it->second.requires_nats;
}

std::shared_ptr<store> make_store(std::string_view backend, std::string_view options_json, const context& ctx) {
    factory make;
    {
        auto& r = the_registry();
        std::lock_guard lock(r.mutex);
        const auto it = r.backends.find(backend);
        if (it == r.backends.end()) {
            std::vector<std::string> names;
            for (const auto& [name, reg] : r.backends) names.push_back(name);
            throw startup_error(fmt::format("unknown session backend {}: known backends are [{}]",
                                            gocompat::quote(backend), fmt::join(names, " ")));
        }
        make = it->second.make;
    }
    if (!ctx.blocking) throw startup_error("session store: no blocking executor was given (context.blocking)");
    return make(options_json, ctx);
}

boost::json::object decode_options(std::string_view options_json, std::string_view what,
                                   const std::vector<std::string_view>& allowed) {
    auto decoded = gocompat::decode_strict_object(options_json, allowed);
    if (!decoded) throw startup_error(fmt::format("invalid {} options: {}", what, decoded.error()));
    return std::move(*decoded);
}

}  // namespace fiskai::runstate
