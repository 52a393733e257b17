#pragma once
#include <fstream>
#include <sstream>
#include <string>

namespace fiskai::test {

inline std::string read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw std::runtime_error("cannot read " + path);
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

// The complete introspection document of the reference note (an app named `demo`).
inline std::string note_example() {
    return read_file(std::string(FISKAI_SOURCE_DIR) + "/tests/toolkit/data/note_example.json");
}

}  // namespace fiskai::test
