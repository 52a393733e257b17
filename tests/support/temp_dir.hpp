#pragma once
// A fresh directory under the system's temporary directory for one test, removed with
// everything in it (its permissions restored first, for tests that take them away).

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <string_view>

namespace fiskai::test {

class temp_dir {
public:
    explicit temp_dir(std::string_view prefix = "fiskai-test") {
        std::string pattern = (std::filesystem::temp_directory_path() / (std::string(prefix) + "-XXXXXX")).string();
        if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed for " + pattern);
        path = pattern;
    }
    ~temp_dir() {
        std::error_code ec;
        std::filesystem::permissions(path, std::filesystem::perms::owner_all, ec);
        std::filesystem::remove_all(path, ec);
    }
    temp_dir(const temp_dir&) = delete;
    temp_dir& operator=(const temp_dir&) = delete;

    [[nodiscard]] std::string str() const { return path.string(); }

    // Writes `text` to `relative` in the directory (its parents made); returns its path.
    std::string write(const std::string& relative, const std::string& text) const {
        const auto file = path / relative;
        std::filesystem::create_directories(file.parent_path());
        std::ofstream(file, std::ios::binary) << text;
        return file.string();
    }

    std::filesystem::path path;
};

}  // namespace fiskai::test
