// Go's internal/rag store.go, index.go, search.go and doctor.go over the SQLite C API.
// Differences from Go, on purpose: files are re-read only when their size or mtime
// changed (the content hash then decides), unreadable and binary files are skipped with
// a note instead of stopping the walk, and vectors live in a plain table searched by
// brute force (no sqlite-vec on Debian), with the same L2-on-normalised ranking.
#include <fiskai/knowledge/store.hpp>

#include "failure.hpp"
#include "sqlite.hpp"

#include <fiskai/config/config.hpp>
#include <fiskai/gocompat/file.hpp>
#include <fiskai/gocompat/quote.hpp>
#include <fiskai/gocompat/utf8.hpp>
#include <fiskai/knowledge/chunk.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <fmt/format.h>
#include <openssl/evp.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

namespace fiskai::knowledge {

namespace fs = std::filesystem;
using detail::knowledge_failure;
using detail::statement;

namespace {

constexpr int format_version = 1;
constexpr const char* db_file_name = "knowledge.db";
constexpr const char* lock_file_name = "knowledge.lock";
constexpr int rrf_k = 60;
constexpr int search_fanout = 50;
constexpr std::size_t index_batch_files = 64;
constexpr const char* memory_dir_name = "memory";
constexpr const char* reindex_hint = "run 'fisk-ai knowledge index --reindex'";

// The model answering now and the index disagree on the vectors' length (Go's text).
error dimension_drift(const std::string& model, std::size_t emitted, int built_at) {
    return error{errc::dimension_mismatch,
                 fmt::format("embedding dimension does not match the index: model {} now emits dimension {} but the "
                             "index was built at {}; {}",
                             gocompat::quote(model), emitted, built_at, reindex_hint)};
}

const std::set<std::string>& default_extensions() {
    static const std::set<std::string> exts{".md", ".markdown", ".txt", ".text"};
    return exts;
}

std::string lower(std::string s) {
    for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

std::string sha256_hex(std::string_view data) {
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int len = 0;
    EVP_Digest(data.data(), data.size(), md, &len, EVP_sha256(), nullptr);
    std::string out;
    out.reserve(len * 2);
    for (unsigned int i = 0; i < len; ++i) out += fmt::format("{:02x}", md[i]);
    return out;
}

std::vector<float> normalise(std::vector<float> v) {
    double sum = 0;
    for (const float f : v) sum += static_cast<double>(f) * static_cast<double>(f);
    if (sum == 0) return v;
    const auto inv = static_cast<float>(1 / std::sqrt(sum));
    for (auto& f : v) f *= inv;
    return v;
}

struct ranked {
    std::int64_t chunk_id = 0;
    double score = 0;
};

// Fuses on rank, not score, so BM25 and vector distance never need a common scale.
std::vector<ranked> rrf(const std::vector<std::vector<ranked>>& lists) {
    std::unordered_map<std::int64_t, double> fused;
    for (const auto& list : lists) {
        for (std::size_t rank = 0; rank < list.size(); ++rank) {
            fused[list[rank].chunk_id] += 1.0 / static_cast<double>(rrf_k + static_cast<int>(rank) + 1);
        }
    }
    std::vector<ranked> out;
    out.reserve(fused.size());
    for (const auto& [id, score] : fused) out.push_back({id, score});
    std::sort(out.begin(), out.end(), [](const ranked& a, const ranked& b) {
        if (a.score != b.score) return a.score > b.score;
        return a.chunk_id < b.chunk_id;
    });
    return out;
}

bool should_skip_dir(const fs::path& p, const fs::path& store_dir) {
    std::error_code ec;
    if (fs::equivalent(p, store_dir, ec)) return true;
    const auto name = p.filename().string();
    if (name != "." && name != ".." && name.starts_with('.')) return true;
    return name == memory_dir_name;
}

// The key a document is stored and cited under: the walked path, slash-separated and
// lexically clean (Go's filepath.Join of root and relative path).
std::string key_of(const fs::path& p) {
    auto s = p.lexically_normal().generic_string();
    if (s.starts_with("./")) s.erase(0, 2);
    return s;
}

std::int64_t mtime_ns(const struct stat& st) {
    return static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec;
}

struct candidate {
    std::string key;
    fs::path path;
    std::int64_t size = 0;
    std::int64_t mtime = 0;
};

// One changed file made ready to write.
struct prepared_doc {
    std::string key;
    std::int64_t size = 0;
    std::int64_t mtime = 0;
    std::string hash;
    std::string title;
    std::vector<chunk> chunks;
    bool is_new = false;
};

void note(const index_options& o, const std::string& msg) {
    if (o.progress) o.progress(msg);
}

std::vector<candidate> walk_corpus(const std::vector<std::string>& roots, const std::string& dir,
                                   const index_options& o) {
    std::vector<candidate> out;
    const fs::path store_dir(dir);
    for (const auto& root : roots) {
        std::error_code ec;
        const auto st = fs::symlink_status(root, ec);
        if (ec || !fs::exists(st)) {
            throw knowledge_failure(errc::bad_input,
                                    fmt::format("knowledge path {} does not exist; create it, or fix "
                                                "harness.knowledge.paths or the path given to knowledge index",
                                                gocompat::quote(root)));
        }
        auto consider = [&](const fs::path& p) {
            if (default_extensions().count(lower(p.extension().string())) == 0) return;
            struct stat s {};
            if (lstat(p.c_str(), &s) != 0 || !S_ISREG(s.st_mode)) return;
            if (static_cast<std::uintmax_t>(s.st_size) > max_index_file_bytes) {
                note(o, fmt::format("skipping oversized file {} ({} bytes)", gocompat::quote(key_of(p)), s.st_size));
                return;
            }
            out.push_back({key_of(p), p, static_cast<std::int64_t>(s.st_size), mtime_ns(s)});
        };
        if (!fs::is_directory(st)) {
            consider(root);
            continue;
        }
        fs::recursive_directory_iterator it(root, fs::directory_options::skip_permission_denied, ec), end;
        if (ec) {
            throw knowledge_failure(errc::failed,
                                    fmt::format("walking knowledge path {}: {}", gocompat::quote(root), ec.message()));
        }
        // A directory that cannot be read (other than for permission: skipped above) ends the
        // walk, and the iterator with it, so the run fails as Go's WalkDir does: a walk cut
        // short would have the reconcile step drop every document it did not reach.
        std::string last_entry;
        for (; it != end; it.increment(ec)) {
            const auto& entry = *it;
            last_entry = entry.path().string();
            std::error_code sec;
            // Symlinks are never followed: one real key per file, never out of the corpus.
            if (entry.is_symlink(sec)) continue;
            if (entry.is_directory(sec)) {
                if (should_skip_dir(entry.path(), store_dir)) it.disable_recursion_pending();
                continue;
            }
            consider(entry.path());
        }
        if (ec) {
            throw knowledge_failure(errc::failed,
                                    fmt::format("walking knowledge path {} (after {}): {}", gocompat::quote(root),
                                                gocompat::quote(last_entry), ec.message()));
        }
    }
    // Walk order as Go's WalkDir (lexical), whatever the directory order on disk.
    std::stable_sort(out.begin(), out.end(), [](const candidate& a, const candidate& b) { return a.key < b.key; });
    out.erase(
        std::unique(out.begin(), out.end(), [](const candidate& a, const candidate& b) { return a.key == b.key; }),
        out.end());
    return out;
}

template <class F>
auto run_blocking(boost::asio::thread_pool& pool, F fn) -> boost::asio::awaitable<std::invoke_result_t<F&>> {
    using R = std::invoke_result_t<F&>;
    // The job owns fn; the awaiting coroutine resumes on its own executor.
    auto job = [fn = std::move(fn)]() mutable -> boost::asio::awaitable<R> { co_return fn(); };
    co_return co_await boost::asio::co_spawn(pool.get_executor(), std::move(job), boost::asio::use_awaitable);
}

error to_error(const knowledge_failure& f) { return error{f.code(), f.what()}; }

}  // namespace

struct store::impl {
    boost::asio::any_io_executor io;
    // One thread: the connection is only ever used from it.
    boost::asio::thread_pool pool{1};
    sqlite3* db = nullptr;
    store_options opts;
    std::string dir;
    std::string db_path;
    bool read_only = true;
    int lock_fd = -1;

    ~impl() {
        pool.join();
        if (db != nullptr) sqlite3_close_v2(db);
        if (lock_fd >= 0) {
            flock(lock_fd, LOCK_UN);
            ::close(lock_fd);
        }
    }

    // --- opening ---------------------------------------------------------------------

    void open_db(bool readonly) {
        const int flags = readonly ? SQLITE_OPEN_READONLY : (SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
        if (sqlite3_open_v2(db_path.c_str(), &db, flags | SQLITE_OPEN_NOMUTEX, nullptr) != SQLITE_OK) {
            std::string msg = db != nullptr ? sqlite3_errmsg(db) : "out of memory";
            sqlite3_close_v2(db);
            db = nullptr;
            throw knowledge_failure(errc::failed,
                                    fmt::format("opening knowledge index {}: {}", gocompat::quote(db_path), msg));
        }
        sqlite3_busy_timeout(db, 5000);
        if (readonly) {
            detail::exec(db, "PRAGMA foreign_keys=ON; PRAGMA query_only=1");
        } else {
            // auto_vacuum takes effect only on a new, empty file, so it goes before WAL.
            detail::exec(db,
                         "PRAGMA auto_vacuum=FULL; PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; "
                         "PRAGMA foreign_keys=ON");
        }
    }

    void verify_fts5() const {
        if (sqlite3_compileoption_used("ENABLE_FTS5") == 0) {
            throw knowledge_failure(errc::failed, "this SQLite build was compiled without FTS5");
        }
    }

    void ensure_base_schema() const {
        detail::exec(db, R"(
            CREATE TABLE IF NOT EXISTS documents (
                id    INTEGER PRIMARY KEY,
                path  TEXT NOT NULL UNIQUE,
                title TEXT,
                size  INTEGER,
                mtime INTEGER,
                hash  TEXT);
            CREATE TABLE IF NOT EXISTS chunks (
                id           INTEGER PRIMARY KEY,
                document_id  INTEGER NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
                heading_path TEXT,
                ordinal      INTEGER,
                content      TEXT NOT NULL);
            CREATE INDEX IF NOT EXISTS chunks_document ON chunks(document_id, ordinal);
            CREATE VIRTUAL TABLE IF NOT EXISTS chunks_fts USING fts5(
                content, heading_path, content='chunks', content_rowid='id', tokenize='porter unicode61');
            CREATE TRIGGER IF NOT EXISTS chunks_ai AFTER INSERT ON chunks BEGIN
                INSERT INTO chunks_fts(rowid, content, heading_path) VALUES (new.id, new.content, new.heading_path);
            END;
            CREATE TRIGGER IF NOT EXISTS chunks_ad AFTER DELETE ON chunks BEGIN
                INSERT INTO chunks_fts(chunks_fts, rowid, content, heading_path)
                VALUES ('delete', old.id, old.content, old.heading_path);
            END;
            CREATE TRIGGER IF NOT EXISTS chunks_au AFTER UPDATE ON chunks BEGIN
                INSERT INTO chunks_fts(chunks_fts, rowid, content, heading_path)
                VALUES ('delete', old.id, old.content, old.heading_path);
                INSERT INTO chunks_fts(rowid, content, heading_path) VALUES (new.id, new.content, new.heading_path);
            END;
            CREATE TABLE IF NOT EXISTS rag_meta (key TEXT PRIMARY KEY, value TEXT);
        )");
    }

    bool table_exists(std::string_view name) const {
        statement s(db, "SELECT 1 FROM sqlite_master WHERE type='table' AND name=?");
        s.bind(1, name);
        return s.step();
    }

    manifest read_meta() const {
        manifest m;
        if (db == nullptr || !table_exists("rag_meta")) return m;
        statement s(db, "SELECT key, value FROM rag_meta");
        std::map<std::string, std::string> kv;
        while (s.step()) kv[s.text(0)] = s.text(1);
        auto num = [&](const char* k) {
            auto it = kv.find(k);
            if (it == kv.end()) return 0;
            try {
                return std::stoi(it->second);
            } catch (const std::exception&) {
                return 0;
            }
        };
        m.format_version = num("format_version");
        m.model = kv["model"];
        m.dimension = num("dimension");
        m.normalized = kv["normalized"] == "true";
        m.query_prefix = kv["query_prefix"];
        m.document_prefix = kv["document_prefix"];
        return m;
    }

    void write_meta(const manifest& m) const {
        statement s(db,
                    "INSERT INTO rag_meta(key, value) VALUES(?, ?) ON CONFLICT(key) DO UPDATE SET value = "
                    "excluded.value");
        const std::pair<const char*, std::string> pairs[] = {
            {"format_version", std::to_string(m.format_version)},
            {"model", m.model},
            {"dimension", std::to_string(m.dimension)},
            {"normalized", m.normalized ? "true" : "false"},
            {"query_prefix", m.query_prefix},
            {"document_prefix", m.document_prefix},
        };
        for (const auto& [k, v] : pairs) {
            s.reset();
            s.bind(1, std::string_view(k)).bind(2, v);
            s.run();
        }
    }

    void validate_read_meta() const {
        const auto m = read_meta();
        if (m.format_version > format_version) {
            throw knowledge_failure(
                errc::format_too_new,
                fmt::format("knowledge index format is newer than this build supports: index format_version={}, "
                            "this build supports up to {}; upgrade fisk-ai",
                            m.format_version, format_version));
        }
        const auto& emb = opts.embeddings;
        if (!emb) return;
        constexpr const char* mismatch = "knowledge index was built with a different embedding configuration";
        if (m.model.empty()) {
            throw knowledge_failure(errc::meta_mismatch,
                                    fmt::format("{}: config requests embeddings model={} but the index was built "
                                                "lexical-only; {}",
                                                mismatch, gocompat::quote(emb->model()), reindex_hint));
        }
        if (m.model != emb->model() || m.query_prefix != emb->query_prefix() ||
            m.document_prefix != emb->document_prefix() || !m.normalized) {
            throw knowledge_failure(
                errc::meta_mismatch,
                fmt::format("{}: index built with model={} query_prefix={} document_prefix={} normalized={}; config "
                            "requests model={} query_prefix={} document_prefix={}; {}",
                            mismatch, gocompat::quote(m.model), gocompat::quote(m.query_prefix),
                            gocompat::quote(m.document_prefix), m.normalized, gocompat::quote(emb->model()),
                            gocompat::quote(emb->query_prefix()), gocompat::quote(emb->document_prefix()),
                            reindex_hint));
        }
    }

    void enforce_perms() const {
        for (const char* suffix : {"", "-wal", "-shm"}) {
            const std::string p = db_path + suffix;
            struct stat st {};
            if (lstat(p.c_str(), &st) != 0) continue;
            if (S_ISLNK(st.st_mode)) {
                throw knowledge_failure(
                    errc::failed,
                    fmt::format("knowledge index path {} is a symlink; refusing to follow it", gocompat::quote(p)));
            }
            ::chmod(p.c_str(), 0600);
        }
    }

    void acquire_lock() {
        const std::string p = (fs::path(dir) / lock_file_name).string();
        lock_fd = ::open(p.c_str(), O_CREAT | O_RDWR | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (lock_fd < 0) {
            throw knowledge_failure(errc::failed, fmt::format("opening knowledge index lock {}: {}", gocompat::quote(p),
                                                              std::strerror(errno)));
        }
        if (flock(lock_fd, LOCK_EX | LOCK_NB) != 0) {
            const int e = errno;
            ::close(lock_fd);
            lock_fd = -1;
            if (e == EWOULDBLOCK) throw knowledge_failure(errc::locked, "another knowledge index is already running");
            throw knowledge_failure(
                errc::failed, fmt::format("locking knowledge index {}: {}", gocompat::quote(p), std::strerror(e)));
        }
    }

    // --- search ----------------------------------------------------------------------

    int effective_top_k(int requested) const {
        int k = requested > 0 ? requested : opts.top_k;
        if (k > top_k_ceiling) return top_k_ceiling;
        return k < 1 ? 1 : k;
    }

    std::vector<ranked> fts_search(const std::string& match, int limit) const {
        statement s(db,
                    "SELECT rowid, bm25(chunks_fts) FROM chunks_fts WHERE chunks_fts MATCH ? ORDER BY "
                    "bm25(chunks_fts) LIMIT ?");
        s.bind(1, match).bind(2, limit);
        std::vector<ranked> out;
        try {
            while (s.step()) out.push_back({s.int64(0), s.real(1)});
        } catch (const knowledge_failure& f) {
            throw knowledge_failure(f.code(), fmt::format("lexical search: {}", f.what()));
        }
        return out;
    }

    // Ascending L2 distance from the normalised query; vectors are stored normalised.
    std::vector<ranked> vec_search(const std::vector<float>& qv, int limit) const {
        statement s(db, "SELECT chunk_id, embedding FROM chunks_vec");
        std::vector<ranked> all;
        while (s.step()) {
            const auto blob = s.blob(1);
            if (blob.size() != qv.size() * sizeof(float)) continue;
            double d = 0;
            for (std::size_t i = 0; i < qv.size(); ++i) {
                float f = 0;
                std::memcpy(&f, blob.data() + i * sizeof(float), sizeof(float));
                const double diff = static_cast<double>(f) - static_cast<double>(qv[i]);
                d += diff * diff;
            }
            all.push_back({s.int64(0), d});
        }
        const auto n = std::min<std::size_t>(all.size(), static_cast<std::size_t>(limit));
        std::partial_sort(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(n), all.end(),
                          [](const ranked& a, const ranked& b) {
                              if (a.score != b.score) return a.score < b.score;
                              return a.chunk_id < b.chunk_id;
                          });
        all.resize(n);
        return all;
    }

    std::vector<hit> hydrate(const std::vector<ranked>& order) const {
        if (order.empty()) return {};
        std::string placeholders;
        for (std::size_t i = 0; i < order.size(); ++i) placeholders += i == 0 ? "?" : ",?";
        statement s(db, fmt::format("SELECT c.id, d.path, c.heading_path, c.ordinal, c.content FROM chunks c JOIN "
                                    "documents d ON d.id = c.document_id WHERE c.id IN ({})",
                                    placeholders));
        for (std::size_t i = 0; i < order.size(); ++i) s.bind(static_cast<int>(i + 1), order[i].chunk_id);
        std::unordered_map<std::int64_t, hit> by_id;
        while (s.step()) {
            hit h;
            h.chunk_id = s.int64(0);
            h.path = s.text(1);
            h.heading_path = s.text(2);
            h.ordinal = static_cast<int>(s.int64(3));
            h.content = s.text(4);
            h.citation = citation(h.path, h.ordinal);
            by_id.emplace(h.chunk_id, std::move(h));
        }
        // A row gone between ranking and hydration (a concurrent reindex) is skipped.
        std::vector<hit> out;
        for (const auto& r : order) {
            if (auto it = by_id.find(r.chunk_id); it != by_id.end()) out.push_back(std::move(it->second));
        }
        return out;
    }

    // --- index -----------------------------------------------------------------------

    void reset_for_reindex() const {
        detail::exec(db,
                     "DROP TRIGGER IF EXISTS chunks_ad_vec; DROP TABLE IF EXISTS chunks_vec; DELETE FROM chunks; "
                     "DELETE FROM documents; DELETE FROM rag_meta; INSERT INTO chunks_fts(chunks_fts) "
                     "VALUES('rebuild')");
    }

    std::vector<candidate> walk(const std::vector<std::string>& roots, const index_options& o) const {
        return walk_corpus(roots, dir, o);
    }

    int chunk_count_of(const std::string& key) const {
        statement s(db, "SELECT count(*) FROM chunks c JOIN documents d ON d.id = c.document_id WHERE d.path = ?");
        s.bind(1, key);
        return s.step() ? static_cast<int>(s.int64(0)) : 0;
    }

    // Reads and classifies one batch: unchanged files are counted, changed ones chunked.
    std::vector<prepared_doc> prepare(const std::vector<candidate>& batch, const index_options& o, index_stats& stats,
                                      std::set<std::string>& seen) const {
        std::vector<prepared_doc> out;
        statement lookup(db, "SELECT size, mtime, hash FROM documents WHERE path = ?");
        statement touch(db, "UPDATE documents SET size = ?, mtime = ? WHERE path = ?");
        for (const auto& c : batch) {
            lookup.reset();
            lookup.bind(1, c.key);
            const bool known = lookup.step();
            const std::int64_t have_size = known ? lookup.int64(0) : -1;
            const std::int64_t have_mtime = known ? lookup.int64(1) : -1;
            const std::string have_hash = known ? lookup.text(2) : std::string{};
            lookup.reset();
            if (known && !o.reindex && have_size == c.size && have_mtime == c.mtime) {
                seen.insert(c.key);
                ++stats.files;
                ++stats.skipped;
                stats.chunks += chunk_count_of(c.key);
                continue;
            }
            // Checked again when read: the file may have been replaced since the walk (by a
            // FIFO, which would block the index for good, or by something larger).
            std::string data;
            const int fd = ::open(c.path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
            const auto read = fd < 0 ? gocompat::file_outcome{gocompat::file_check::failed, errno, 0}
                                     : gocompat::read_regular_file(fd, max_index_file_bytes, data);
            if (fd >= 0) ::close(fd);
            if (read.status == gocompat::file_check::too_large) {
                note(o, fmt::format("skipping oversized file {} ({} bytes)", gocompat::quote(c.key), read.size));
                continue;
            }
            if (read.status != gocompat::file_check::ok) {
                note(o, fmt::format("skipping unreadable file {}: {}", gocompat::quote(c.key),
                                    read.status == gocompat::file_check::not_regular ? "not a regular file"
                                                                                     : std::strerror(read.error)));
                continue;
            }
            if (data.find('\0') != std::string::npos) {
                note(o, fmt::format("skipping binary file {}", gocompat::quote(c.key)));
                continue;
            }
            if (!gocompat::is_valid_utf8(data)) {
                note(o, fmt::format("skipping non-UTF-8 file {}", gocompat::quote(c.key)));
                continue;
            }
            seen.insert(c.key);
            ++stats.files;
            auto hash = sha256_hex(data);
            if (known && !o.reindex && hash == have_hash) {
                // Touched but not changed: remember the new size and mtime so the next run skips it unread.
                if (!o.dry_run) {
                    touch.reset();
                    touch.bind(1, c.size).bind(2, c.mtime).bind(3, c.key);
                    touch.run();
                }
                ++stats.skipped;
                stats.chunks += chunk_count_of(c.key);
                continue;
            }
            auto split = split_front_matter(data);
            prepared_doc d;
            d.key = c.key;
            d.size = c.size;
            d.mtime = c.mtime;
            d.hash = std::move(hash);
            d.title = split.title.empty() ? document_title(split.body) : split.title;
            d.chunks = chunk_document(split.body);
            d.is_new = o.reindex || !known;
            out.push_back(std::move(d));
        }
        return out;
    }

    void write(const std::vector<prepared_doc>& docs, const std::vector<std::vector<float>>& vecs) const {
        detail::transaction tx(db);
        statement upsert(db,
                         "INSERT INTO documents(path, title, size, mtime, hash) VALUES(?,?,?,?,?) ON CONFLICT(path) "
                         "DO UPDATE SET title=excluded.title, size=excluded.size, mtime=excluded.mtime, "
                         "hash=excluded.hash RETURNING id");
        statement purge(db, "DELETE FROM chunks WHERE document_id = ?");
        statement insert(db,
                         "INSERT INTO chunks(document_id, heading_path, ordinal, content) VALUES(?,?,?,?) RETURNING "
                         "id");
        std::optional<statement> insert_vec;
        if (!vecs.empty()) insert_vec.emplace(db, "INSERT INTO chunks_vec(chunk_id, embedding) VALUES(?, ?)");
        std::size_t v = 0;
        for (const auto& d : docs) {
            upsert.reset();
            upsert.bind(1, d.key).bind(2, d.title).bind(3, d.size).bind(4, d.mtime).bind(5, d.hash);
            if (!upsert.step()) throw knowledge_failure(errc::failed, "upsert document: no id returned");
            const auto doc_id = upsert.int64(0);
            upsert.reset();
            // Purge then insert: the triggers clear the old FTS and vector rows, so a shrinking
            // file leaves no ghost chunks.
            purge.reset();
            purge.bind(1, doc_id);
            purge.run();
            for (std::size_t i = 0; i < d.chunks.size(); ++i) {
                insert.reset();
                insert.bind(1, doc_id)
                    .bind(2, d.chunks[i].heading_path)
                    .bind(3, static_cast<int>(i))
                    .bind(4, d.chunks[i].content);
                if (!insert.step()) throw knowledge_failure(errc::failed, "insert chunk: no id returned");
                const auto chunk_id = insert.int64(0);
                insert.reset();
                if (insert_vec) {
                    const auto& vec = vecs.at(v++);
                    insert_vec->reset();
                    insert_vec->bind(1, chunk_id).bind_blob(2, vec.data(), vec.size() * sizeof(float));
                    insert_vec->run();
                }
            }
        }
        tx.commit();
    }

    void reconcile(const std::set<std::string>& seen, index_stats& stats) const {
        std::vector<std::string> orphans;
        {
            statement s(db, "SELECT path FROM documents");
            while (s.step()) {
                auto p = s.text(0);
                if (seen.count(p) == 0) orphans.push_back(std::move(p));
            }
        }
        detail::transaction tx(db);
        // Chunks first, explicitly: their triggers clear the FTS and vector rows.
        statement del_chunks(db, "DELETE FROM chunks WHERE document_id = (SELECT id FROM documents WHERE path = ?)");
        statement del(db, "DELETE FROM documents WHERE path = ?");
        for (const auto& p : orphans) {
            del_chunks.reset();
            del_chunks.bind(1, p);
            del_chunks.run();
            del.reset();
            del.bind(1, p);
            del.run();
            ++stats.removed;
        }
        tx.commit();
    }

    // Checks and pins the vector identity before any embedding is spent.
    void prepare_vector_objects(int dim, bool reindex) const {
        const auto& emb = *opts.embeddings;
        manifest desired{format_version, emb.model(), dim, true, emb.query_prefix(), emb.document_prefix()};
        const auto meta = read_meta();
        constexpr const char* mismatch = "knowledge index was built with a different embedding configuration";
        if (!reindex && !meta.model.empty() &&
            (meta.model != desired.model || meta.dimension != desired.dimension ||
             meta.query_prefix != desired.query_prefix || meta.document_prefix != desired.document_prefix ||
             !meta.normalized)) {
            throw knowledge_failure(
                errc::meta_mismatch,
                fmt::format("{}: manifest built with model={} dim={}; config requests model={} "
                            "dim={} - {}",
                            mismatch, meta.model, meta.dimension, desired.model, desired.dimension, reindex_hint));
        }
        if (!reindex && meta.model.empty() && detail::scalar(db, "SELECT count(*) FROM chunks") > 0) {
            throw knowledge_failure(errc::meta_mismatch,
                                    fmt::format("{}: the existing index is lexical-only but config now requests "
                                                "embeddings model={} - {}",
                                                mismatch, desired.model, reindex_hint));
        }
        detail::exec(db,
                     "CREATE TABLE IF NOT EXISTS chunks_vec (chunk_id INTEGER PRIMARY KEY, embedding BLOB NOT NULL);"
                     "CREATE TRIGGER IF NOT EXISTS chunks_ad_vec AFTER DELETE ON chunks BEGIN "
                     "DELETE FROM chunks_vec WHERE chunk_id = old.id; END;");
        detail::transaction tx(db);
        write_meta(desired);
        tx.commit();
    }

    void pin_lexical_meta() const {
        detail::transaction tx(db);
        write_meta(manifest{format_version, {}, 0, false, {}, {}});
        tx.commit();
    }
};

void throw_exception_from_error(const error& e, const boost::source_location&) { throw std::runtime_error(e.message); }

const char* to_string(search_status s) noexcept {
    switch (s) {
        case search_status::ok: return "ok";
        case search_status::index_not_built: return "index_not_built";
        case search_status::index_empty: return "index_empty";
    }
    return "ok";
}

bool doctor_report::has_fatal() const noexcept {
    return std::any_of(checks.begin(), checks.end(), [](const doctor_check& c) { return c.fatal && !c.ok; });
}

std::string degraded_tier_line(std::string_view reason) {
    return fmt::format("tier: hybrid -> DEGRADED to lexical (embeddings unreachable: {})", reason);
}

std::string citation(std::string_view path, int ordinal) { return fmt::format("{}#{}", path, ordinal); }

result<std::pair<std::string, int>> parse_citation(std::string_view c) {
    const auto at = c.rfind('#');
    if (at == std::string_view::npos) {
        return error{errc::bad_input,
                     fmt::format("citation {} is missing the '#<ordinal>' suffix; expected <relpath>#<ordinal>",
                                 gocompat::quote(c))};
    }
    const auto path = c.substr(0, at);
    const auto num = c.substr(at + 1);
    int ordinal = -1;
    bool ok = !path.empty() && !num.empty() && num.size() < 10 &&
              std::all_of(num.begin(), num.end(), [](char ch) { return ch >= '0' && ch <= '9'; });
    if (ok) ordinal = std::stoi(std::string(num));
    if (!ok || ordinal < 0) {
        return error{errc::bad_input,
                     fmt::format("citation {} is malformed; expected <relpath>#<ordinal>, e.g. docs/design.md#3",
                                 gocompat::quote(c))};
    }
    return std::pair<std::string, int>{std::string(path), ordinal};
}

store_options store_options_from(boost::asio::any_io_executor io, const config::config& cfg,
                                 const std::string& store_dir) {
    store_options o;
    fs::path dir = cfg.knowledge_directory();
    if (!store_dir.empty() && dir.is_relative()) dir = fs::path(store_dir) / dir;
    o.directory = dir.string();
    o.top_k = cfg.harness.knowledge.effective_top_k();
    o.max_injected_tokens = cfg.harness.knowledge.effective_max_injected_tokens();
    o.embeddings = embedder_from_config(std::move(io), cfg);
    return o;
}

std::vector<file_state> scan_corpus(const std::vector<std::string>& roots, const std::string& store_dir) {
    index_options quiet;
    std::vector<file_state> out;
    try {
        for (auto& c : walk_corpus(roots, store_dir, quiet)) out.push_back({c.key, c.size, c.mtime});
    } catch (const knowledge_failure&) {
        // A root that went away mid-watch is simply not there this time.
    }
    return out;
}

store::store(std::unique_ptr<impl> p) : impl_(std::move(p)) {}
store::~store() = default;

result<std::shared_ptr<store>> store::open(boost::asio::any_io_executor io, store_options o) {
    auto p = std::make_unique<impl>();
    p->io = std::move(io);
    p->dir = o.directory;
    p->db_path = (fs::path(o.directory) / db_file_name).string();
    p->opts = std::move(o);
    try {
        struct stat st {};
        if (::stat(p->db_path.c_str(), &st) != 0) {
            if (errno == ENOENT) return std::make_shared<store>(std::move(p));
            return error{errc::failed,
                         fmt::format("stat knowledge index {}: {}", gocompat::quote(p->db_path), std::strerror(errno))};
        }
        p->open_db(true);
        p->verify_fts5();
        p->validate_read_meta();
    } catch (const knowledge_failure& f) {
        return to_error(f);
    }
    return std::make_shared<store>(std::move(p));
}

result<std::shared_ptr<store>> store::open_writer(boost::asio::any_io_executor io, store_options o) {
    auto p = std::make_unique<impl>();
    p->io = std::move(io);
    p->dir = o.directory;
    p->db_path = (fs::path(o.directory) / db_file_name).string();
    p->opts = std::move(o);
    p->read_only = false;
    try {
        std::error_code ec;
        fs::create_directories(p->dir, ec);
        if (ec) {
            throw knowledge_failure(errc::failed, fmt::format("creating knowledge directory {}: {}",
                                                              gocompat::quote(p->dir), ec.message()));
        }
        ::chmod(p->dir.c_str(), 0700);
        p->acquire_lock();
        // Created 0600 up front so SQLite never creates it under the umask.
        const int fd = ::open(p->db_path.c_str(), O_CREAT | O_WRONLY | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0) {
            throw knowledge_failure(errc::failed, fmt::format("creating knowledge index {}: {}",
                                                              gocompat::quote(p->db_path), std::strerror(errno)));
        }
        ::close(fd);
        p->open_db(false);
        p->verify_fts5();
        p->ensure_base_schema();
        p->enforce_perms();
    } catch (const knowledge_failure& f) {
        return to_error(f);
    }
    return std::make_shared<store>(std::move(p));
}

bool store::built() const noexcept { return impl_->db != nullptr; }
bool store::vector_enabled() const noexcept { return impl_->opts.embeddings != nullptr; }
const std::string& store::path() const noexcept { return impl_->db_path; }
const std::string& store::directory() const noexcept { return impl_->dir; }
int store::max_injected_tokens() const noexcept { return impl_->opts.max_injected_tokens; }
int store::top_k() const noexcept { return impl_->opts.top_k; }

boost::asio::awaitable<result<std::string>> store::tier_line() {
    auto self = shared_from_this();
    auto* p = impl_.get();
    if (!p->opts.embeddings) co_return std::string("tier: lexical (FTS5) - no embeddings configured");
    try {
        auto read = [p] { return p->read_meta().dimension; };
        const int dim = co_await run_blocking(p->pool, std::move(read));
        co_return fmt::format("tier: hybrid (FTS5 + vectors, RRF) - model={} dim={}", p->opts.embeddings->model(), dim);
    } catch (const knowledge_failure& f) {
        co_return to_error(f);
    }
}

boost::asio::awaitable<result<search_result>> store::search(std::string query, int requested_top_k) {
    auto self = shared_from_this();
    auto* p = impl_.get();
    if (p->db == nullptr) co_return search_result{{}, search_status::index_not_built, false, {}};
    try {
        struct lexical {
            bool empty = false;
            std::vector<ranked> hits;
            int dimension = 0;
        };
        auto lex_job = [p, &query]() {
            lexical out;
            if (detail::scalar(p->db, "SELECT count(*) FROM chunks") == 0) {
                out.empty = true;
                return out;
            }
            const auto match = fts_query(query);
            if (match.empty()) {
                out.empty = true;
                return out;
            }
            out.hits = p->fts_search(match, search_fanout);
            if (p->opts.embeddings) out.dimension = p->read_meta().dimension;
            return out;
        };
        auto lex = co_await run_blocking(p->pool, std::move(lex_job));
        if (lex.empty) co_return search_result{{}, search_status::index_empty, false, {}};

        search_result res;
        std::vector<ranked> fused = std::move(lex.hits);
        if (auto emb = p->opts.embeddings) {
            std::string reason;
            auto dim = co_await emb->dimension();
            if (!dim) {
                reason = dim.error();
            } else if (*dim != lex.dimension) {
                co_return dimension_drift(emb->model(), static_cast<std::size_t>(*dim), lex.dimension);
            } else {
                auto qv = co_await emb->embed_query(query);
                if (!qv) {
                    reason = qv.error();
                } else if (qv->size() != static_cast<std::size_t>(lex.dimension)) {
                    // The probe's dimension is kept for the process's life: a model swapped
                    // behind the server since then shows here first. Every stored vector
                    // would be skipped, a silent lexical-only answer.
                    co_return dimension_drift(emb->model(), qv->size(), lex.dimension);
                } else {
                    auto vec_job = [p, v = normalise(std::move(*qv))]() { return p->vec_search(v, search_fanout); };
                    auto vec = co_await run_blocking(p->pool, std::move(vec_job));
                    fused = rrf({fused, vec});
                }
            }
            if (!reason.empty()) {
                // An outage degrades this query to lexical, visibly.
                res.degraded = true;
                res.degrade_reason = std::move(reason);
            }
        }
        const auto k = static_cast<std::size_t>(p->effective_top_k(requested_top_k));
        if (fused.size() > k) fused.resize(k);
        auto hydrate_job = [p, &fused]() { return p->hydrate(fused); };
        res.hits = co_await run_blocking(p->pool, std::move(hydrate_job));
        res.status = search_status::ok;
        co_return res;
    } catch (const knowledge_failure& f) {
        co_return to_error(f);
    }
}

boost::asio::awaitable<result<document_page>> store::enumerate(std::string after_path, int limit) {
    auto self = shared_from_this();
    auto* p = impl_.get();
    if (p->db == nullptr) co_return error{errc::not_built, "knowledge index has not been built"};
    try {
        auto job = [p, &after_path, limit]() {
            statement s(p->db,
                        "SELECT d.path, COALESCE(d.title, ''), (SELECT count(*) FROM chunks c WHERE c.document_id = "
                        "d.id) FROM documents d WHERE d.path > ? ORDER BY d.path LIMIT ?");
            s.bind(1, after_path).bind(2, limit + 1);
            document_page page;
            while (s.step()) {
                page.documents.push_back({s.text(0), s.text(1), static_cast<int>(s.int64(2))});
            }
            if (page.documents.size() > static_cast<std::size_t>(limit)) {
                page.documents.pop_back();
                page.more = true;
            }
            return page;
        };
        co_return co_await run_blocking(p->pool, std::move(job));
    } catch (const knowledge_failure& f) {
        co_return to_error(f);
    }
}

boost::asio::awaitable<result<chunk_text>> store::chunk(std::string path, int ordinal) {
    auto self = shared_from_this();
    auto* p = impl_.get();
    if (p->db == nullptr) co_return error{errc::not_built, "knowledge index has not been built"};
    try {
        auto job = [p, &path, ordinal]() -> std::optional<chunk_text> {
            statement s(p->db,
                        "SELECT c.heading_path, c.content FROM chunks c JOIN documents d ON d.id = c.document_id "
                        "WHERE d.path = ? AND c.ordinal = ?");
            s.bind(1, path).bind(2, ordinal);
            if (!s.step()) return std::nullopt;
            return chunk_text{s.text(0), s.text(1)};
        };
        auto found = co_await run_blocking(p->pool, std::move(job));
        if (!found) co_return error{errc::not_found, fmt::format("no chunk {}", citation(path, ordinal))};
        co_return std::move(*found);
    } catch (const knowledge_failure& f) {
        co_return to_error(f);
    }
}

boost::asio::awaitable<result<store_stats>> store::stats() {
    auto self = shared_from_this();
    auto* p = impl_.get();
    store_stats st;
    st.store_path = p->db_path;
    st.built = p->db != nullptr;
    if (!st.built) co_return st;
    try {
        auto job = [p, st]() mutable {
            st.documents = static_cast<int>(detail::scalar(p->db, "SELECT count(*) FROM documents"));
            st.chunks = static_cast<int>(detail::scalar(p->db, "SELECT count(*) FROM chunks"));
            if (p->table_exists("chunks_vec")) {
                st.vectors = static_cast<int>(detail::scalar(p->db, "SELECT count(*) FROM chunks_vec"));
            }
            st.meta = p->read_meta();
            std::error_code ec;
            st.db_size = fs::file_size(p->db_path, ec);
            if (ec) st.db_size = 0;
            st.wal_size = fs::file_size(p->db_path + "-wal", ec);
            if (ec) st.wal_size = 0;
            return st;
        };
        co_return co_await run_blocking(p->pool, std::move(job));
    } catch (const knowledge_failure& f) {
        co_return to_error(f);
    }
}

boost::asio::awaitable<result<doctor_report>> store::doctor(std::vector<std::string> paths) {
    auto self = shared_from_this();
    auto* p = impl_.get();
    auto tier = co_await tier_line();
    if (!tier) co_return tier.error();
    doctor_report report;
    report.tier_line = *tier;
    auto add = [&report](std::string name, bool ok, bool fatal, std::string detail) {
        report.checks.push_back({std::move(name), ok, std::move(detail), fatal});
    };
    if (p->db == nullptr) {
        add("Store present", false, false,
            fmt::format("no index file at {}; run: fisk-ai knowledge index", p->db_path));
    } else {
        add("Store present", true, false, p->db_path);
        add("FTS5 compiled in", sqlite3_compileoption_used("ENABLE_FTS5") != 0, true, "");
        auto mode_job = [p]() {
            statement s(p->db, "PRAGMA journal_mode");
            return s.step() ? s.text(0) : std::string{};
        };
        try {
            const auto mode = co_await run_blocking(p->pool, std::move(mode_job));
            add("WAL journal mode", mode == "wal", false, "journal_mode=" + mode);
        } catch (const knowledge_failure& f) {
            add("WAL journal mode", false, false, f.what());
        }
        struct stat st {};
        if (::stat(p->db_path.c_str(), &st) != 0) {
            add("Index writable", false, true, std::strerror(errno));
        } else {
            add("Index writable", (st.st_mode & S_IWUSR) != 0, false, fmt::format("{:o}", st.st_mode & 0777));
        }
    }
    if (paths.empty()) {
        add("Index paths resolve", true, false, "no paths configured (pass a path to knowledge index)");
    }
    for (const auto& path : paths) {
        std::error_code ec;
        if (!fs::exists(path, ec)) {
            add("Index path " + path, false, false, ec ? ec.message() : "no such file or directory");
        } else {
            add("Index path " + path, true, false, "");
        }
    }
    auto emb = p->opts.embeddings;
    if (!emb) {
        add("Embeddings", true, false, "not configured (lexical-only)");
        co_return report;
    }
    auto dim = co_await emb->dimension();
    if (!dim) {
        add("Embeddings reachable", false, false, dim.error());
        co_return report;
    }
    add("Embeddings reachable", true, false, fmt::format("model={} dim={}", emb->model(), *dim));
    if (p->db == nullptr) co_return report;
    auto meta_job = [p]() { return p->read_meta(); };
    const auto meta = co_await run_blocking(p->pool, std::move(meta_job));
    if (meta.model.empty()) {
        add("Manifest matches model", false, false, "index is lexical-only; run: fisk-ai knowledge index --reindex");
    } else if (meta.model != emb->model() || meta.dimension != *dim || meta.query_prefix != emb->query_prefix() ||
               meta.document_prefix != emb->document_prefix()) {
        add("Manifest matches model", false, false,
            fmt::format("index built with model={} dim={}; config requests model={} dim={}; run: fisk-ai knowledge "
                        "index --reindex",
                        meta.model, meta.dimension, emb->model(), *dim));
    } else {
        add("Manifest matches model", true, false, "");
    }
    co_return report;
}

boost::asio::awaitable<result<index_stats>> store::index(std::vector<std::string> roots, index_options o) {
    auto self = shared_from_this();
    auto* p = impl_.get();
    if (p->read_only || p->db == nullptr) co_return error{errc::failed, "index requires a writable knowledge store"};
    if (roots.empty()) co_return error{errc::bad_input, "index requires at least one path"};
    index_stats stats;
    try {
        auto start_job = [p, &o, &stats]() {
            stats.first_build = detail::scalar(p->db, "SELECT count(*) FROM documents") == 0;
            if (o.reindex && !o.dry_run) {
                p->reset_for_reindex();
                stats.first_build = true;
            }
            if (!o.dry_run && !p->opts.embeddings) p->pin_lexical_meta();
            return true;
        };
        co_await run_blocking(p->pool, std::move(start_job));
        auto emb = p->opts.embeddings;
        std::optional<int> pinned_dimension;
        if (emb && !o.dry_run) {
            auto dim = co_await emb->dimension();
            if (!dim) co_return error{errc::failed, "probing embedding dimension: " + dim.error()};
            pinned_dimension = *dim;
            auto vec_job = [p, d = *dim, reindex = o.reindex]() {
                p->prepare_vector_objects(d, reindex);
                return true;
            };
            co_await run_blocking(p->pool, std::move(vec_job));
        }
        auto walk_job = [p, &roots, &o]() { return p->walk(roots, o); };
        const auto candidates = co_await run_blocking(p->pool, std::move(walk_job));

        std::set<std::string> seen;
        for (std::size_t start = 0; start < candidates.size(); start += index_batch_files) {
            const auto end = std::min(start + index_batch_files, candidates.size());
            std::vector<candidate> batch(candidates.begin() + static_cast<std::ptrdiff_t>(start),
                                         candidates.begin() + static_cast<std::ptrdiff_t>(end));
            auto prepare_job = [p, &batch, &o, &stats, &seen]() { return p->prepare(batch, o, stats, seen); };
            auto docs = co_await run_blocking(p->pool, std::move(prepare_job));
            for (const auto& d : docs) {
                (d.is_new ? stats.added : stats.updated) += 1;
                stats.chunks += static_cast<int>(d.chunks.size());
                if (emb) stats.embeddings += static_cast<int>(d.chunks.size());
            }
            if (o.dry_run || docs.empty()) continue;
            std::vector<std::vector<float>> vecs;
            if (emb) {
                // Embedded outside the write transaction: the slow call never holds the writer.
                std::vector<embed_document> inputs;
                for (const auto& d : docs) {
                    for (const auto& c : d.chunks) inputs.push_back({c.heading_path, c.content});
                }
                if (!inputs.empty()) {
                    auto raw = co_await emb->embed_documents(std::move(inputs));
                    if (!raw) {
                        co_return error{errc::failed, fmt::format("indexing {}: embedding: {}",
                                                                  gocompat::quote(docs.front().key), raw.error())};
                    }
                    for (auto& v : *raw) {
                        // The index pins one dimension; a vector of another would be stored
                        // and then never found.
                        if (v.size() != static_cast<std::size_t>(*pinned_dimension)) {
                            auto drift = dimension_drift(emb->model(), v.size(), *pinned_dimension);
                            co_return error{drift.code, fmt::format("indexing {}: {}",
                                                                    gocompat::quote(docs.front().key), drift.message)};
                        }
                        vecs.push_back(normalise(std::move(v)));
                    }
                }
            }
            auto write_job = [p, &docs, &vecs]() {
                p->write(docs, vecs);
                return true;
            };
            co_await run_blocking(p->pool, std::move(write_job));
        }
        // Never on a walk that saw nothing: an empty walk must not wipe the index.
        if (o.reconcile && !o.dry_run && !seen.empty()) {
            auto reconcile_job = [p, &seen, &stats]() {
                p->reconcile(seen, stats);
                return true;
            };
            co_await run_blocking(p->pool, std::move(reconcile_job));
        }
    } catch (const knowledge_failure& f) {
        co_return to_error(f);
    }
    co_return stats;
}

}  // namespace fiskai::knowledge
