// One exit-code table for every executable: 0 done, 1 failed (with the reason on stderr),
// 2 a wrong command line, 130 a shutdown cut short by a second signal (covered by the
// a2a and MCP serving tests).

#include "app_test_support.hpp"

#include <catch2/catch.hpp>

using fiskai::test::run_shell;

namespace {
const std::string mcp = FISK_AI_MCP_PATH;
const std::string a2a = FISK_AI_A2A_PATH;
}  // namespace

TEST_CASE("a wrong command line exits 2 and says what is wrong", "[app][exit]") {
    for (const auto& [cmd, says] : std::vector<std::pair<std::string, std::string>>{
             {mcp + " --bogus", "--bogus"},
             {mcp, "--config FILE is required"},
             {mcp + " --log-format yaml --config x.yaml", "invalid log format \"yaml\""},
             {mcp + " info", "info needs --config FILE"},
             {a2a + " check --bogus", "--bogus"},
             {a2a, "subcommand"},
             {a2a + " discover", "identity"},
             // CLI11 puts the option's name in front: the text starts at the value.
             {a2a + " discover peer --timeout nan", "--timeout: nan is not a number of seconds"},
             {a2a + " ask demo hi --max-tokens -1",
              "--max-tokens: \"-1\" is not a whole number from 1 to 9223372036854775807; pass for example --max-tokens "
              "4000\n"},
             {a2a + " ask demo hi --max-iterations 2.5",
              "--max-iterations: \"2.5\" is not a whole number from 1 to 9223372036854775807; pass for example "
              "--max-iterations 5\n"},
             {a2a + " ask demo hi --idle-timeout 0s",
              "--idle-timeout: \"0s\" must be more than zero; pass a Go duration such as 90s, 2m or 1h30m\n"},
             {a2a + " discover 'a.b'",
              "identity: \"a.b\" is not an identity: use letters, digits, '-' and '_' (at most 128)\n"},
             {a2a + " ask 'bad name!' hi",
              "agent: \"bad name!\" is not an identity: use letters, digits, '-' and '_' (at most 128)\n"},
             {a2a + " ask demo hi --identity a.b",
              "--identity: \"a.b\" is not an identity: use letters, digits, '-' and '_' (at most 128)\n"},
             {a2a + " ask demo --continue a.b hi",
              "--continue: \"a.b\" is not a task id: use the id a previous ask printed (letters, digits, '-' and "
              "'_', at most 64)\n"},
         }) {
        CAPTURE(cmd);
        const auto r = run_shell(cmd + " </dev/null 2>&1");
        CHECK(r.exit_code == 2);
        CHECK_THAT(r.out, Catch::Contains(says));
    }
}

TEST_CASE("help and version exit 0, a failure exits 1", "[app][exit]") {
    for (const auto& cmd :
         {mcp + " --help", mcp + " --version", a2a + " --help", a2a + " --version", a2a + " serve --help"}) {
        CAPTURE(cmd);
        CHECK(run_shell(cmd + " </dev/null >/dev/null 2>&1").exit_code == 0);
    }
    const auto missing = run_shell(mcp + " --config /nonexistent/fisk-ai.yaml 2>&1");
    CHECK(missing.exit_code == 1);
    CHECK_THAT(missing.out, Catch::Contains("fisk-ai-mcp: error:"));
    const auto refused = run_shell("echo '{}' | " + a2a + " check 2>&1");
    CHECK(refused.exit_code == 1);
    CHECK_THAT(refused.out, Catch::StartsWith("refused:"));
    const auto info = run_shell(a2a + " info --config /nonexistent/fisk-ai.yaml 2>&1");
    CHECK(info.exit_code == 1);
    CHECK_THAT(info.out, Catch::Contains("fisk-ai-a2a: error:"));
}
