// Tool-layer figures, each beside its floor:
//  1. one tool call through command_tool (validate, render argv, spawn in its own process
//     group, capture, envelope) against a bare posix_spawn + read + waitpid of the same
//     command line;
//  2. parsing and deriving tools from a generated 2,000-command introspection document.

#include "support/bare_spawn.hpp"

#include <fiskai/toolkit/command_tool.hpp>
#include <fiskai/toolkit/derive.hpp>
#include <fiskai/toolkit/fisk_model.hpp>
#include <fiskai/toolkit/process.hpp>
#include <fiskai/toolkit/application.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/json/parse.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <spawn.h>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

extern char** environ;

namespace {

using clock_type = std::chrono::steady_clock;
using namespace fiskai::toolkit;

struct stats {
    double mean_us, p50_us, p99_us, max_us;
};

stats summarise(std::vector<double> us) {
    std::sort(us.begin(), us.end());
    double sum = 0;
    for (double v : us) sum += v;
    auto pct = [&](double p) { return us[std::min(us.size() - 1, static_cast<std::size_t>(p * us.size()))]; };
    return {sum / us.size(), pct(0.5), pct(0.99), us.back()};
}

void print_row(const std::string& name, const stats& s) {
    fmt::print("  {:<50} mean {:>9.1f} us  p50 {:>9.1f} us  p99 {:>9.1f} us  max {:>9.1f} us\n", name, s.mean_us,
               s.p50_us, s.p99_us, s.max_us);
}

// The floor: what any runner must at least pay to start the program and collect output.
double spawn_floor_once(const std::string& exe, const std::vector<std::string>& args) {
    const auto start = clock_type::now();
    (void)fiskai::bench::bare_spawn(exe, args);
    return std::chrono::duration<double, std::micro>(clock_type::now() - start).count();
}

std::string generated_document(int commands) {
    // Groups of 20 leaves, each with a few flags and an argument, as a large real CLI has.
    std::string doc = R"({"name":"big","help":"generated","commands":[)";
    for (int g = 0; g < commands / 20; ++g) {
        if (g) doc += ',';
        doc += fmt::format(R"({{"name":"group{}","help":"Group {}","commands":[)", g, g);
        for (int c = 0; c < 20; ++c) {
            if (c) doc += ',';
            doc += fmt::format(
                R"({{"name":"cmd{0}","help":"Command {0} of group {1}","tags":["impact:ro","area:g{1}"],)"
                R"("restricted_schema":{{"additionalProperties":false,"properties":{{"count":{{"description":"How many","type":"integer"}},)"
                R"("json":{{"description":"JSON output","type":"boolean"}},"name":{{"description":"The name","type":"string"}},)"
                R"("mode":{{"description":"Mode","enum":["a","b"],"type":"string"}}}},"required":["name"],"type":"object"}},)"
                R"("flags":[{{"name":"count","help":"How many","boolean":false,"cumulative":false}},)"
                R"({{"name":"json","help":"JSON output","boolean":true,"negatable":true,"cumulative":false}},)"
                R"({{"name":"mode","help":"Mode","boolean":false,"cumulative":false,"completions":["a","b"]}}],)"
                R"("args":[{{"name":"name","help":"The name","required":true,"cumulative":false}}]}})",
                c, g);
        }
        doc += "]}";
    }
    doc += R"(],"flags":[{"name":"context","help":"Context","boolean":false,"cumulative":false}]})";
    return doc;
}

}  // namespace

int main(int argc, char** argv) {
    const int iterations = argc > 1 ? std::atoi(argv[1]) : 300;
#ifdef FISK_DEMO_PATH
    const std::string demo = FISK_DEMO_PATH;
#else
    const std::string demo = argc > 2 ? argv[2] : "fisk-demo";
#endif
    fmt::print("fisk-ai toolkit benchmark ({} iterations per row)\n\n", iterations);

    // 1. tool call vs the floor
    boost::asio::io_context ioc;
    auto tools =
        boost::asio::co_spawn(ioc, load_application_tools({.application_path = demo}), boost::asio::use_future);
    ioc.run();
    ioc.restart();
    auto loaded = tools.get();
    tool_ptr echo;
    for (const auto& t : loaded.tools) {
        if (t->name() == "echo") echo = t;
    }
    if (!echo) {
        fmt::print(stderr, "the demo has no echo tool\n");
        return 1;
    }
    const auto args = boost::json::parse(R"({"text":["hello","world"]})");
    std::vector<double> tool_us, floor_us;
    for (int i = 0; i < iterations; ++i) {
        floor_us.push_back(spawn_floor_once(demo, {"echo", "--", "hello", "world"}));
        const auto start = clock_type::now();
        auto f = boost::asio::co_spawn(ioc, echo->call(args, {}), boost::asio::use_future);
        ioc.run();
        ioc.restart();
        if (f.get().is_error()) std::abort();
        tool_us.push_back(std::chrono::duration<double, std::micro>(clock_type::now() - start).count());
    }
    fmt::print("Tool call `echo -- hello world` on the demo application\n");
    print_row("posix_spawn + read + waitpid (floor)", summarise(floor_us));
    print_row("command_tool::call (validate+argv+run+envelope)", summarise(tool_us));
    const auto overhead = summarise(tool_us).p50_us - summarise(floor_us).p50_us;
    fmt::print("  overhead over the floor at p50: {:.1f} us\n\n", overhead);

    // 2. parse and derive
    const auto doc = generated_document(2000);
    std::vector<double> parse_us, derive_us;
    std::size_t derived = 0;
    for (int i = 0; i < std::max(5, iterations / 20); ++i) {
        auto t0 = clock_type::now();
        auto app = parse_fisk_model(doc);
        auto t1 = clock_type::now();
        auto d = derive_tools(app, {.global_flags = {"context"}, .include = {.tools = {"cmd1"}}});
        auto t2 = clock_type::now();
        derived = d.tools.size();
        parse_us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
        derive_us.push_back(std::chrono::duration<double, std::micro>(t2 - t1).count());
    }
    fmt::print("Introspection document with 2,000 commands ({} KiB), include filter keeps {} tools\n",
               doc.size() / 1024, derived);
    print_row("parse_fisk_model", summarise(parse_us));
    print_row("derive_tools (globals merged, filters applied)", summarise(derive_us));
    return 0;
}
