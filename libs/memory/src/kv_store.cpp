// The memory KV backend: Go's bind checks, key layout and read-before-update guard, with
// the guard's revisions and the entry count held per view (Go risk 7.8 fixed).

#include <fiskai/memory/kv_store.hpp>

#include <fiskai/gocompat/duration.hpp>
#include <fiskai/gocompat/quote.hpp>
#include <fiskai/jetstream/context.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/json/value.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

namespace fiskai::memory {

namespace asio = boost::asio;
namespace js = fiskai::jetstream;
using gocompat::quote;

namespace {

struct shared_bucket {
    std::shared_ptr<js::context> js;
    js::kv_bucket bucket;
    std::string name;
    std::string prefix;
    bool require_read = true;
    std::chrono::milliseconds op_timeout{15000};

    [[nodiscard]] std::string storage_key(const std::string& key) const {
        return prefix.empty() ? key : prefix + "." + key;
    }
};

error storage(std::string text) { return make_error(errc::storage, std::move(text)); }

class kv_view final : public view {
public:
    explicit kv_view(std::shared_ptr<shared_bucket> b) : b_(std::move(b)) {}

    asio::awaitable<result<std::vector<item>>> list() override {
        auto items = co_await snapshot(false);
        if (!items) co_return items.error();
        std::sort(items->begin(), items->end(), [](const item& a, const item& b) { return a.key < b.key; });
        co_return items;
    }

    asio::awaitable<result<entry>> read(std::string key) override {
        if (auto valid = validate_key(key); !valid) co_return valid.error();
        const auto sk = b_->storage_key(key);
        auto got = co_await b_->bucket.get(sk);
        if (!got) {
            if (got.error().code == js::errc::not_found) co_return make_error(errc::not_exist);
            co_return storage(fmt::format("reading memory {}: {}", quote(key), got.error().message));
        }
        // Only a read grants overwrite authority: the index and list read values to show
        // keys, not on the model's behalf.
        revisions_[key] = got->revision;
        co_return parse(got->value);
    }

    asio::awaitable<result<void>> write(std::string key, std::string description, std::string content,
                                        bool overwrite) override {
        auto normalized = validate_write(key, description, content);
        if (!normalized) co_return normalized.error();
        std::string data = serialize(*normalized, content);
        const std::string sk = b_->storage_key(key);
        if (overwrite) co_return co_await overwrite_value(key, sk, std::move(data));

        // Create is atomic on existence (a live key refuses it, a deleted one does not);
        // the capacity check ahead of it is best-effort under concurrency, as Go's.
        auto count = co_await current_count();
        if (!count) co_return count.error();
        if (auto room = check_capacity(*count); !room) co_return room.error();
        auto rev = co_await b_->bucket.create(sk, std::move(data));
        if (!rev) {
            if (rev.error().err_code == js::api_wrong_last_sequence) co_return make_error(errc::exists);
            co_return storage(fmt::format("creating memory {}: {}", quote(key), rev.error().message));
        }
        // The view just wrote it: it may keep editing without reading it back.
        revisions_[key] = *rev;
        if (count_) ++*count_;
        co_return result<void>{};
    }

    asio::awaitable<result<bool>> remove(std::string key) override {
        if (auto valid = validate_key(key); !valid) co_return valid.error();
        const std::string sk = b_->storage_key(key);
        // Whether it existed is best-effort under concurrency (a get, then a delete).
        auto got = co_await b_->bucket.get(sk);
        if (!got) {
            if (got.error().code == js::errc::not_found) co_return false;
            co_return storage(fmt::format("deleting memory {}: {}", quote(key), got.error().message));
        }
        auto removed = co_await b_->bucket.remove(sk);
        if (!removed) co_return storage(fmt::format("deleting memory {}: {}", quote(key), removed.error().message));
        // A kept revision could authorize an overwrite of a re-created key.
        revisions_.erase(key);
        if (count_ && *count_ > 0) --*count_;
        co_return true;
    }

private:
    asio::awaitable<result<void>> overwrite_value(const std::string& key, const std::string& sk, std::string data) {
        if (!b_->require_read) {
            auto rev = co_await b_->bucket.put(sk, std::move(data));
            if (!rev) co_return storage(fmt::format("writing memory {}: {}", quote(key), rev.error().message));
            revisions_[key] = *rev;
            co_return result<void>{};
        }
        const auto known = revisions_.find(key);
        if (known == revisions_.end()) {
            co_return make_error(
                errc::stale, fmt::format("memory changed since it was read: memory {} was not read in this run; read "
                                         "it before overwriting",
                                         quote(key)));
        }
        auto rev = co_await b_->bucket.update(sk, std::move(data), known->second);
        if (!rev) {
            if (rev.error().err_code == js::api_wrong_last_sequence) {
                // Another writer moved it: a retry must read the new value first.
                revisions_.erase(key);
                co_return make_error(errc::stale,
                                     fmt::format("memory changed since it was read: memory {} changed since it was "
                                                 "read; read it again before overwriting",
                                                 quote(key)));
            }
            co_return storage(fmt::format("writing memory {}: {}", quote(key), rev.error().message));
        }
        revisions_[key] = *rev;
        co_return result<void>{};
    }

    // One server-side pass over this store's keyspace: every current key (deletes
    // ignored) up to the end-of-initial-values marker, de-duplicated, prefix stripped.
    asio::awaitable<result<std::vector<item>>> snapshot(bool meta_only) {
        js::watch_options o;
        o.ignore_deletes = true;
        o.meta_only = meta_only;
        const std::string subject = b_->prefix.empty() ? std::string(">") : b_->prefix + ".>";
        const std::string strip = b_->prefix.empty() ? std::string() : b_->prefix + ".";
        auto w = co_await b_->bucket.watch(subject, o);
        if (!w) co_return storage(fmt::format("listing memory: {}", w.error().message));
        std::set<std::string> seen;
        std::vector<item> items;
        for (;;) {
            auto ev = co_await w->next(b_->op_timeout);
            if (!ev) {
                // Closed or silent before the marker: a short list would hide memories and
                // undercount the cap, so it is an error.
                if (ev.error().code == js::errc::timed_out) {
                    co_return storage("listing memory: the watch timed out before the snapshot completed");
                }
                co_return storage("listing memory: watch closed before the snapshot completed");
            }
            if (!ev->entry) break;
            std::string key = ev->entry->key;
            if (!strip.empty() && key.rfind(strip, 0) == 0) key.erase(0, strip.size());
            if (key.empty() || !seen.insert(key).second) continue;
            std::string description;
            if (!meta_only) description = parse(ev->entry->value).description;
            items.push_back(item{std::move(key), std::move(description)});
        }
        w->stop();
        co_return items;
    }

    // Seeded from one keyspace scan, then tracked through this view's own creates and
    // deletes.
    asio::awaitable<result<std::size_t>> current_count() {
        if (count_) co_return *count_;
        auto items = co_await snapshot(true);
        if (!items) co_return items.error();
        count_ = items->size();
        co_return *count_;
    }

    std::shared_ptr<shared_bucket> b_;
    std::map<std::string, std::uint64_t> revisions_;
    std::optional<std::size_t> count_;
};

class kv_store final : public store {
public:
    explicit kv_store(std::shared_ptr<shared_bucket> b) : b_(std::move(b)) {}
    std::unique_ptr<view> open_view() override { return std::make_unique<kv_view>(b_); }
    [[nodiscard]] std::string location() const override { return fmt::format("KV bucket {}", quote(b_->name)); }

private:
    std::shared_ptr<shared_bucket> b_;
};

}  // namespace

asio::awaitable<std::shared_ptr<store>> bind_kv_store(kv_store_options options, const context& ctx) {
    if (options.bucket.empty()) {
        throw startup_error(
            "jetstream memory: options.bucket is required (the KV bucket name); the bucket must already exist");
    }
    std::string prefix = options.prefix.value_or(ctx.identity);
    if (!prefix.empty()) {
        if (auto valid = validate_key(prefix); !valid) {
            if (!options.prefix) {
                throw startup_error(fmt::format(
                    "jetstream memory: the agent identity {} cannot be used as a key prefix ({}); set options.prefix "
                    "to a legal value, or \"\" for a flat keyspace",
                    quote(ctx.identity), valid.error().message));
            }
            throw startup_error(fmt::format("jetstream memory: options.prefix {} is invalid: {}", quote(prefix),
                                            valid.error().message));
        }
    }
    if (!ctx.nats) {
        throw startup_error(
            "jetstream memory: requires a NATS connection but none is configured; set nats_context in the config to "
            "a context created with `nats context add`");
    }
    js::context_options jo;
    jo.default_timeout = options.op_timeout;
    auto jsc = std::make_shared<js::context>(*ctx.nats, ctx.blocking, jo);
    auto bound = co_await jsc->bind_kv(options.bucket, options.op_timeout);
    if (!bound) {
        if (bound.error().code == js::errc::not_found) {
            throw startup_error(fmt::format(
                "jetstream memory: KV bucket {} does not exist; create it first, e.g. `nats kv add {} --history=1 "
                "--max-value-size={}`",
                quote(options.bucket), options.bucket, kv_min_value_size));
        }
        if (bound.error().code == js::errc::no_responders) {
            throw startup_error(fmt::format("jetstream memory: cannot bind KV bucket {}: {}", quote(options.bucket),
                                            jsc->not_enabled_text()));
        }
        throw startup_error(
            fmt::format("jetstream memory: binding KV bucket {}: {}", quote(options.bucket), bound.error().message));
    }
    // The limits live on the bucket's KV_<bucket> stream (nats.c's kvStatus has no max
    // value size).
    auto status = co_await bound->status();
    if (!status) {
        throw startup_error(fmt::format("jetstream memory: reading status of KV bucket {}: {}", quote(options.bucket),
                                        status.error().message));
    }
    if (status->ttl.count() != 0) {
        throw startup_error(
            fmt::format("jetstream memory: KV bucket {} has a {} TTL set; stored memories would silently expire. "
                        "Recreate the bucket without a TTL for durable memory",
                        quote(options.bucket), gocompat::format_duration(status->ttl)));
    }
    if (status->max_value_size > 0 && status->max_value_size < kv_min_value_size) {
        throw startup_error(fmt::format(
            "jetstream memory: KV bucket {} max value size is {} bytes, below the {} byte memory entry limit; large "
            "memories would fail to write. Recreate the bucket with --max-value-size={}",
            quote(options.bucket), status->max_value_size, kv_min_value_size, kv_min_value_size));
    }
    auto shared = std::make_shared<shared_bucket>();
    shared->js = std::move(jsc);
    shared->bucket = std::move(*bound);
    shared->name = options.bucket;
    shared->prefix = std::move(prefix);
    shared->require_read = !options.no_require_read_before_update;
    shared->op_timeout = options.op_timeout;
    co_return std::make_shared<kv_store>(std::move(shared));
}

std::shared_ptr<store> make_kv_store(std::string_view options_json, const context& ctx) {
    const auto object =
        decode_options(options_json, "jetstream memory", {"bucket", "prefix", "no_require_read_before_update"});
    kv_store_options options;
    auto text = [](const boost::json::value& v, std::string_view name) {
        if (!v.is_string()) {
            throw startup_error(fmt::format("invalid jetstream memory options: \"{}\" must be a string", name));
        }
        return std::string(v.as_string());
    };
    if (const auto* v = object.if_contains("bucket")) options.bucket = text(*v, "bucket");
    if (const auto* v = object.if_contains("prefix")) options.prefix = text(*v, "prefix");
    if (const auto* v = object.if_contains("no_require_read_before_update")) {
        if (!v->is_bool()) {
            throw startup_error(
                "invalid jetstream memory options: \"no_require_read_before_update\" must be true or false");
        }
        options.no_require_read_before_update = v->as_bool();
    }
    asio::io_context io;
    auto done = asio::co_spawn(io, bind_kv_store(std::move(options), ctx), asio::use_future);
    io.run();
    return done.get();
}

}  // namespace fiskai::memory
