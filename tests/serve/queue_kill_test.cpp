// Fault: kill -9 of the worker holding a job right after its first tool result (serve.md
// §7.5). A second worker takes the job once the ack wait passes, resumes the session from
// the journal, and the answer lands once, with the fake LLM's log showing no repeated step
// and the tool not run again.
#include "queue_support.hpp"

#include <csignal>
#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace queue_test;

namespace {

class child_worker {
public:
    explicit child_worker(std::vector<std::string> args) {
        int out[2];
        REQUIRE(::pipe(out) == 0);
        posix_spawn_file_actions_t actions;
        posix_spawn_file_actions_init(&actions);
        posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
        posix_spawn_file_actions_addclose(&actions, out[0]);
        args.insert(args.begin(), QUEUE_WORKER_CHILD);
        std::vector<char*> argv;
        for (auto& a : args) argv.push_back(a.data());
        argv.push_back(nullptr);
        const int rc = ::posix_spawn(&pid_, QUEUE_WORKER_CHILD, &actions, nullptr, argv.data(), environ);
        posix_spawn_file_actions_destroy(&actions);
        ::close(out[1]);
        REQUIRE(rc == 0);
        std::string line;
        const auto deadline = std::chrono::steady_clock::now() + 20s;
        while (line.find('\n') == std::string::npos && std::chrono::steady_clock::now() < deadline) {
            pollfd fd{out[0], POLLIN, 0};
            if (::poll(&fd, 1, 200) <= 0) continue;
            char buffer[64];
            const auto n = ::read(out[0], buffer, sizeof buffer);
            if (n <= 0) break;
            line.append(buffer, static_cast<std::size_t>(n));
        }
        ::close(out[0]);
        REQUIRE(line == "ready\n");
    }
    ~child_worker() { kill(); }
    void kill() {
        if (pid_ <= 0) return;
        ::kill(pid_, SIGKILL);
        int status = 0;
        ::waitpid(pid_, &status, 0);
        pid_ = -1;
    }

private:
    pid_t pid_ = -1;
};

std::size_t count_lines(const std::string& path, const std::vector<std::string>& needles) {
    std::ifstream in(path);
    std::string line;
    std::size_t n = 0;
    while (std::getline(in, line)) {
        bool all = true;
        for (const auto& s : needles) all = all && line.find(s) != std::string::npos;
        if (all) ++n;
    }
    return n;
}

}  // namespace

TEST_CASE("queue fault: kill -9 after the first tool result; another worker resumes and answers once",
          "[serve][queue][nats][fault]") {
    world w(provision{3s});
    child_worker a({w.nats.broker.url(), std::to_string(w.llm_port), (w.dir / "runs").string(), "3"});
    w.enqueue("K1", "TOOL please");
    // The child asked for step 1, which carries the tool's result: the fake hangs on it.
    REQUIRE(w.until([&] { return count_lines(w.llm_log, {R"("conversation":"tool")", R"("step":1)"}) == 1; }, 30s));
    a.kill();

    const auto killed = std::chrono::steady_clock::now();
    worker b(w, w.options(3s));
    auto got = w.answer("K1", 30s);
    REQUIRE(got);
    CHECK(std::chrono::steady_clock::now() - killed < 20s);
    CHECK(stored_as<a2a::task_result>(*got).text == "tool answer");
    REQUIRE(w.until([&] { return b.channel->in_flight() == 0; }));
    CHECK(w.stream().state.msgs == 0);
    // Step 0 (the tool call) was asked once; step 1 twice (the hung attempt and the resume).
    CHECK(count_lines(w.llm_log, {R"("conversation":"tool")", R"("step":0)"}) == 1);
    CHECK(count_lines(w.llm_log, {R"("conversation":"tool")", R"("step":1)"}) == 2);
    // The tool ran in the killed worker only: its result came from the journal here.
    CHECK(*w.probes == 0);
    // The answer was stored once: the bucket is fresh, so one put is revision 1.
    CHECK(w.answer("K1", 1s)->revision == 1);
}
