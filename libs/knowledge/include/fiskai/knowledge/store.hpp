#pragma once
// The knowledge index: one SQLite file (documents, heading-delimited chunks, an FTS5 index
// ranked by BM25, an optional table of L2-normalised vectors) under the configured
// directory, plus an advisory lock file serialising writers across processes (Go's
// internal/rag store, index, search and doctor).
//
// A store is used from coroutines on one io executor. Every SQLite call runs on the
// store's own one-thread pool (so the connection is never shared between threads) and
// resumes on the caller's executor; embeddings calls run on the io executor.

#include <fiskai/knowledge/embedder.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/system/result.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace fiskai::config {
struct config;
}  // namespace fiskai::config

namespace fiskai::knowledge {

inline constexpr int top_k_ceiling = 20;
inline constexpr int default_top_k = 5;
inline constexpr int default_max_injected_tokens = 6000;
// Files over this size are skipped by the walk.
inline constexpr std::uintmax_t max_index_file_bytes = 512 * 1024;

enum class errc {
    not_built,           // no index file yet (soft: searches report index_not_built)
    meta_mismatch,       // built with another embedding configuration; reindex
    dimension_mismatch,  // the model's dimension differs from the index's
    format_too_new,      // written by a newer fisk-ai
    locked,              // another writer holds the lock
    not_found,           // a citation or path that resolves to nothing
    bad_input,           // a path that does not exist, a malformed citation or cursor
    failed,              // SQLite, file system or embeddings failure
};

struct error {
    errc code = errc::failed;
    std::string message;
};

template <class T>
using result = boost::system::result<T, error>;

// Lets result<T>::value() throw: a std::runtime_error carrying the message.
[[noreturn]] void throw_exception_from_error(const error& e, const boost::source_location& loc);

enum class search_status { ok, index_not_built, index_empty };
[[nodiscard]] const char* to_string(search_status s) noexcept;

struct hit {
    std::int64_t chunk_id = 0;
    std::string citation;  // <path>#<ordinal>
    std::string path;
    int ordinal = 0;
    std::string heading_path;
    std::string content;
};

struct search_result {
    std::vector<hit> hits;
    search_status status = search_status::ok;
    // The vector tier is configured but this query used the lexical tier only.
    bool degraded = false;
    std::string degrade_reason;
};

struct document_info {
    std::string path;
    std::string title;
    int chunks = 0;
};

struct document_page {
    std::vector<document_info> documents;
    bool more = false;  // another page follows the last document
};

struct chunk_text {
    std::string heading_path;
    std::string content;
};

struct index_options {
    bool reindex = false;    // drop everything (and the vector table) and rebuild
    bool dry_run = false;    // count what would be done; write and embed nothing
    bool reconcile = false;  // delete documents not seen (a walk of the configured paths only)
    // Human progress notes (skipped files); never model-facing.
    std::function<void(const std::string&)> progress;
};

struct index_stats {
    int files = 0;
    int added = 0;
    int updated = 0;
    int skipped = 0;
    int removed = 0;
    int chunks = 0;
    int embeddings = 0;
    bool first_build = false;
};

struct manifest {
    int format_version = 0;
    std::string model;
    int dimension = 0;
    bool normalized = false;
    std::string query_prefix;
    std::string document_prefix;
};

struct store_stats {
    bool built = false;
    int documents = 0;
    int chunks = 0;
    int vectors = 0;
    manifest meta;
    std::string store_path;
    std::uintmax_t db_size = 0;
    std::uintmax_t wal_size = 0;
};

struct doctor_check {
    std::string name;
    bool ok = false;
    std::string detail;
    bool fatal = false;
};

struct doctor_report {
    std::string tier_line;
    std::vector<doctor_check> checks;
    [[nodiscard]] bool has_fatal() const noexcept;
};

struct store_options {
    // The store directory (the database is <directory>/knowledge.db).
    std::string directory;
    int top_k = default_top_k;
    int max_injected_tokens = default_max_injected_tokens;
    // Null: the lexical tier only.
    std::shared_ptr<embedder> embeddings;
};

// The options the config asks for: knowledge_directory() rebased under `store_dir` when
// relative and store_dir is set; the embedder built (and validated) from the config.
// Throws std::runtime_error on a malformed embeddings block.
[[nodiscard]] store_options store_options_from(boost::asio::any_io_executor io, const config::config& cfg,
                                               const std::string& store_dir = {});

// The tier line when the index reports `reason` as why vectors were not used.
[[nodiscard]] std::string degraded_tier_line(std::string_view reason);

// `<path>#<ordinal>`, and back; a malformed citation is a bad_input error naming it.
[[nodiscard]] std::string citation(std::string_view path, int ordinal);
[[nodiscard]] result<std::pair<std::string, int>> parse_citation(std::string_view citation);

// The files a walk of `roots` would index, with their size and mtime (nanoseconds), in
// path order: what the watcher compares between passes. A missing root gives nothing.
struct file_state {
    std::string path;
    std::int64_t size = 0;
    std::int64_t mtime = 0;
    friend bool operator==(const file_state&, const file_state&) = default;
};
[[nodiscard]] std::vector<file_state> scan_corpus(const std::vector<std::string>& roots, const std::string& store_dir);

class store : public std::enable_shared_from_this<store> {
public:
    struct impl;

    // Opens the index read-only. A missing index file is not an error: the store reports
    // not built. A stale or too-new index is refused. Never contacts the embeddings server.
    [[nodiscard]] static result<std::shared_ptr<store>> open(boost::asio::any_io_executor io, store_options o);
    // Opens (creating) the index for writing and takes the writer lock, failing with
    // errc::locked when another writer holds it. The lock is held until the store goes.
    [[nodiscard]] static result<std::shared_ptr<store>> open_writer(boost::asio::any_io_executor io, store_options o);

    explicit store(std::unique_ptr<impl> p);
    ~store();
    store(const store&) = delete;
    store& operator=(const store&) = delete;

    [[nodiscard]] bool built() const noexcept;
    [[nodiscard]] bool vector_enabled() const noexcept;
    [[nodiscard]] const std::string& path() const noexcept;
    [[nodiscard]] const std::string& directory() const noexcept;
    [[nodiscard]] int max_injected_tokens() const noexcept;
    [[nodiscard]] int top_k() const noexcept;

    // `tier: lexical (FTS5) - no embeddings configured` or
    // `tier: hybrid (FTS5 + vectors, RRF) - model=<m> dim=<d>`.
    boost::asio::awaitable<result<std::string>> tier_line();
    // Lexical, fused with the vector tier by RRF when configured. An embeddings outage
    // degrades to lexical (reported in the result); a dimension drift is an error.
    boost::asio::awaitable<result<search_result>> search(std::string query, int requested_top_k);
    // Documents in path order after `after_path` (empty: from the first), at most `limit`.
    boost::asio::awaitable<result<document_page>> enumerate(std::string after_path, int limit);
    boost::asio::awaitable<result<chunk_text>> chunk(std::string path, int ordinal);
    boost::asio::awaitable<result<store_stats>> stats();
    boost::asio::awaitable<result<doctor_report>> doctor(std::vector<std::string> paths);
    // Brings the index in line with `roots` (writer only): new and changed files (by size
    // and mtime, then content hash) are ingested, unchanged ones skipped.
    boost::asio::awaitable<result<index_stats>> index(std::vector<std::string> roots, index_options o);

private:
    std::unique_ptr<impl> impl_;
};

}  // namespace fiskai::knowledge
