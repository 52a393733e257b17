// read_regular_file: a whole regular file, bounded; FIFOs and devices refused without a read.

#include "temp_dir.hpp"

#include <fiskai/gocompat/file.hpp>

#include <catch2/catch.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace fs = std::filesystem;
using fiskai::gocompat::file_check;
using fiskai::gocompat::read_regular_file;

namespace {

using fiskai::test::temp_dir;

struct descriptor {
    int fd;
    explicit descriptor(const fs::path& p) : fd(::open(p.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC)) {
        REQUIRE(fd >= 0);
    }
    ~descriptor() { ::close(fd); }
};

}  // namespace

TEST_CASE("gocompat: read_regular_file reads a regular file whole, up to its bound", "[gocompat][file]") {
    temp_dir dir;
    const auto path = dir.path / "f";
    const std::string content = std::string(10000, 'x') + "end";
    std::ofstream(path, std::ios::binary) << content;
    descriptor f(path);
    std::string out;
    auto read = read_regular_file(f.fd, content.size(), out);
    CHECK(read.status == file_check::ok);
    CHECK(read.size == content.size());
    CHECK(out == content);
    // The descriptor's offset is left alone: a second read gives the same.
    out.clear();
    CHECK(read_regular_file(f.fd, content.size(), out).status == file_check::ok);
    CHECK(out == content);

    read = read_regular_file(f.fd, content.size() - 1, out);
    CHECK(read.status == file_check::too_large);
    CHECK(read.size == content.size());

    const auto empty = dir.path / "empty";
    std::ofstream(empty).flush();
    descriptor e(empty);
    CHECK(read_regular_file(e.fd, 0, out).status == file_check::ok);
    CHECK(out.empty());
}

TEST_CASE("gocompat: read_regular_file refuses what is not a regular file without reading it", "[gocompat][file]") {
    temp_dir dir;
    const auto fifo = dir.path / "fifo";
    REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
    descriptor pipe(fifo);  // O_NONBLOCK: opening a FIFO with no writer does not wait
    std::string out;
    CHECK(read_regular_file(pipe.fd, 1 << 20, out).status == file_check::not_regular);
    descriptor zero("/dev/zero");
    CHECK(read_regular_file(zero.fd, 1 << 20, out).status == file_check::not_regular);
    descriptor directory(dir.path);
    CHECK(read_regular_file(directory.fd, 1 << 20, out).status == file_check::not_regular);
}
