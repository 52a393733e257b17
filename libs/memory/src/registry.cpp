#include <fiskai/memory/store.hpp>

#include "file_backend.hpp"

#include <fiskai/memory/kv_store.hpp>

#include <fiskai/gocompat/backend_registry.hpp>
#include <fiskai/gocompat/quote.hpp>
#include <fiskai/gocompat/strict_json.hpp>

#include <boost/json.hpp>

#include <fmt/format.h>

namespace fiskai::memory {

namespace {

gocompat::backend_registry<factory>& the_registry() {
    static gocompat::backend_registry<factory> r("memory",
                                                 {{std::string(backend_file), {detail::file_store_factory, false}},
                                                  {std::string(backend_jetstream), {make_kv_store, true}}});
    return r;
}

}  // namespace

void register_backend(std::string name, factory make, bool requires_nats) {
    the_registry().add(std::move(name), std::move(make), requires_nats);
}

std::vector<std::string> backends() { return the_registry().names(); }

bool needs_nats(std::string_view backend) { return the_registry().needs_nats(backend); }

std::shared_ptr<store> make_store(std::string_view backend, std::string_view options_json, const context& ctx) {
    auto make = the_registry().find(backend);
    if (!make) {
        throw startup_error(fmt::format("unknown memory backend {}: known backends are [{}]", gocompat::quote(backend),
                                        fmt::join(the_registry().names(), " ")));
    }
    if (!ctx.blocking) throw startup_error("memory store: no blocking executor was given (context.blocking)");
    return (*make)(options_json, ctx);
}

boost::json::object decode_options(std::string_view options_json, std::string_view what,
                                   const std::vector<std::string_view>& allowed) {
    auto decoded = gocompat::decode_strict_object(options_json, allowed);
    if (!decoded) throw startup_error(fmt::format("invalid {} options: {}", what, decoded.error()));
    return std::move(*decoded);
}

}  // namespace fiskai::memory
