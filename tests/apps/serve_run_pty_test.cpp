// `fisk-ai-serve run` at a pseudo-terminal answering an approval (serve.md §9.1, §12 "apps"):
// the model asks for a confirm-gated command of the demo application, the approval reaches
// the terminal as a prompt, the test waits for the prompt and types the answer, the command
// runs and the final text is on stdout. The run's stdin and stdout are the terminal; its
// stderr (events and the prompt) goes to a file, so the two streams stay apart.

#include "app_test_support.hpp"
#include "fake_llm_process.hpp"

#include <catch2/catch.hpp>

#include <fmt/format.h>

#include <cerrno>
#include <csignal>
#include <fcntl.h>
#include <poll.h>
#include <pty.h>
#include <string>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>
#include <vector>

using namespace fiskai;
using namespace std::chrono_literals;
using Catch::Matchers::Contains;

namespace {

// A child on the slave side of a new pseudo-terminal; the test holds the master.
class pty_child {
public:
    pty_child(std::vector<std::string> argv, std::vector<std::string> env, const std::string& stderr_path) {
        for (char** e = environ; *e; ++e) env.emplace_back(*e);
        std::vector<char*> args;
        for (auto& a : argv) args.push_back(a.data());
        args.push_back(nullptr);
        std::vector<char*> envp;
        for (auto& e : env) envp.push_back(e.data());
        envp.push_back(nullptr);
        pid_ = ::forkpty(&master_, nullptr, nullptr, nullptr);
        if (pid_ < 0) throw std::runtime_error("forkpty failed");
        if (pid_ == 0) {
            // Only async-signal-safe calls between fork and exec.
            const int err = ::open(stderr_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
            if (err >= 0) ::dup2(err, STDERR_FILENO);
            ::execve(args[0], args.data(), envp.data());
            ::_exit(127);
        }
        // No echo: what the test types does not come back as the program's output.
        termios t{};
        if (::tcgetattr(master_, &t) == 0) {
            t.c_lflag &= ~static_cast<tcflag_t>(ECHO);
            ::tcsetattr(master_, TCSANOW, &t);
        }
    }
    ~pty_child() {
        if (pid_ > 0) {
            ::kill(pid_, SIGKILL);
            ::waitpid(pid_, nullptr, 0);
        }
        if (master_ >= 0) ::close(master_);
    }
    pty_child(const pty_child&) = delete;
    pty_child& operator=(const pty_child&) = delete;

    void signal(int sig) const { ::kill(pid_, sig); }

    void type(const std::string& text) const {
        REQUIRE(::write(master_, text.data(), text.size()) == static_cast<ssize_t>(text.size()));
    }

    // Reads what the program wrote to the terminal until it closes it (EIO on Linux) or the
    // deadline passes; returns the exit code (128 + signal), or -1 when it did not end.
    int finish(std::chrono::milliseconds limit) {
        const auto end = std::chrono::steady_clock::now() + limit;
        for (;;) {
            const auto left =
                std::chrono::duration_cast<std::chrono::milliseconds>(end - std::chrono::steady_clock::now());
            if (left.count() <= 0) return -1;
            pollfd fd{master_, POLLIN, 0};
            if (::poll(&fd, 1, static_cast<int>(left.count())) <= 0) continue;
            char buf[4096];
            const auto n = ::read(master_, buf, sizeof buf);
            if (n > 0) {
                output_.append(buf, static_cast<std::size_t>(n));
                continue;
            }
            if (n < 0 && errno == EINTR) continue;
            break;
        }
        int status = 0;
        if (::waitpid(pid_, &status, 0) != pid_) return -1;
        pid_ = -1;
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    }

    // What reached the terminal (the program's stdout), carriage returns removed.
    [[nodiscard]] std::string output() const {
        std::string out;
        for (char c : output_)
            if (c != '\r') out.push_back(c);
        return out;
    }

private:
    pid_t pid_ = -1;
    int master_ = -1;
    std::string output_;
};

// The fake model playing `script`, and an agent config (file sessions under `dir`) using it.
struct fake_agent {
    fake_agent(const test::scratch_dir& dir, const std::string& script)
        : fake(FISKAI_FAKE_LLM, std::vector<std::string>{"--script", script, "--port", "0", "--exit-with-parent"}),
          config(dir.write("agent.yaml", fmt::format(R"(identity: tester
system_prompt: You help.
application_path: {}
llm:
  model: fake
  base_url: http://127.0.0.1:{}
  max_retries: 0
harness:
  sessions:
    backend: file
    options:
      directory: {}
)",
                                                     FISK_DEMO_PATH, fake.port(), (dir.path / "runs").string()))) {}

    test::fake_llm_process fake;
    std::string config;
};

}  // namespace

TEST_CASE("run at a pseudo-terminal: the approval prompt is answered, the gated command runs, the answer is on stdout",
          "[serve_run][pty]") {
    test::scratch_dir dir;
    const auto script = dir.write("script.json", R"({"conversations":[
 {"name":"remove","when":{"prompt_contains":"remove"},"steps":[
  {"reply":{"content":[{"type":"text","text":"Removing it."},
   {"type":"tool_use","name":"stream_rm","input":{"name":"ORDERS"}}],"stop_reason":"tool_use"}},
  {"expect":{"last_tool_result_contains":"removed stream ORDERS"},
   "reply":{"content":[{"type":"text","text":"ORDERS is gone."}],"stop_reason":"end_turn"}}]}]})");
    const fake_agent agent(dir, script);
    const auto& config = agent.config;
    const auto err_path = (dir.path / "run.err").string();
    pty_child run({FISK_AI_SERVE_PATH, "run", "--config", config, "remove the ORDERS stream"},
                  {"ANTHROPIC_API_KEY=test-key"}, err_path);

    // The prompt names the gated tool and its command line, and waits for the human.
    const std::string prompt = "Allow once / allow for this Run / Deny [o/r/D] ";
    const bool asked = test::wait_until([&] { return test::slurp(err_path).find(prompt) != std::string::npos; }, 30s);
    INFO(test::slurp(err_path));
    REQUIRE(asked);
    CHECK_THAT(test::slurp(err_path), Contains("? confirmation required: \"stream_rm\" carries tag \"ai:confirm\"\n"
                                               "  tool stream_rm: stream rm -- ORDERS\n"));
    // Not run before the answer.
    CHECK_THAT(test::slurp(err_path), !Contains("removed stream ORDERS"));
    run.type("o\r");

    const int code = run.finish(30s);
    const auto err = test::slurp(err_path);
    INFO(err);
    CHECK(code == 0);
    CHECK_THAT(err,
               Contains(R"(← stream_rm ok: {"command":"stream rm -- ORDERS","output":"removed stream ORDERS\n"})"));
    CHECK(run.output() == "ORDERS is gone.\n");
}

TEST_CASE("run --chat at a pseudo-terminal: a Ctrl-C at the prompt ends the chat at once", "[serve_run][pty]") {
    test::scratch_dir dir;
    const auto script = dir.write("script.json", R"({"conversations":[
 {"name":"quick","steps":[{"reply":{"content":[{"type":"text","text":"Forty-two."}],"stop_reason":"end_turn"}}]}]})");
    const fake_agent agent(dir, script);
    const auto& config = agent.config;
    const auto err_path = (dir.path / "chat.err").string();
    pty_child run({FISK_AI_SERVE_PATH, "run", "--chat", "--config", config, "what is the answer"},
                  {"ANTHROPIC_API_KEY=test-key"}, err_path);
    // The answer, then the prompt for the next turn, read from the terminal on a thread.
    const bool prompted = test::wait_until(
        [&] {
            const auto err = test::slurp(err_path);
            return err.size() >= 2 && err.substr(err.size() - 2) == "> ";
        },
        30s);
    INFO(test::slurp(err_path));
    REQUIRE(prompted);
    run.signal(SIGINT);               // the terminal's Ctrl-C, to this process alone
    const int code = run.finish(8s);  // well inside the 10 s a stuck read would take to be cut off
    INFO(test::slurp(err_path));
    CHECK(code == 0);
    CHECK(run.output() == "Forty-two.\n");
}
