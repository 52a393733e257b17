#pragma once
// Runs fiskai-fake-slack as a child process for a test (listening_child.hpp) on an ephemeral
// port, ending with its parent; `args` are further options (--resend-ms, …).

#include "../listening_child.hpp"

namespace fiskai::test {

class fake_slack_process : public listening_child {
public:
    explicit fake_slack_process(const std::string& binary, std::vector<std::string> args = {})
        : listening_child("fake-slack", binary, with_defaults(std::move(args))) {}

private:
    static std::vector<std::string> with_defaults(std::vector<std::string> args) {
        args.insert(args.begin(), {"--port", "0", "--exit-with-parent"});
        return args;
    }
};

}  // namespace fiskai::test
