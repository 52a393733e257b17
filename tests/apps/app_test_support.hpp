#pragma once
// Running the executables under test and writing scratch files.

#include "async_test.hpp"

#include <fiskai/toolkit/process.hpp>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace fiskai::test {

struct command_output {
    int exit_code = -1;
    std::string out;  // stdout and stderr as the chosen redirections leave them
};

// Runs a shell command line (so tests can redirect streams) with a deadline.
inline command_output run_shell(const std::string& script, std::chrono::seconds timeout = std::chrono::seconds(60)) {
    toolkit::process_spec s;
    s.executable = "/bin/sh";
    s.arguments = {"-c", script};
    s.environment = toolkit::scrubbed_environment();
    s.timeout = timeout;
    s.output_cap = 16 * 1024 * 1024;
    auto r = run_awaitable(toolkit::run_process(s), timeout + std::chrono::seconds(10));
    if (r.state != toolkit::process_result::status::exited)
        throw std::runtime_error("command did not finish: " + script);
    return {r.exit_code, r.output};
}

struct scratch_dir {
    std::filesystem::path path;
    scratch_dir() {
        char tmpl[] = "/tmp/fiskai-app-test-XXXXXX";
        path = ::mkdtemp(tmpl);
    }
    ~scratch_dir() { std::filesystem::remove_all(path); }
    std::string write(const std::string& name, const std::string& content) const {
        const auto p = path / name;
        std::ofstream(p) << content;
        return p.string();
    }
};

}  // namespace fiskai::test
