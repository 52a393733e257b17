#pragma once
// Runs fiskai-fake-llm as a child process for a test or a benchmark (listening_child.hpp):
// `args` are its options (--script, --port 0, …); the port comes from its listening line.

#include "../listening_child.hpp"

namespace fiskai::test {

class fake_llm_process : public listening_child {
public:
    fake_llm_process(const std::string& binary, std::vector<std::string> args,
                     std::chrono::milliseconds startup = std::chrono::seconds(10))
        : listening_child("fake-llm", binary, std::move(args), startup) {}
};

}  // namespace fiskai::test
