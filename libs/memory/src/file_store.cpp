// The file backend: one `<key>.md` per memory. Writes are staged in a `.memtmp-*` file in
// the same directory, then created with a hard link (fails atomically on an existing
// name) or replaced with rename (last writer wins). Reads never follow a symlink.
#include <fiskai/memory/store.hpp>

#include "file_backend.hpp"

#include <fiskai/jetstream/offload.hpp>
#include <fiskai/gocompat/file.hpp>
#include <fiskai/gocompat/json.hpp>
#include <fiskai/gocompat/quote.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace fiskai::memory {

namespace fs = std::filesystem;

namespace {

// File writes are never abandoned (serve.md Amendment 6): a started write finishes and
// reports, whatever happens to the awaiting coroutine.
using jetstream::offload_to_completion;

error storage(std::string message) { return make_error(errc::storage, std::move(message)); }
error storage(std::string_view what, int err) { return storage(fmt::format("{}: {}", what, std::strerror(err))); }

constexpr std::string_view extension = ".md";

class file_store;

class file_view final : public view {
public:
    explicit file_view(std::shared_ptr<const file_store> s) : store_(std::move(s)) {}
    boost::asio::awaitable<result<std::vector<item>>> list() override;
    boost::asio::awaitable<result<entry>> read(std::string key) override;
    boost::asio::awaitable<result<void>> write(std::string key, std::string description, std::string content,
                                               bool overwrite) override;
    boost::asio::awaitable<result<bool>> remove(std::string key) override;

private:
    std::shared_ptr<const file_store> store_;
};

class file_store final : public store, public std::enable_shared_from_this<file_store> {
public:
    file_store(std::string dir, boost::asio::any_io_executor blocking)
        : dir_(std::move(dir)), blocking_(std::move(blocking)) {}

    std::unique_ptr<view> open_view() override { return std::make_unique<file_view>(shared_from_this()); }
    [[nodiscard]] std::string location() const override { return dir_; }

    [[nodiscard]] const std::string& dir() const { return dir_; }
    [[nodiscard]] const boost::asio::any_io_executor& blocking() const { return blocking_; }
    [[nodiscard]] std::string path_of(std::string_view key) const {
        return dir_ + "/" + std::string(key) + std::string(extension);
    }

    // A memory file is its header and at most max_content_bytes; the bound leaves room for
    // files edited by hand while refusing one that would fill memory.
    static constexpr std::uint64_t max_file_bytes = std::uint64_t{1} << 20;

    // The whole value of a memory file, refusing symlinks, anything not regular, and any
    // larger than max_file_bytes.
    static result<std::string> read_value(const std::string& path) {
        const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
        if (fd < 0) {
            const int err = errno;
            if (err == ENOENT) return make_error(errc::not_exist);
            if (err == ELOOP) {
                return storage(
                    fmt::format("memory file {} is a symbolic link, which is never followed", gocompat::quote(path)));
            }
            return storage(fmt::format("open {}", path), err);
        }
        std::string data;
        const auto read = gocompat::read_regular_file(fd, max_file_bytes, data);
        ::close(fd);
        switch (read.status) {
            case gocompat::file_check::ok: return data;
            case gocompat::file_check::not_regular:
                return storage(fmt::format("memory file {} is not a regular file", gocompat::quote(path)));
            case gocompat::file_check::too_large:
                return storage(
                    fmt::format("memory file {} is larger than {} bytes; a memory holds at most {} bytes "
                                "of content",
                                gocompat::quote(path), max_file_bytes, max_content_bytes));
            case gocompat::file_check::failed: break;
        }
        return storage(fmt::format("read {}", path), read.error);
    }

    // The keys of regular `<key>.md` files whose stem is a valid key.
    static result<std::vector<std::string>> key_files(const std::string& dir) {
        DIR* d = ::opendir(dir.c_str());
        if (d == nullptr) return storage(fmt::format("reading memory directory {}", gocompat::quote(dir)), errno);
        std::vector<std::string> keys;
        while (const dirent* e = ::readdir(d)) {
            const std::string_view name(e->d_name);
            if (name.size() <= extension.size() || !name.ends_with(extension)) continue;
            const auto key = name.substr(0, name.size() - extension.size());
            if (!validate_key(key)) continue;
            struct stat st {};
            if (::fstatat(::dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode)) continue;
            keys.emplace_back(key);
        }
        ::closedir(d);
        return keys;
    }

    static result<void> write_atomic(const std::string& dir, const std::string& path, const std::string& data,
                                     bool overwrite) {
        std::string tmp = dir + "/.memtmp-XXXXXX";
        const int fd = ::mkostemp(tmp.data(), O_CLOEXEC);
        if (fd < 0) return storage("staging memory write", errno);
        struct cleanup {
            const std::string& name;
            ~cleanup() { ::unlink(name.c_str()); }
        } remove_tmp{tmp};
        std::string_view rest = data;
        while (!rest.empty()) {
            const auto n = ::write(fd, rest.data(), rest.size());
            if (n < 0) {
                if (errno == EINTR) continue;
                const int err = errno;
                ::close(fd);
                return storage("writing memory value", err);
            }
            rest.remove_prefix(static_cast<std::size_t>(n));
        }
        if (::fchmod(fd, 0600) != 0 || ::close(fd) != 0) return storage("writing memory value", errno);
        if (overwrite) {
            if (::rename(tmp.c_str(), path.c_str()) != 0) return storage("replacing memory value", errno);
            return {};
        }
        if (::link(tmp.c_str(), path.c_str()) != 0) {
            if (errno == EEXIST) return make_error(errc::exists);
            return storage("creating memory value", errno);
        }
        return {};
    }

private:
    std::string dir_;
    boost::asio::any_io_executor blocking_;
};

boost::asio::awaitable<result<std::vector<item>>> file_view::list() {
    const std::string dir = store_->dir();
    auto job = [dir]() -> result<std::vector<item>> {
        auto keys = file_store::key_files(dir);
        if (!keys) return keys.error();
        std::vector<item> out;
        out.reserve(keys->size());
        for (const auto& key : *keys) {
            auto value = file_store::read_value(dir + "/" + key + std::string(extension));
            if (!value) continue;
            out.push_back(item{key, parse(*value).description});
        }
        std::sort(out.begin(), out.end(), [](const item& a, const item& b) { return a.key < b.key; });
        return out;
    };
    struct boxed {
        result<std::vector<item>> value = std::vector<item>{};
    };
    auto wrapped = [job = std::move(job)]() mutable { return boxed{job()}; };
    auto done = co_await offload_to_completion(store_->blocking(), std::move(wrapped));
    co_return std::move(done.value);
}

boost::asio::awaitable<result<entry>> file_view::read(std::string key) {
    if (auto k = validate_key(key); !k) co_return k.error();
    const std::string path = store_->path_of(key);
    struct boxed {
        result<entry> value = entry{};
    };
    auto job = [path]() -> boxed {
        auto value = file_store::read_value(path);
        if (!value) return {value.error()};
        return {parse(*value)};
    };
    auto done = co_await offload_to_completion(store_->blocking(), std::move(job));
    co_return std::move(done.value);
}

boost::asio::awaitable<result<void>> file_view::write(std::string key, std::string description, std::string content,
                                                      bool overwrite) {
    auto normalized = validate_write(key, description, content);
    if (!normalized) co_return normalized.error();
    std::string data = serialize(*normalized, content);
    const std::string dir = store_->dir();
    const std::string path = store_->path_of(key);
    struct boxed {
        result<void> value;
    };
    auto job = [dir, path, data = std::move(data), overwrite]() -> boxed {
        if (!overwrite) {
            // Best effort under concurrency, as Go: two creators may both pass the count.
            auto keys = file_store::key_files(dir);
            if (!keys) return {keys.error()};
            if (auto c = check_capacity(keys->size()); !c) return {c.error()};
        }
        return {file_store::write_atomic(dir, path, data, overwrite)};
    };
    auto done = co_await offload_to_completion(store_->blocking(), std::move(job));
    co_return std::move(done.value);
}

boost::asio::awaitable<result<bool>> file_view::remove(std::string key) {
    if (auto k = validate_key(key); !k) co_return k.error();
    const std::string path = store_->path_of(key);
    auto job = [path]() -> int { return ::unlink(path.c_str()) == 0 ? 0 : errno; };
    const int err = co_await offload_to_completion(store_->blocking(), std::move(job));
    if (err == 0) co_return true;
    if (err == ENOENT) co_return false;
    co_return storage(fmt::format("deleting memory {}", gocompat::quote(key)), err);
}

}  // namespace

std::shared_ptr<store> make_file_store(std::string directory, boost::asio::any_io_executor blocking) {
    if (directory.empty()) throw startup_error("creating memory directory: the directory is empty");
    std::error_code ec;
    const bool existed = fs::is_directory(directory, ec);
    if (!existed) {
        fs::create_directories(directory, ec);
        if (ec) {
            throw startup_error(
                fmt::format("creating memory directory {}: {}", gocompat::quote(directory), ec.message()));
        }
        fs::permissions(directory, fs::perms::owner_all, fs::perm_options::replace, ec);
    }
    if (!fs::is_directory(directory, ec)) {
        throw startup_error(fmt::format("creating memory directory {}: not a directory", gocompat::quote(directory)));
    }
    return std::make_shared<file_store>(std::move(directory), std::move(blocking));
}

namespace detail {

std::string resolve_directory(std::string_view option_directory, std::string_view identity,
                              std::string_view store_dir) {
    fs::path dir = option_directory.empty() ? fs::path("memory") / std::string(identity) : fs::path(option_directory);
    if (!store_dir.empty() && dir.is_relative()) dir = fs::path(store_dir) / dir;
    return dir.lexically_normal().string();
}

std::shared_ptr<store> file_store_factory(std::string_view options_json, const context& ctx) {
    const auto options = decode_options(options_json, "file memory", {"directory"});
    std::string directory;
    if (const auto* d = options.if_contains("directory")) {
        if (!d->is_string()) {
            throw startup_error(fmt::format("invalid file memory options: \"directory\" is a {}, want a string",
                                            gocompat::json_kind_name(*d)));
        }
        directory = std::string(d->get_string());
    }
    return make_file_store(resolve_directory(directory, ctx.identity, ctx.store_dir), ctx.blocking);
}

}  // namespace detail

}  // namespace fiskai::memory
