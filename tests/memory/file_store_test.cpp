// The memory file backend: the shared contract, then files: symlinks, invalid names,
// the capacity limit, directory defaults and rebasing (agent-llm-state.md §6, 63).
#include <fiskai/memory/store.hpp>

#include "temp_dir.hpp"
#include "store_contract.hpp"

#include <boost/asio/thread_pool.hpp>
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include <sys/stat.h>
#include <unistd.h>

namespace mem = fiskai::memory;
namespace fs = std::filesystem;
using fiskai::test::memory_contract::await;

namespace {

using fiskai::test::temp_dir;

void write_file(const fs::path& p, const std::string& text) { std::ofstream(p, std::ios::binary) << text; }

}  // namespace

TEST_CASE("memory file backend: the store contract", "[memory][file][contract]") {
    temp_dir dir;
    boost::asio::thread_pool pool(2);
    int n = 0;
    fiskai::test::memory_contract::run_store_contract(
        [&] { return mem::make_file_store((dir.path / ("s" + std::to_string(n++))).string(), pool.get_executor()); });
}

TEST_CASE("memory file backend: files on disk", "[memory][file]") {
    temp_dir dir;
    boost::asio::thread_pool pool(2);
    const auto root = dir.path / "mem";
    auto store = mem::make_file_store(root.string(), pool.get_executor());
    auto v = store->open_view();
    struct stat st {};
    REQUIRE(::stat(root.c_str(), &st) == 0);
    CHECK((st.st_mode & 0777) == 0700);

    SECTION("one <key>.md per memory in the Go value format; no temp files left") {
        REQUIRE(await(v->write("build", "how\nit builds", "make", false)).has_value());
        std::ifstream in(root / "build.md");
        std::string text((std::istreambuf_iterator<char>(in)), {});
        CHECK(text == "---\ndescription: how it builds\n---\n\nmake");
        std::size_t files = 0;
        for ([[maybe_unused]] const auto& e : fs::directory_iterator(root)) ++files;
        CHECK(files == 1);
    }
    SECTION("symlinks are neither followed nor listed") {
        write_file(dir.path / "secret.md", "---\ndescription: secret\n---\n\ntop secret");
        fs::create_symlink(dir.path / "secret.md", root / "link.md");
        auto r = await(v->read("link"));
        REQUIRE(!r.has_value());
        CHECK(r.error().code == mem::errc::storage);
        CHECK(r.error().message.find("symbolic link") != std::string::npos);
        auto l = await(v->list());
        REQUIRE(l.has_value());
        CHECK(l->empty());
    }
    SECTION("a FIFO is refused without a read, and a file past 1 MiB is refused") {
        REQUIRE(::mkfifo((root / "pipe.md").c_str(), 0600) == 0);
        auto pipe = await(v->read("pipe"));
        REQUIRE(!pipe.has_value());
        CHECK(pipe.error().message.find("is not a regular file") != std::string::npos);
        write_file(root / "huge.md", "---\ndescription: huge\n---\n\n" + std::string((1 << 20) + 1, 'x'));
        auto huge = await(v->read("huge"));
        REQUIRE(!huge.has_value());
        CHECK(huge.error().message.find("is larger than 1048576 bytes; a memory holds at most 65536 bytes") !=
              std::string::npos);
        write_file(root / "ok.md", "---\ndescription: fine\n---\n\nx");
        auto l = await(v->list());
        REQUIRE(l.has_value());
        REQUIRE(l->size() == 1);
        CHECK((*l)[0] == mem::item{"ok", "fine"});
    }
    SECTION("invalid names, other files and directories are not listed") {
        write_file(root / "ok.md", "---\ndescription: fine\n---\n\nx");
        write_file(root / "bad name.md", "x");
        write_file(root / ".dot.md", "x");
        write_file(root / "notes.txt", "x");
        write_file(root / ".memtmp-abc", "x");
        fs::create_directory(root / "dir.md");
        auto l = await(v->list());
        REQUIRE(l.has_value());
        REQUIRE(l->size() == 1);
        CHECK((*l)[0] == mem::item{"ok", "fine"});
    }
    SECTION("a headerless file reads as body with an empty description") {
        write_file(root / "raw.md", "plain text");
        auto e = await(v->read("raw"));
        REQUIRE(e.has_value());
        CHECK(*e == mem::entry{"", "plain text"});
    }
    SECTION("creating past 1024 entries is refused; overwriting is not") {
        for (int i = 0; i < 1024; ++i) write_file(root / ("k" + std::to_string(i) + ".md"), "x");
        auto r = await(v->write("one-more", "d", "c", false));
        REQUIRE(!r.has_value());
        CHECK(r.error().code == mem::errc::full);
        CHECK(r.error().message ==
              "memory is full: 1024 entries, limit is 1024; delete an entry before creating another");
        CHECK(await(v->write("k1", "d", "c", true)).has_value());
    }
}

TEST_CASE("memory file backend: options, defaults and rebasing", "[memory][file][options]") {
    temp_dir dir;
    boost::asio::thread_pool pool(1);
    mem::context ctx{pool.get_executor(), dir.path.string(), "ops-agent", nullptr};
    CHECK(mem::make_store("file", "", ctx)->location() == (dir.path / "memory" / "ops-agent").string());
    CHECK(mem::make_store("file", R"({"directory":"notes"})", ctx)->location() == (dir.path / "notes").string());
    CHECK(mem::make_store("file", R"({"directory":")" + (dir.path / "abs").string() + R"("})", ctx)->location() ==
          (dir.path / "abs").string());
    CHECK_THROWS_WITH(mem::make_store("file", R"({"bucket":"x"})", ctx),
                      R"(invalid file memory options: json: unknown field "bucket" (known: directory))");
    CHECK_THROWS_WITH(mem::make_store("kv", "", ctx),
                      Catch::Matchers::StartsWith(R"(unknown memory backend "kv": known backends are [file)"));
    // Without a store dir a relative directory is under the working directory.
    const auto cwd = fs::current_path();
    fs::current_path(dir.path);
    mem::context bare{pool.get_executor(), "", "me", nullptr};
    const auto location = mem::make_store("file", "", bare)->location();
    fs::current_path(cwd);
    CHECK(location == "memory/me");
    CHECK(fs::is_directory(dir.path / "memory" / "me"));
}
