#pragma once
// The agent's long-term memory (Go's internal/memory): keyed markdown notes with a
// one-line description, shared by every process using the same backing store. Key rules,
// limits, texts and the stored value format are Go's, identical for every backend.
//
// Read authority (the revision a run read, which an overwrite must match on the KV
// backend) and the tracked entry count live in a per-run view, not in the shared store:
// one run's read never authorizes another run's overwrite (fix for Go risk 7.8).
//
// Threading: as runstate, every method runs on the caller's executor and blocking work on
// the context's blocking pool; an in-flight write is completed, not abandoned, when the
// awaiting coroutine is cancelled.

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/json/object.hpp>
#include <boost/system/error_code.hpp>
#include <boost/system/result.hpp>

#include <cstddef>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace fiskai::conns {
class connection;
}  // namespace fiskai::conns

namespace fiskai::memory {

inline constexpr std::string_view backend_file = "file";
inline constexpr std::string_view backend_jetstream = "jetstream";

inline constexpr std::size_t max_key_chars = 200;
inline constexpr std::size_t max_description_runes = 500;
inline constexpr std::size_t max_content_bytes = 65536;
inline constexpr std::size_t max_entries = 1024;
// The bound a backing store must accept for one serialized value: 65536 + 2 x 2000 + 64.
inline constexpr std::size_t max_entry_bytes = 69600;

enum class errc {
    exists = 1,  // memory key already exists
    not_exist,   // memory key does not exist
    stale,       // memory changed since it was read (KV backend, guard on)
    invalid_key,
    invalid_write,  // empty description, content too large
    full,           // memory is full
    storage,        // the backing store failed; the message names the operation
};

[[nodiscard]] const boost::system::error_category& memory_category() noexcept;
[[nodiscard]] boost::system::error_code make_error_code(errc e) noexcept;

struct error {
    boost::system::error_code code;
    std::string message;  // the full text to show (Go's)

    friend bool operator==(const error&, const error&) = default;
};

// An error with `message` as its full text.
[[nodiscard]] error make_error(errc e, std::string message);
// The code's own text: `memory key already exists`, `memory key does not exist`,
// `memory changed since it was read`.
[[nodiscard]] error make_error(errc e);

[[noreturn]] void throw_exception_from_error(const error& e, const boost::source_location& loc);

template <class T>
using result = boost::system::result<T, error>;

// A store that cannot be built. what() is the full text for the operator.
class startup_error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

struct item {
    std::string key;
    std::string description;

    friend bool operator==(const item&, const item&) = default;
};

struct entry {
    std::string description;
    std::string content;

    friend bool operator==(const entry&, const entry&) = default;
};

// Go's texts: `memory key must not be empty`, `memory key is too long: at most 200
// characters`, `memory key "k" is invalid: use only letters, digits and '.', '_', '=' or
// '-' (no slashes or spaces)`, `... it must not start or end with '.'`, `... it must not
// contain '..'`.
[[nodiscard]] result<void> validate_key(std::string_view key);

// Key first, then the description normalized (controls to spaces, whitespace runs to one
// space, trimmed, at most 500 runes; empty: `a memory description must not be empty`),
// then the content size (`memory content is too large: N bytes, limit is 65536`).
// Returns the normalized description.
[[nodiscard]] result<std::string> validate_write(std::string_view key, std::string_view description,
                                                 std::string_view content);

// `memory is full: N entries, limit is 1024; delete an entry before creating another`
// when count >= 1024.
[[nodiscard]] result<void> check_capacity(std::size_t count);

// The stored value: `---\n` + YAML `description: ...` + `---\n\n` + content.
[[nodiscard]] std::string serialize(std::string_view description, std::string_view content);
// Go's lenient parse (see docs): never fails; a value without a valid header is all body.
[[nodiscard]] entry parse(std::string_view value);

// One run's access to the store. Not safe for concurrent use (one run owns it).
class view {
public:
    virtual ~view() = default;

    // Every entry, sorted by key. Never grants read authority.
    virtual boost::asio::awaitable<result<std::vector<item>>> list() = 0;
    // errc::not_exist when absent. Grants read authority for what was read.
    virtual boost::asio::awaitable<result<entry>> read(std::string key) = 0;
    // Create (overwrite false: errc::exists over a live key, errc::full at the limit) or
    // overwrite. Validation (validate_write) comes first, before any I/O.
    virtual boost::asio::awaitable<result<void>> write(std::string key, std::string description, std::string content,
                                                       bool overwrite) = 0;
    // Whether it existed. Idempotent.
    virtual boost::asio::awaitable<result<bool>> remove(std::string key) = 0;
};

class store {
public:
    virtual ~store() = default;
    // A fresh per-run view with no read authority.
    [[nodiscard]] virtual std::unique_ptr<view> open_view() = 0;
    // What the startup banner shows after the backend name: the directory or the bucket.
    [[nodiscard]] virtual std::string location() const = 0;
};

struct context {
    boost::asio::any_io_executor blocking;  // required
    std::string store_dir;                  // empty: relative directories are under the working directory
    std::string identity;                   // the agent identity (default directory / KV prefix)
    conns::connection* nats = nullptr;      // borrowed, never closed
};

// Builds a store from raw options JSON (empty text: no options); throws startup_error.
using factory = std::function<std::shared_ptr<store>(std::string_view options_json, const context& ctx)>;

void register_backend(std::string name, factory make, bool requires_nats = false);
[[nodiscard]] std::vector<std::string> backends();
[[nodiscard]] bool needs_nats(std::string_view backend);
// Unknown: `unknown memory backend "<x>": known backends are [file jetstream]`.
[[nodiscard]] std::shared_ptr<store> make_store(std::string_view backend, std::string_view options_json,
                                                const context& ctx);

// Strict options decoding: throws startup_error `invalid <what> options: ...`.
[[nodiscard]] boost::json::object decode_options(std::string_view options_json, std::string_view what,
                                                 const std::vector<std::string_view>& allowed);

// The file backend: `<dir>/<key>.md`; the directory is `options.directory` or
// `memory/<identity>`, relative ones rebased under store_dir when set. make_file_store
// uses `directory` verbatim (created 0700).
[[nodiscard]] std::shared_ptr<store> make_file_store(std::string directory, boost::asio::any_io_executor blocking);

}  // namespace fiskai::memory

template <>
struct boost::system::is_error_code_enum<fiskai::memory::errc> : std::true_type {};
