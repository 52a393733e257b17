#pragma once
// A thin RAII layer over the SQLite C API: a connection, prepared statements, and
// failures as knowledge_failure carrying SQLite's message.

#include "failure.hpp"

#include <sqlite3.h>

#include <cstdint>
#include <string>
#include <string_view>

namespace fiskai::knowledge::detail {

class statement {
public:
    statement(sqlite3* db, std::string_view sql) : db_(db) {
        if (sqlite3_prepare_v2(db, sql.data(), static_cast<int>(sql.size()), &stmt_, nullptr) != SQLITE_OK) {
            throw knowledge_failure(errc::failed, sqlite3_errmsg(db));
        }
    }
    ~statement() { sqlite3_finalize(stmt_); }
    statement(const statement&) = delete;
    statement& operator=(const statement&) = delete;

    statement& bind(int i, std::string_view v) {
        check(sqlite3_bind_text(stmt_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT));
        return *this;
    }
    statement& bind(int i, std::int64_t v) {
        check(sqlite3_bind_int64(stmt_, i, v));
        return *this;
    }
    statement& bind(int i, int v) { return bind(i, static_cast<std::int64_t>(v)); }
    statement& bind_blob(int i, const void* data, std::size_t n) {
        check(sqlite3_bind_blob(stmt_, i, data, static_cast<int>(n), SQLITE_TRANSIENT));
        return *this;
    }

    // True while a row is available.
    bool step() {
        const int rc = sqlite3_step(stmt_);
        if (rc == SQLITE_ROW) return true;
        if (rc == SQLITE_DONE) return false;
        throw knowledge_failure(errc::failed, sqlite3_errmsg(db_));
    }
    void run() {
        while (step()) {}
    }
    void reset() {
        sqlite3_reset(stmt_);
        sqlite3_clear_bindings(stmt_);
    }

    [[nodiscard]] std::int64_t int64(int col) const { return sqlite3_column_int64(stmt_, col); }
    [[nodiscard]] double real(int col) const { return sqlite3_column_double(stmt_, col); }
    [[nodiscard]] std::string text(int col) const {
        const auto* p = sqlite3_column_text(stmt_, col);
        return p == nullptr ? std::string{}
                            : std::string(reinterpret_cast<const char*>(p),
                                          static_cast<std::size_t>(sqlite3_column_bytes(stmt_, col)));
    }
    [[nodiscard]] std::string_view blob(int col) const {
        const auto* p = sqlite3_column_blob(stmt_, col);
        return p == nullptr ? std::string_view{}
                            : std::string_view(static_cast<const char*>(p),
                                               static_cast<std::size_t>(sqlite3_column_bytes(stmt_, col)));
    }

private:
    void check(int rc) const {
        if (rc != SQLITE_OK) throw knowledge_failure(errc::failed, sqlite3_errmsg(db_));
    }
    sqlite3* db_;
    sqlite3_stmt* stmt_ = nullptr;
};

inline void exec(sqlite3* db, const std::string& sql) {
    char* err = nullptr;
    if (sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
        std::string msg = err != nullptr ? err : sqlite3_errmsg(db);
        sqlite3_free(err);
        throw knowledge_failure(errc::failed, msg);
    }
}

inline std::int64_t scalar(sqlite3* db, std::string_view sql) {
    statement s(db, sql);
    return s.step() ? s.int64(0) : 0;
}

// A transaction rolled back unless committed.
class transaction {
public:
    explicit transaction(sqlite3* db) : db_(db) { exec(db_, "BEGIN IMMEDIATE"); }
    ~transaction() {
        if (!done_) sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
    }
    transaction(const transaction&) = delete;
    transaction& operator=(const transaction&) = delete;
    void commit() {
        exec(db_, "COMMIT");
        done_ = true;
    }

private:
    sqlite3* db_;
    bool done_ = false;
};

}  // namespace fiskai::knowledge::detail
