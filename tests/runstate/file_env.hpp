#pragma once
// A temporary directory and a blocking pool for the file backend's tests.

#include "temp_dir.hpp"

#include <boost/asio/thread_pool.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

namespace fiskai::test {

using fiskai::test::temp_dir;

inline std::string read_file(const std::filesystem::path& p) {
    std::ifstream in(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), {}};
}

inline void write_file(const std::filesystem::path& p, const std::string& text) {
    std::ofstream out(p, std::ios::binary | std::ios::trunc);
    out << text;
}

}  // namespace fiskai::test
