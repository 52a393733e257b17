#pragma once
// Runs fiskai-fake-llm as a child process for a test or a benchmark (listening_child.hpp):
// `args` are its options (--script, --port 0, …); the port comes from its listening line.

#include "../listening_child.hpp"

#include <filesystem>
#include <fstream>
#include <memory>

namespace fiskai::test {

class fake_llm_process : public listening_child {
public:
    fake_llm_process(const std::string& binary, std::vector<std::string> args,
                     std::chrono::milliseconds startup = std::chrono::seconds(10))
        : listening_child("fake-llm", binary, std::move(args), startup) {}
};

// Writes `script` to `<dir>/script.json` and starts `binary` on it, on any free port, gone
// with the test process; `extra` adds options (`--log <file>`, …).
inline std::unique_ptr<fake_llm_process> start_scripted_fake_llm(const std::string& binary,
                                                                 const std::filesystem::path& dir,
                                                                 const std::string& script,
                                                                 std::vector<std::string> extra = {}) {
    const auto script_path = (dir / "script.json").string();
    std::ofstream(script_path) << script;
    std::vector<std::string> args{"--script", script_path, "--port", "0"};
    args.insert(args.end(), extra.begin(), extra.end());
    args.emplace_back("--exit-with-parent");
    return std::make_unique<fake_llm_process>(binary, std::move(args));
}

}  // namespace fiskai::test
