// The fisk-ai-a2a binary: `check` on every golden body, `check --encode` byte-identical to
// it, refusals on stderr with exit 1, and --help.

#include "support.hpp"

#include <catch2/catch.hpp>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <sys/wait.h>
#include <unistd.h>

namespace {

const std::filesystem::path binary = std::filesystem::path(FISKAI_BINARY_DIR) / "apps/fisk-ai-a2a/fisk-ai-a2a";

struct run_result {
    int exit_code = -1;
    std::string out;
    std::string err;
};

std::string quote(const std::filesystem::path& p) { return "'" + p.string() + "'"; }

// Runs the binary with `args`, stdin from `input` (a file), and collects both outputs.
run_result run_app(const std::string& args, const std::filesystem::path& input) {
    const auto dir = std::filesystem::temp_directory_path();
    const auto tag = std::to_string(::getpid()) + "-" + std::to_string(std::rand());
    const auto out = dir / ("fisk-ai-a2a-out-" + tag);
    const auto err = dir / ("fisk-ai-a2a-err-" + tag);
    const std::string command =
        quote(binary) + " " + args + " < " + quote(input) + " > " + quote(out) + " 2> " + quote(err);
    const int status = std::system(command.c_str());
    run_result r;
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.out = a2a_test::read_file(out);
    r.err = a2a_test::read_file(err);
    std::filesystem::remove(out);
    std::filesystem::remove(err);
    return r;
}

// A temporary file holding `text`.
struct temp_input {
    explicit temp_input(const std::string& text)
        : path(std::filesystem::temp_directory_path() /
               ("fisk-ai-a2a-in-" + std::to_string(::getpid()) + "-" + std::to_string(std::rand()))) {
        std::ofstream(path, std::ios::binary) << text;
    }
    ~temp_input() { std::filesystem::remove(path); }
    std::filesystem::path path;
};

}  // namespace

TEST_CASE("a2a.app: check prints the protocol id of every golden body", "[a2a][app]") {
    REQUIRE(std::filesystem::exists(binary));
    for (const auto& file : a2a_test::golden_files()) {
        CAPTURE(file.filename().string());
        const auto r = run_app("check", file);
        CHECK(r.exit_code == 0);
        CHECK(r.err.empty());
        const auto text = a2a_test::read_file(file);
        const auto protocol = text.substr(13, text.find('"', 13) - 13);  // {"protocol":"<id>"
        CHECK(r.out == protocol + "\n");
    }
}

TEST_CASE("a2a.app: check --encode prints the bytes the Go original emits", "[a2a][app]") {
    for (const auto& file : a2a_test::golden_files()) {
        CAPTURE(file.filename().string());
        const auto r = run_app("check --encode", file);
        CHECK(r.exit_code == 0);
        CHECK(r.out == a2a_test::read_file(file));
    }
    // A body in another shape (whitespace, key order, escapes) comes out canonical.
    const temp_input pretty(R"({
      "sender": {"name": "caller"}, "time": "2026-05-04T09:15:27.482913304Z", "sequence": 0,
      "conversation": "2wJ4H0sTQqS7xYvEo1Rm9LkPbZd", "request": "2wJ4H0sTQqS7xYvEo1Rm9LkPbZd",
      "id": "2wJ4H0sTQqS7xYvEo1Rm9LkPbZd", "recipient": {"name": "svc"},
      "protocol": "io.choria.fisk-ai.v1.discovery.request", "future": [1, 2]
    })"
                            "\n");
    const auto r = run_app("check --encode", pretty.path);
    CHECK(r.exit_code == 0);
    CHECK(r.out == a2a_test::read_file(a2a_test::golden_dir() / "discovery.request.json"));
}

TEST_CASE("a2a.app: check refuses with the reason on stderr and exit 1", "[a2a][app]") {
    struct refusal {
        std::string body;
        std::string reason;
    };
    const std::vector<refusal> cases = {
        {"", "refused: invalid JSON"},
        {R"({"protocol":"nope"})", R"(refused: unknown protocol: "nope")"},
        {a2a_test::body("io.choria.fisk-ai.v1.tool.request"), "refused: schema validation failed: tool.request.json"},
        {std::string(786433, ' '), "refused: message exceeds 786432 bytes"},
        {std::string(100000, '['), "refused: invalid JSON"},
    };
    for (const auto& c : cases) {
        CAPTURE(c.reason);
        const temp_input in(c.body);
        for (const char* args : {"check", "check --encode"}) {
            const auto r = run_app(args, in.path);
            CHECK(r.exit_code == 1);
            CHECK(r.out.empty());
            CHECK(r.err.starts_with(c.reason));
        }
    }
}

TEST_CASE("a2a.app: --help answers", "[a2a][app]") {
    const temp_input empty("");
    const auto top = run_app("--help", empty.path);
    CHECK(top.exit_code == 0);
    CHECK_THAT(top.out, Catch::Contains("check"));
    const auto sub = run_app("check --help", empty.path);
    CHECK(sub.exit_code == 0);
    CHECK_THAT(sub.out, Catch::Contains("--encode"));
    CHECK(run_app("", empty.path).exit_code != 0);
}

TEST_CASE("a2a.app: --version names the program and its version", "[a2a][app]") {
    const temp_input empty("");
    const auto r = run_app("--version", empty.path);
    CHECK(r.exit_code == 0);
    CHECK(r.out == "fisk-ai-a2a 0.1.0\n");
}

TEST_CASE("a2a.app: discover refuses a timeout that is not a positive, finite number of seconds", "[a2a][app]") {
    const temp_input empty("");
    for (const std::string bad : {"-1", "0", "nan", "NaN", "inf", "-inf", "1e9", "soon"}) {
        CAPTURE(bad);
        const auto r = run_app("discover peer --timeout " + bad, empty.path);
        CHECK(r.exit_code != 0);
        CHECK_THAT(r.err, Catch::Contains("--timeout: " + bad + " is not a number of seconds"));
        CHECK_THAT(r.err, Catch::Contains("--timeout 5"));
    }
}
