#pragma once
// The JetStream KV memory backend (`jetstream`): each memory is a value in an existing KV
// bucket under `<prefix>.<key>` (or `<key>` with an empty prefix), in the same frontmatter
// format as the file backend. Read authority (the revision each key was read at) and the
// tracked entry count live in the per-run view (store::open_view()), so one run's read
// never authorizes another run's overwrite. See docs/journal.md.

#include <fiskai/memory/store.hpp>

#include <boost/asio/awaitable.hpp>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace fiskai::memory {

// The smallest max value size a bucket may have: a full entry (max_entry_bytes) plus the
// headers create and update add (`Nats-Expected-Last-Subject-Sequence`), which the server
// counts against the limit (Amendment 4).
inline constexpr std::int64_t kv_min_value_size = 70000;

struct kv_store_options {
    std::string bucket;                 // required; must already exist
    std::optional<std::string> prefix;  // none: the agent identity; "": a flat keyspace
    bool no_require_read_before_update = false;
    std::chrono::milliseconds bind_timeout{10000};
    std::chrono::milliseconds op_timeout{15000};
};

// Binds to the bucket and checks it; throws startup_error with the texts of Go's backend
// (a missing bucket names the `nats kv add ...` to run; nothing is provisioned).
[[nodiscard]] boost::asio::awaitable<std::shared_ptr<store>> bind_kv_store(kv_store_options options,
                                                                           const context& ctx);

// The registry's factory (registered as `jetstream`, needing NATS): decodes `{"bucket", "prefix", "no_require_read_before_update"}`
// strictly, then binds on a private io_context (blocks the caller at most the bind
// timeout: call it at start-up).
[[nodiscard]] std::shared_ptr<store> make_kv_store(std::string_view options_json, const context& ctx);

}  // namespace fiskai::memory
