// Fuzz target over the arrival pipeline: the size cap, JSON, the protocol id, the schema,
// the typed decode (and the schema-less decode). Nothing may crash, leak or invoke
// undefined behaviour, and whatever is accepted must re-encode into a body that is
// accepted again and re-encodes to the same bytes: the canonical form is a fixed point.
//
// With clang: `clang++ -fsanitize=fuzzer,address,undefined` and libFuzzer's main. g++ has
// no libFuzzer, so with FISKAI_FUZZ_DRIVER this file brings its own main: it runs the
// corpus files, then random mutations of them for a bounded time.

#include <fiskai/a2a/codec.hpp>
#include <fiskai/a2a/validator.hpp>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

namespace {

[[noreturn]] void fail(const char* what, std::string_view body) {
    std::fprintf(stderr, "fuzz_decode: %s\ninput (%zu bytes): %.*s\n", what, body.size(), static_cast<int>(body.size() > 2000 ? 2000 : body.size()),
                 body.data());
    std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace fiskai::a2a;
    const std::string_view body(reinterpret_cast<const char*>(data), size);

    (void)decode(body);
    const auto m = default_validator().check(body);
    if (!m) return 0;

    const auto text = encode(*m);
    if (!text) fail("an accepted message does not encode", body);
    const auto again = default_validator().check(*text);
    if (!again) fail(("its canonical form is refused: " + again.error().message).c_str(), *text);
    const auto text2 = encode(*again);
    if (!text2 || *text2 != *text) fail("the canonical form is not a fixed point", *text);
    return 0;
}

#ifdef FISKAI_FUZZ_DRIVER

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <vector>

// fuzz_decode [--seconds N] [--seed S] <corpus file or directory>...
int main(int argc, char** argv) {
    double seconds = 10;
    std::uint64_t seed = 20260504;
    std::vector<std::string> corpus;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        if (arg == "--seconds" && i + 1 < argc) {
            seconds = std::stod(argv[++i]);
        } else if (arg == "--seed" && i + 1 < argc) {
            seed = std::stoull(argv[++i]);
        } else {
            std::vector<std::filesystem::path> files;
            if (std::filesystem::is_directory(arg)) {
                for (const auto& e : std::filesystem::recursive_directory_iterator(arg)) {
                    if (e.is_regular_file()) files.push_back(e.path());
                }
                std::sort(files.begin(), files.end());
            } else {
                files.emplace_back(arg);
            }
            for (const auto& f : files) {
                std::ifstream in(f, std::ios::binary);
                corpus.emplace_back(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
            }
        }
    }
    if (corpus.empty()) corpus.emplace_back("{}");

    auto run = [](const std::string& input) {
        LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t*>(input.data()), input.size());
    };
    for (const auto& input : corpus) run(input);

    // Fragments that reach the interesting branches: escapes, surrogates, NUL, nesting,
    // the names of fields and blocks, numbers out of range.
    static const char* const tokens[] = {
        "\"", "\\", "\\u0000", "\\ud800", "\\udc00", "\\ud83d\\ude00", "\\u2028", "<", "&", "\xff", "\xed\xa0\x80", "{", "}",
        "[", "]", ",", ":", "null", "true", "-0", "1.0", "1e400", "18446744073709551616", "\"type\":\"bogus\"",
        "\"block\":", "\"input\":", "\"tools\":[", "\"sender\":{\"name\":\"a.b\"}", "\"request\":\"", "\"sequence\":",
        "\"time\":\"2026-02-29T00:00:00Z\"", "\"protocol\":\"io.choria.fisk-ai.v1.event\"", "\"stop_reason\":\"\"",
    };
    std::mt19937_64 rng(seed);
    auto pick = [&](std::size_t n) { return n == 0 ? 0 : static_cast<std::size_t>(rng() % n); };
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    std::size_t runs = 0;
    while (std::chrono::steady_clock::now() < deadline) {
        std::string input = corpus[pick(corpus.size())];
        const std::size_t edits = 1 + pick(8);
        for (std::size_t e = 0; e < edits; ++e) {
            const std::size_t at = pick(input.size() + 1);
            switch (pick(6)) {
            case 0:
                if (!input.empty()) input[pick(input.size())] ^= static_cast<char>(1U << pick(8));
                break;
            case 1: input.insert(at, 1, static_cast<char>(rng())); break;
            case 2: input.erase(at, pick(16)); break;
            case 3: input.insert(at, tokens[pick(std::size(tokens))]); break;
            case 4: {
                const std::size_t from = pick(input.size() + 1);
                input.insert(at, input.substr(from, pick(64)));
                break;
            }
            default: {
                const auto& other = corpus[pick(corpus.size())];
                input = input.substr(0, at) + other.substr(std::min(at, other.size()));
            }
            }
        }
        run(input);
        ++runs;
    }
    std::printf("fuzz_decode: %zu corpus inputs and %zu mutations in %.0f s, seed %llu: no failure\n", corpus.size(), runs,
                seconds, static_cast<unsigned long long>(seed));
    return 0;
}

#endif
