// fisk-demo: a real program that behaves like an application built on the Go fisk
// framework. It answers `--fisk-introspect` with a fisk-shaped ApplicationModel and
// parses argv the way fisk/kingpin does, so fisk-ai can serve its commands as tools.
//
// The command tree below is the single source of truth for both; see README.md.

#include "commands.hpp"
#include "minifisk.hpp"

#include <boost/json.hpp>

#include <chrono>
#include <cstdlib>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

namespace json = boost::json;

namespace {

// The command tree, declared the way a Go program declares it with fisk.
minifisk::Application build_app() {
    minifisk::Application app;
    app.name = "fisk-demo";
    app.help = "Demo operations tool";
    app.version = "1.2.3";
    app.author = "Ops Team";

    // Global (application-level) flags, accepted at any position.
    app.Flag("context", "Configuration context").Envar("DEMO_CONTEXT").HintOptions({"prod", "dev"});
    app.Flag("password", "Secret password").Hidden();
    app.Flag("verbose", "Verbose output").Bool();

    auto& stream = app.Command("stream", "Manage streams").Alias("str");
    {
        auto& info = stream.Command("info", "Show stream information")
                         .Tags({"impact:ro", "ai:no_defer"})
                         .Action(demo::stream_info);
        info.Arg("name", "Stream name").Required();
        info.Flag("json", "Produce JSON output").Short('j').Bool();

        auto& rm = stream.Command("rm", "Remove a stream")
                       .HelpLong("Removes the stream and all its data.")
                       .Tags({"impact:rw", "ai:confirm"})
                       .Action(demo::stream_rm);
        rm.Arg("name", "Stream name").Required();
        rm.Flag("force", "Skip safety checks").UnNegatableBool();
    }

    auto& pub = app.Command("pub", "Publish messages").Action(demo::pub);
    pub.Arg("subject", "Subject to publish to").Required();
    pub.Arg("body", "Message bodies").Strings();
    pub.Flag("count", "Number of messages").Default("1").Int();
    pub.Flag("timeout", "Publish timeout").Default("5s").Duration();
    pub.Flag("header", "Headers to add").Short('H').Strings();
    pub.Flag("mode", "Delivery mode").Default("sync").Enum({"sync", "async"});

    auto& debug = app.Command("debug", "Internal debugging").Hidden();
    debug.Command("dump", "Dump internal state").Action(demo::debug_dump);

    app.Command("reset", "Reset all state").Tags({"ai:deny"}).Action(demo::reset);

    auto& sleep = app.Command("sleep", "Sleep for a duration, then report").Tags({"impact:ro"}).Action(demo::sleep);
    sleep.Arg("duration", "How long to sleep, e.g. 250ms, 2s or 1m30s").Required().Duration();

    auto& flood = app.Command("flood", "Print a large amount of output").Tags({"impact:ro"}).Action(demo::flood);
    flood.Flag("bytes", "Exact number of bytes to print").Default("200000").Int();

    auto& fail = app.Command("fail", "Exit with a non-zero code").Action(demo::fail);
    fail.Flag("code", "Exit code to return").Default("3").Int();

    auto& spawn = app.Command("spawn", "Start a background process that outlives this command")
                      .Tags({"impact:rw"})
                      .Action(demo::spawn);
    spawn.Flag("marker", "File the background process writes its pid into").Required().String();
    spawn.Flag("delay", "How long the background process waits before writing the marker").Default("1s").Duration();
    spawn.Flag("linger", "How long this command waits before exiting").Default("0s").Duration();
    spawn.Flag("detach-output", "Point the background process's stdin, stdout and stderr at /dev/null")
        .UnNegatableBool();

    auto& echo = app.Command("echo", "Print the arguments").Tags({"impact:ro"}).Action(demo::echo);
    echo.Arg("text", "Words to print").Strings();
    echo.Flag("upper", "Convert the text to upper case").Bool();

    auto& env = app.Command("env", "Print environment variables").Tags({"impact:ro"}).Action(demo::env);
    env.Arg("name", "Variable to print; all variables when omitted");

    auto& config = app.Command("config", "Manage configuration");
    {
        auto& get = config.Command("get", "Show a configuration value").Tags({"impact:ro"}).Action(demo::config_get);
        get.Arg("key", "Configuration key").Required();

        auto& set = config.Command("set", "Store a configuration value")
                        .Tags({"impact:rw", "change:config"})
                        .Action(demo::config_set);
        set.Arg("key", "Configuration key").Required();
        set.Arg("value", "Value to store").Required();
    }
    return app;
}

// `--fisk-introspect` anywhere before a `--` terminator.
bool wants_introspection(const std::vector<std::string>& args) {
    for (const auto& a : args) {
        if (a == "--") return false;
        if (a == "--fisk-introspect") return true;
    }
    return false;
}

// Writes the introspection document: one line of compact JSON. The test-only switch
// FISK_DEMO_INTROSPECT makes it misbehave in the ways fisk-ai must survive.
int emit_introspection(const minifisk::Application& app) {
    const char* env = std::getenv("FISK_DEMO_INTROSPECT");
    const std::string mode = env != nullptr ? env : "";

    if (mode == "garbage") {
        std::cout << "this is not json\n";
        return 0;
    }
    if (mode == "huge") {
        // 17 MiB of a JSON string that never closes: larger than fisk-ai's 16 MiB cap.
        std::cout << R"({"name":"x","help":")";
        const std::string chunk(1 << 20, 'a');
        for (int i = 0; i < 17; ++i) std::cout.write(chunk.data(), static_cast<std::streamsize>(chunk.size()));
        std::cout.flush();
        return 0;
    }
    if (mode == "flood") {
        // Output that never ends: fisk-ai must stop it at its cap, not drain it until a timeout.
        const std::string chunk(1 << 16, 'f');
        for (;;) std::cout.write(chunk.data(), static_cast<std::streamsize>(chunk.size()));
    }
    if (mode == "hang") {
        std::this_thread::sleep_for(std::chrono::hours(1));
        return 0;
    }

    json::object doc = minifisk::introspect(app);
    if (mode == "noschema") {
        // Like an older fisk: the leaf `echo` carries no restricted_schema.
        for (auto& c : doc["commands"].as_array()) {
            auto& cmd = c.as_object();
            if (cmd["name"] == "echo") cmd.erase("restricted_schema");
        }
    }
    if (mode == "stderr") {
        std::cerr << "fisk-demo: loading plugins from /etc/fisk-demo/plugins.d\n";
        std::cerr.flush();
    }
    std::cout << json::serialize(doc) << "\n";
    std::cout.flush();
    return mode == "fail" ? 2 : 0;
}

}  // namespace

int main(int argc, char** argv) {
    const std::vector<std::string> args(argv + 1, argv + argc);
    const minifisk::Application app = build_app();
    try {
        if (wants_introspection(args)) return emit_introspection(app);
        return minifisk::run(app, args);
    } catch (const std::exception& e) {
        return minifisk::fatal(app, e.what());
    }
}
