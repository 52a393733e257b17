// `fisk-ai-a2a ask` as a user runs it: the real binary as a child process, a real broker,
// and a scripted worker in this process. Exit codes 0/1/2/3/4/5, --json lines, the prompt
// from stdin, usage errors, flags into the request, questions without a TTY, Ctrl-C.

#include "async_test.hpp"
#include "fake_task_worker.hpp"

#include <fiskai/a2a/validator.hpp>
#include <fiskai/conns/embedded_broker.hpp>

#include <catch2/catch.hpp>

#include <csignal>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <spawn.h>
#include <sstream>
#include <sys/wait.h>
#include <thread>

extern char** environ;

template <typename T>
struct Catch::StringMaker<boost::system::result<T, fiskai::a2a::error>> {
    static std::string convert(const boost::system::result<T, fiskai::a2a::error>& r) {
        return r ? std::string("{value}") : "{error: " + r.error().message + "}";
    }
};

namespace fs = std::filesystem;
namespace conns = fiskai::conns;
using namespace task_test;

namespace {

std::string slurp(const fs::path& p) {
    std::ifstream in(p);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

using fiskai::test::wait_until;

// The child: stdin from a file (or /dev/null), stdout and stderr into files.
struct child {
    pid_t pid = -1;
    fs::path out, err;
    int status = -1;

    child(const fs::path& dir, const std::string& name, std::vector<std::string> args, const std::string& xdg,
          const std::string& stdin_path = "/dev/null")
        : out(dir / (name + ".out")), err(dir / (name + ".err")) {
        posix_spawn_file_actions_t fa;
        posix_spawn_file_actions_init(&fa);
        posix_spawn_file_actions_addopen(&fa, 0, stdin_path.c_str(), O_RDONLY, 0);
        posix_spawn_file_actions_addopen(&fa, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
        posix_spawn_file_actions_addopen(&fa, 2, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
        std::vector<std::string> env;
        for (char** e = environ; *e; ++e) env.emplace_back(*e);
        env.push_back(xdg);
        args.insert(args.begin(), FISK_AI_A2A_PATH);
        std::vector<char*> argv, envp;
        for (auto& a : args) argv.push_back(a.data());
        argv.push_back(nullptr);
        for (auto& e : env) envp.push_back(e.data());
        envp.push_back(nullptr);
        REQUIRE(posix_spawn(&pid, argv[0], &fa, nullptr, argv.data(), envp.data()) == 0);
        posix_spawn_file_actions_destroy(&fa);
    }
    ~child() {
        if (status == -1) {
            ::kill(pid, SIGKILL);
            ::waitpid(pid, &status, 0);
        }
    }
    bool exited() { return status != -1 || ::waitpid(pid, &status, WNOHANG) == pid; }
    int wait(std::chrono::seconds limit = 30s) {
        REQUIRE(wait_until([&] { return exited(); }, limit));
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    }
    std::string stdout_text() const { return slurp(out); }
    std::string stderr_text() const { return slurp(err); }
};

struct ask_env {
    conns::embedded_broker broker{conns::broker_options{.jetstream = false}};
    std::unique_ptr<conns::connection> worker_conn;
    fs::path dir;
    std::string xdg;

    ask_env() {
        conns::connect_options o;
        o.name = conns::connection_name("worker");
        worker_conn = conns::connection::dial_url(broker.url(), o);
        char tmpl[] = "/tmp/fiskai-ask-XXXXXX";
        dir = ::mkdtemp(tmpl);
        fs::create_directories(dir / "xdg/nats/context");
        std::ofstream(dir / "xdg/nats/context/local.json") << R"({"url":")" << broker.url() << R"("})";
        xdg = "XDG_CONFIG_HOME=" + (dir / "xdg").string();
    }
    ~ask_env() { fs::remove_all(dir); }

    std::unique_ptr<child> ask(const std::string& name, std::vector<std::string> args,
                               const std::string& stdin_path = "/dev/null") {
        args.insert(args.begin(), {"ask", "--context", "local"});
        return std::make_unique<child>(dir, name, std::move(args), xdg, stdin_path);
    }
};

void normal_run(task_run& t) {
    t.ack();
    t.event(a2a::status_block{1, "calling-llm", {}});
    t.event(a2a::tool_call_block{"toolu_1", "ls", a2a::raw_json::parse(R"({"path":"/"})").value()});
    t.event(a2a::tool_result_block{"toolu_1", false, "bin etc", std::nullopt});
    t.result("end_turn", "the root holds bin and etc");
}

}  // namespace

TEST_CASE("ask: a result exits 0 with the text on stdout and events on stderr", "[ask][app]") {
    ask_env env;
    fake_task_worker worker(*env.worker_conn, "svc", normal_run);
    auto p = env.ask("ok", {"svc", "list", "the", "root"});
    REQUIRE(p->wait() == 0);
    INFO(p->stderr_text());
    CHECK(p->stdout_text() == "the root holds bin and etc\n");
    CHECK(p->stderr_text().find("· calling-llm (iteration 1)") != std::string::npos);
    CHECK(p->stderr_text().find("→ ls {\"path\":\"/\"}") != std::string::npos);
    CHECK(p->stderr_text().find("← ls ok: bin etc") != std::string::npos);
    const auto reqs = worker.requests();
    REQUIRE(reqs.size() == 1);
    CHECK(reqs[0].prompt == "list the root");
    CHECK(reqs[0].sender.name == "fisk-ai-cli");
    CHECK(reqs[0].wants_stream());
    CHECK_FALSE(reqs[0].budget.has_value());
}

TEST_CASE("ask: the flags fill the request", "[ask][app]") {
    ask_env env;
    fake_task_worker worker(*env.worker_conn, "svc", normal_run);
    std::ofstream(env.dir / "ctx.txt") << "orders are in stream ORDERS";
    auto p = env.ask("flags", {"svc", "go", "--identity", "ops-bot", "--continue", "task-7", "--context-file",
                               (env.dir / "ctx.txt").string(), "--hint", "ls", "--hint", "stream_info", "--max-tokens",
                               "1000", "--max-iterations", "3", "--call-timeout", "90s", "--no-stream"});
    REQUIRE(p->wait() == 0);
    const auto reqs = worker.requests();
    REQUIRE(reqs.size() == 1);
    CHECK(reqs[0].sender.name == "ops-bot");
    CHECK(reqs[0].request == "task-7");
    CHECK(reqs[0].id != "task-7");
    CHECK(reqs[0].context == "orders are in stream ORDERS");
    CHECK(reqs[0].tool_hints == std::vector<std::string>{"ls", "stream_info"});
    REQUIRE(reqs[0].budget.has_value());
    CHECK(reqs[0].budget->max_tokens == 1000);
    CHECK(reqs[0].budget->max_iterations == 3);
    CHECK(reqs[0].budget->call_timeout == "90s");
    CHECK(reqs[0].stream == std::optional<bool>(false));
}

TEST_CASE("ask: a terminal error exits 1, a refusal 3, a suspended result 4", "[ask][app]") {
    ask_env env;
    SECTION("error") {
        fake_task_worker worker(*env.worker_conn, "svc", [](task_run& t) {
            t.ack();
            t.error("error", "run_failed", "the model said no");
        });
        auto p = env.ask("error", {"svc", "x"});
        REQUIRE(p->wait() == 1);
        CHECK(p->stderr_text().find("error (run_failed): the model said no") != std::string::npos);
        CHECK(p->stdout_text().empty());
    }
    SECTION("refusal") {
        fake_task_worker worker(*env.worker_conn, "svc", [](task_run& t) {
            t.ack(false, "the agent is shutting down and takes no new tasks; send it again");
            t.error("error", "shutting_down", "the agent is shutting down and takes no new tasks; send it again");
        });
        auto p = env.ask("refused", {"svc", "x"});
        REQUIRE(p->wait() == 3);
        CHECK(p->stderr_text().find("the agent refused the task: the agent is shutting down") != std::string::npos);
    }
    SECTION("suspended") {
        std::string task;
        fake_task_worker worker(*env.worker_conn, "svc", [&](task_run& t) {
            t.ack();
            t.result("suspended", "stopped before the second tool");
        });
        auto p = env.ask("suspended", {"svc", "x"});
        REQUIRE(p->wait() == 4);
        const auto r = worker.requests().at(0).request;
        // The hint names the same broker: the session is the worker's, the sender's and the task's.
        CHECK(p->stderr_text().find("suspended; continue with: fisk-ai-a2a ask svc --context local --continue " + r +
                                    " \"<prompt>\"") != std::string::npos);
    }
    SECTION("suspended, from another sender: the hint sends as that sender again") {
        fake_task_worker worker(*env.worker_conn, "svc", [&](task_run& t) {
            t.ack();
            t.result("suspended", "stopped before the second tool");
        });
        auto p = env.ask("suspended-as", {"svc", "x", "--identity", "ops-bot"});
        REQUIRE(p->wait() == 4);
        const auto request = worker.requests().at(0);
        CHECK(request.sender.name == "ops-bot");
        CHECK(p->stderr_text().find("suspended; continue with: fisk-ai-a2a ask svc --context local --identity ops-bot "
                                    "--continue " +
                                    request.request + " \"<prompt>\"") != std::string::npos);
    }
}

TEST_CASE("ask: nobody serving the agent exits 2 with the no-responders text", "[ask][app]") {
    ask_env env;
    auto p = env.ask("none", {"svc", "x"});
    REQUIRE(p->wait() == 2);
    CHECK(p->stderr_text().find("remote agent unavailable: no reply on \"choria.fisk-ai.request.svc\": nats: no "
                                "responders available for request") != std::string::npos);
}

TEST_CASE("ask: a --context-file that is a directory is refused, not sent as an empty context", "[ask][app]") {
    ask_env env;
    fake_task_worker worker(*env.worker_conn, "svc", normal_run);
    auto p = env.ask("context-dir", {"svc", "x", "--context-file", env.dir.string()});
    REQUIRE(p->wait() == 2);
    CHECK(p->stderr_text().find("cannot read --context-file \"" + env.dir.string() +
                                "\": it is a directory; pass a file") != std::string::npos);
    CHECK(worker.requests().empty());
}

TEST_CASE("ask: --json prints every message of the reply set, one a line", "[ask][app]") {
    ask_env env;
    fake_task_worker worker(*env.worker_conn, "svc", normal_run);
    auto p = env.ask("json", {"svc", "x", "--json"});
    REQUIRE(p->wait() == 0);
    std::istringstream lines(p->stdout_text());
    std::vector<a2a::message> got;
    for (std::string line; std::getline(lines, line);) {
        auto m = a2a::default_validator().check(line);
        INFO(line);
        REQUIRE(m);
        CHECK(a2a::encode(*m).value() == line);  // canonical encoding
        got.push_back(*m);
    }
    REQUIRE(got.size() == 5);
    for (std::size_t i = 0; i < got.size(); ++i) CHECK(a2a::header_of(got[i]).sequence == i + 1);
    CHECK(std::holds_alternative<a2a::task_ack>(got.front()));
    CHECK(std::holds_alternative<a2a::task_result>(got.back()));
    CHECK(p->stderr_text().find("→ ls") == std::string::npos);  // events are on stdout only
}

TEST_CASE("ask: the prompt comes from stdin when none is given, else it is a usage error", "[ask][app]") {
    ask_env env;
    fake_task_worker worker(*env.worker_conn, "svc", normal_run);
    std::ofstream(env.dir / "prompt.txt") << "from stdin\nsecond line\n";
    auto p = env.ask("stdin", {"svc"}, (env.dir / "prompt.txt").string());
    REQUIRE(p->wait() == 0);
    REQUIRE(worker.requests().size() == 1);
    CHECK(worker.requests()[0].prompt == "from stdin\nsecond line");

    auto empty = env.ask("empty", {"svc"});
    CHECK(empty->wait() == 2);
    CHECK(empty->stderr_text().find("no prompt") != std::string::npos);

    auto bad = env.ask("bad", {"svc", "x", "--idle-timeout", "soon"});
    CHECK(bad->wait() == 2);
    CHECK(bad->stderr_text().find("--idle-timeout: \"soon\": time: invalid duration \"soon\"; pass a Go duration "
                                  "such as 90s, 2m or 1h30m\n") != std::string::npos);

    auto both = env.ask("both", {"svc", "x", "--decline-questions", "--defer-questions"});
    CHECK(both->wait() == 2);
    CHECK(worker.requests().size() == 1);
}

TEST_CASE("ask: without a TTY a question is declined, or left open with --defer-questions", "[ask][app]") {
    ask_env env;
    fake_task_worker worker(*env.worker_conn, "svc", [](task_run& t) {
        t.ack();
        a2a::task_question q;
        q.question_id = "Q1";
        q.kind = "confirm";
        q.question = "Delete stream ORDERS?";
        q.window = "30s";
        t.send(std::move(q));
        auto answer =
            t.wait_for([](const inbound_message& m) { return m.body.find("v1.answer") != std::string::npos; }, 2s);
        t.result("end_turn", answer ? "answered" : "no answer");
    });
    // Without a terminal, questions are declined unless asked otherwise; --decline-questions
    // asks for it outright. Either way stderr says so, naming why.
    const std::vector<std::pair<std::vector<std::string>, std::string>> declining = {
        {{"svc", "x"}, "stdin is not a terminal"},
        {{"svc", "x", "--decline-questions"}, "--decline-questions"},
    };
    for (const auto& [args, why] : declining) {
        DYNAMIC_SECTION("declined: " << why) {
            auto p = env.ask("decline", args);
            REQUIRE(p->wait() == 0);
            CHECK(p->stdout_text() == "answered\n");
            const auto in = worker.inbound();
            REQUIRE(in.size() == 1);
            auto a = a2a::default_validator().check_as<a2a::task_answer>(in[0].body);
            REQUIRE(a);
            CHECK(a->declined);
            CHECK(a->reason == "the caller cannot ask a human");
            CHECK(a->question_id == "Q1");
            CHECK(a->sequence == 1);
            CHECK(p->stderr_text().find("declined question Q1 (" + why + "): Delete stream ORDERS?") !=
                  std::string::npos);
        }
    }
    SECTION("deferred") {
        auto p = env.ask("defer", {"svc", "x", "--defer-questions"});
        REQUIRE(p->wait() == 0);
        CHECK(p->stdout_text() == "no answer\n");
        CHECK(worker.inbound().empty());
        const auto r = worker.requests().at(0).request;
        CHECK(p->stderr_text().find("open question Q1: Delete stream ORDERS?") != std::string::npos);
        CHECK(p->stderr_text().find("open question Q1: continue with --continue " + r) != std::string::npos);
    }
}

TEST_CASE("ask: the first Ctrl-C sends cancel and the suspended result exits 4", "[ask][app]") {
    ask_env env;
    fake_task_worker worker(*env.worker_conn, "svc", [](task_run& t) {
        t.ack();
        t.event(a2a::status_block{1, "calling-llm", {}});
        auto cancel =
            t.wait_for([](const inbound_message& m) { return m.subject.find(".cancel.") != std::string::npos; }, 20s);
        if (!cancel) return;
        t.event(a2a::status_block{1, "stopping", {}});
        t.result("suspended", "stopped");
    });
    auto p = env.ask("cancel", {"svc", "x"});
    REQUIRE(wait_until([&] { return p->stderr_text().find("calling-llm") != std::string::npos; }, 20s));
    ::kill(p->pid, SIGINT);
    REQUIRE(p->wait() == 4);
    const auto in = worker.inbound();
    REQUIRE(in.size() == 1);
    auto c = a2a::default_validator().check_as<a2a::task_cancel>(in[0].body);
    REQUIRE(c);
    CHECK(c->reason == "interrupted at the terminal");
    CHECK(c->sequence == 1);
    CHECK(p->stderr_text().find("suspended; continue with: fisk-ai-a2a ask svc --context local --continue") !=
          std::string::npos);
}

TEST_CASE("ask: a second Ctrl-C exits 130", "[ask][app]") {
    ask_env env;
    fake_task_worker worker(*env.worker_conn, "svc", [](task_run& t) {
        t.ack();
        t.event(a2a::status_block{1, "calling-llm", {}});
    });
    auto p = env.ask("twice", {"svc", "x"});
    REQUIRE(wait_until([&] { return p->stderr_text().find("calling-llm") != std::string::npos; }, 20s));
    ::kill(p->pid, SIGINT);
    REQUIRE(wait_until([&] { return p->stderr_text().find("cancelling") != std::string::npos; }, 20s));
    ::kill(p->pid, SIGINT);
    REQUIRE(p->wait() == 130);
}

TEST_CASE("ask: silence past the (floored) idle limit exits 5", "[ask][app][slow]") {
    ask_env env;
    fake_task_worker worker(*env.worker_conn, "svc", [](task_run& t) { t.ack(); });
    const auto started = std::chrono::steady_clock::now();
    auto p = env.ask("idle", {"svc", "x", "--idle-timeout", "1s"});
    REQUIRE(p->wait(60s) == 5);
    CHECK(std::chrono::steady_clock::now() - started >= 30s);
    const auto r = worker.requests().at(0).request;
    CHECK(p->stderr_text().find("--idle-timeout 1s is below the 30s floor") != std::string::npos);
    CHECK(p->stderr_text().find("no message from \"svc\" for 30s; the task may still be running (wait, then "
                                "continue it with --continue " +
                                r + ")") != std::string::npos);
}

TEST_CASE("ask: at a TTY the prompter answers each kind of question", "[ask][app]") {
    ask_env env;
    const int master = ::posix_openpt(O_RDWR | O_NOCTTY);
    REQUIRE(master >= 0);
    REQUIRE(::grantpt(master) == 0);
    REQUIRE(::unlockpt(master) == 0);
    const std::string slave = ::ptsname(master);

    fake_task_worker worker(*env.worker_conn, "svc", [](task_run& t) {
        t.ack();
        auto ask = [&](a2a::task_question q) {
            const auto id = q.question_id;
            t.send(std::move(q));
            return t
                .wait_for([&](const inbound_message& m) {
                    return m.body.find("v1.answer") != std::string::npos &&
                           m.body.find("\"question_id\":\"" + id + "\"") != std::string::npos;
                })
                .has_value();
        };
        a2a::task_question confirm;
        confirm.question_id = "Q1";
        confirm.kind = "confirm";
        confirm.question = "Delete stream ORDERS?";
        confirm.window = "5m0s";
        if (!ask(confirm)) return;
        a2a::task_question approval;
        approval.question_id = "Q2";
        approval.kind = "approval";
        approval.question = "The agent wants to run a tool that changes things";
        approval.tool = "stream_rm";
        approval.command = "stream rm ORDERS";
        approval.call_id = "toolu_4";
        approval.window = "5m0s";
        if (!ask(approval)) return;
        a2a::task_question select;
        select.question_id = "Q3";
        select.kind = "select";
        select.question = "Which stream?";
        select.options = {"ORDERS", "EVENTS"};
        select.window = "5m0s";
        if (!ask(select)) return;
        a2a::task_question input;
        input.question_id = "Q4";
        input.kind = "input";
        input.question = "Replicas?";
        input.default_value = "3";
        input.window = "5m0s";
        if (!ask(input)) return;
        t.result("end_turn", "all answered");
    });
    auto p = env.ask("tty", {"svc", "x"}, slave);
    auto answer_when = [&](const std::string& prompt, const std::string& line) {
        REQUIRE(wait_until([&] { return p->stderr_text().find(prompt) != std::string::npos || p->exited(); }, 20s));
        REQUIRE(::write(master, line.data(), line.size()) == static_cast<ssize_t>(line.size()));
    };
    answer_when("? Delete stream ORDERS? [y/N] ", "y\n");
    answer_when("Allow once / allow for this Run / Deny [o/r/D] ", "o\n");
    answer_when("Choose 1-2: ", "7\n");  // out of range: asked again
    REQUIRE(wait_until(
        [&] {
            const auto e = p->stderr_text();
            return e.find("Choose 1-2: ") != e.rfind("Choose 1-2: ");
        },
        20s));
    answer_when("  2) EVENTS", "2\n");
    answer_when("? Replicas? [3] ", "\n");
    REQUIRE(p->wait() == 0);
    ::close(master);
    CHECK(p->stdout_text() == "all answered\n");
    std::vector<a2a::task_answer> answers;
    for (const auto& m : worker.inbound()) {
        auto a = a2a::default_validator().check_as<a2a::task_answer>(m.body);
        REQUIRE(a);
        answers.push_back(*a);
    }
    REQUIRE(answers.size() == 4);
    CHECK(answers[0].confirmed == std::optional<bool>(true));
    CHECK(answers[1].decision == std::optional<std::string>("once"));
    CHECK(answers[2].selected == std::optional<std::uint64_t>(1));
    CHECK(answers[3].value == std::optional<std::string>("3"));
    for (std::size_t i = 0; i < answers.size(); ++i) CHECK(answers[i].sequence == i + 1);
}

TEST_CASE("ask: an unknown event kind is shown from its raw bytes, an unknown stop reason exits 0", "[ask][app]") {
    ask_env env;
    fake_task_worker worker(*env.worker_conn, "svc", [](task_run& t) {
        t.ack();
        t.event(
            a2a::unknown_block::from_raw(a2a::raw_json::parse(R"({"type":"chart","points":[1,2]})").value()).value());
        t.result("paused_for_lunch", "later");
    });
    auto p = env.ask("unknown", {"svc", "x"});
    REQUIRE(p->wait() == 0);
    CHECK(p->stdout_text() == "later\n");
    CHECK(p->stderr_text().find(R"(· chart {"type":"chart","points":[1,2]})") != std::string::npos);
}
