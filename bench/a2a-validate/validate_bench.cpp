// Decode-and-validate throughput of a2a tool requests and replies: size cap, JSON parse,
// schema (valijson) and the typed decode, per message, on the golden bodies.
//   a2a_validate_bench <golden dir> [seconds per row]

#include <fiskai/a2a/validator.hpp>

#include <fmt/format.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

namespace {

std::string read(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    auto text = s.str();
    while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
    return text;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        fmt::print(stderr, "usage: a2a_validate_bench <golden dir> [seconds per row]\n");
        return 2;
    }
    const std::string dir = argv[1];
    const double seconds = argc > 2 ? std::atof(argv[2]) : 2.0;
    const auto& v = fiskai::a2a::default_validator();
    for (const char* name : {"tool.request.input.json", "tool.reply.exit3.json", "discovery.reply.json",
                             "question.approval.json", "answer.decision.json", "keepalive.json", "ack.json",
                             "event.text.json", "event.tool_result.json", "result.json"}) {
        const auto body = read(dir + "/" + name);
        if (!v.check(body)) {
            fmt::print(stderr, "{} does not validate\n", name);
            return 1;
        }
        std::size_t n = 0;
        const auto start = std::chrono::steady_clock::now();
        const auto end = start + std::chrono::duration<double>(seconds);
        while (std::chrono::steady_clock::now() < end) {
            for (int i = 0; i < 100; ++i) {
                if (!v.check(body)) std::abort();
            }
            n += 100;
        }
        const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        fmt::print(
            "{{\"impl\":\"fiskai::a2a "
            "(valijson)\",\"message\":\"{}\",\"bytes\":{},\"per_second\":{:.0f},\"us_per_message\":{:.2f}}}\n",
            name, body.size(), n / elapsed, elapsed * 1e6 / n);
    }
    return 0;
}
