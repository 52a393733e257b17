// NATS context resolution as the NATS CLI stores contexts: where the files are, which one
// is selected, what a missing or malformed one says.

#include <fiskai/conns/context.hpp>

#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace fs = std::filesystem;
using namespace fiskai::conns;

namespace {

struct scratch {
    fs::path root;
    scratch() {
        char tmpl[] = "/tmp/fiskai-conns-test-XXXXXX";
        root = ::mkdtemp(tmpl);
    }
    ~scratch() { fs::remove_all(root); }
    void write(const fs::path& rel, const std::string& text) const {
        fs::create_directories((root / rel).parent_path());
        std::ofstream(root / rel) << text;
    }
};

}  // namespace

TEST_CASE("contexts live under XDG_CONFIG_HOME when it is set, else under ~/.config", "[conns][context]") {
    context_environment xdg{"/x/cfg", "/home/u"};
    CHECK(xdg.config_root() == "/x/cfg");
    CHECK(xdg.context_file("prod") == "/x/cfg/nats/context/prod.json");
    CHECK(xdg.selection_file() == "/x/cfg/nats/context.txt");

    context_environment home{"", "/home/u"};
    CHECK(home.config_root() == "/home/u/.config");
    CHECK(home.context_file("prod") == "/home/u/.config/nats/context/prod.json");

    context_environment nowhere{"", ""};
    CHECK_THROWS_AS(nowhere.config_root(), context_error);
}

TEST_CASE("a named context is read from its file, keys matched case-insensitively", "[conns][context]") {
    scratch s;
    s.write("nats/context/prod.json",
            R"({"description":"production","URL":"nats://a:4222,nats://b:4222","user":"u","password":"p",
                "token":"t","inbox_prefix":"_I.me","color_scheme":"red","jetstream_domain":"hub","unknown":42})");
    const context_environment env{s.root.string(), "/home/u"};
    const auto c = load_context("prod", env);
    CHECK(c.name == "prod");
    CHECK(c.path == (s.root / "nats/context/prod.json").string());
    CHECK(c.url == "nats://a:4222,nats://b:4222");
    CHECK(c.user == "u");
    CHECK(c.password == "p");
    CHECK(c.token == "t");
    CHECK(c.inbox_prefix == "_I.me");
    CHECK(c.description == "production");
}

TEST_CASE("path fields expand environment variables and a leading ~, other fields do not", "[conns][context]") {
    ::setenv("FISKAI_CONNS_TEST_DIR", "/secrets", 1);
    ::unsetenv("FISKAI_CONNS_TEST_UNSET");
    const context_environment env{"/x", "/home/u"};
    const auto c = parse_context(R"({"creds":"$FISKAI_CONNS_TEST_DIR/u.creds","nkey":"~/keys/u.nk",
        "cert":"${FISKAI_CONNS_TEST_DIR}/c.pem","key":"$FISKAI_CONNS_TEST_UNSET/k.pem","ca":"~/ca.pem",
        "user":"$FISKAI_CONNS_TEST_DIR"})",
                                 "test", env);
    CHECK(c.creds == "/secrets/u.creds");
    CHECK(c.nkey == "/home/u/keys/u.nk");
    CHECK(c.cert == "/secrets/c.pem");
    CHECK(c.key == "/k.pem");
    CHECK(c.ca == "/home/u/ca.pem");
    CHECK(c.user == "$FISKAI_CONNS_TEST_DIR");
}

TEST_CASE("an empty name takes the selected context from context.txt", "[conns][context]") {
    scratch s;
    const context_environment env{s.root.string(), "/home/u"};

    SECTION("nothing selected: the default context, no file, localhost") {
        const auto c = load_context("", env);
        CHECK(c.name.empty());
        CHECK(c.path.empty());
        CHECK(c.effective_url() == "nats://127.0.0.1:4222");
    }
    SECTION("the selection is trimmed and loaded") {
        s.write("nats/context.txt", "  dev \n");
        s.write("nats/context/dev.json", R"({"url":"nats://dev:4222"})");
        CHECK(selected_context(env) == "dev");
        const auto c = load_context("", env);
        CHECK(c.name == "dev");
        CHECK(c.effective_url() == "nats://dev:4222");
    }
    SECTION("an explicit name wins over the selection") {
        s.write("nats/context.txt", "dev");
        s.write("nats/context/dev.json", R"({"url":"nats://dev:4222"})");
        s.write("nats/context/prod.json", R"({"url":"nats://prod:4222"})");
        CHECK(load_context("prod", env).url == "nats://prod:4222");
    }
}

TEST_CASE("context names that could leave the context directory are refused", "[conns][context]") {
    const context_environment env{"/x", "/home/u"};
    for (const char* bad : {"foo/bar", "foo\\bar", "../evil", "foo..bar", ".."}) {
        INFO(bad);
        CHECK_FALSE(is_valid_context_name(bad));
        CHECK_THROWS_WITH(load_context(bad, env), std::string("invalid context name ") + bad);
    }
    CHECK(is_valid_context_name("prod-1_a.b"));
}

TEST_CASE("a missing context names the file it looked for and how to fix it", "[conns][context]") {
    scratch s;
    const context_environment env{s.root.string(), "/home/u"};
    const auto file = (s.root / "nats/context/nope.json").string();
    CHECK_THROWS_WITH(load_context("nope", env), Catch::Contains("unknown context \"nope\"") && Catch::Contains(file) &&
                                                     Catch::Contains("nats context add nope"));
}

TEST_CASE("a malformed context file is an error naming the file", "[conns][context]") {
    scratch s;
    const context_environment env{s.root.string(), "/home/u"};
    s.write("nats/context/broken.json", R"({"url": "nats://x:4222",)");
    const auto file = (s.root / "nats/context/broken.json").string();
    CHECK_THROWS_WITH(load_context("broken", env), Catch::Contains("parsing NATS context") && Catch::Contains(file));

    s.write("nats/context/array.json", "[1,2]");
    CHECK_THROWS_WITH(load_context("array", env), Catch::Contains("not a JSON object"));

    s.write("nats/context/typed.json", R"({"url": 4222})");
    CHECK_THROWS_WITH(load_context("typed", env), Catch::Contains("\"url\" must be a string"));
}
