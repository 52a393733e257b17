// A stand-in for libFuzzer's main, for compilers without libFuzzer (g++): runs every corpus
// input through LLVMFuzzerTestOneInput, then random mutations of them for a bounded time.
// Not coverage-guided; the real libFuzzer run (clang) is a separate test. Dictionaries use
// libFuzzer's format, so one .dict file serves both.
//
//   <target> [--seconds N] [--seed S] [--dict FILE] [--max-len N] <corpus file or directory>...

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace {

std::string read_all(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw std::runtime_error("cannot read " + path.string());
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

int hex_digit(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

// libFuzzer dictionary lines: `name="value"` or `"value"`, with \\, \" and \xNN escapes;
// blank lines and # comments are skipped.
std::vector<std::string> read_dictionary(const std::filesystem::path& path) {
    std::vector<std::string> tokens;
    std::ifstream in(path);
    if (!in) throw std::runtime_error("cannot read dictionary " + path.string());
    std::string line;
    int number = 0;
    while (std::getline(in, line)) {
        ++number;
        const auto first = line.find_first_not_of(" \t");
        if (first == std::string::npos || line[first] == '#') continue;
        const auto open = line.find('"');
        const auto close = line.rfind('"');
        if (open == std::string::npos || close <= open) {
            throw std::runtime_error(path.string() + ":" + std::to_string(number) + ": expected a quoted token");
        }
        std::string token;
        for (std::size_t i = open + 1; i < close; ++i) {
            if (line[i] != '\\' || i + 1 >= close) {
                token += line[i];
            } else if (line[i + 1] == 'x' && i + 3 < close && hex_digit(line[i + 2]) >= 0 &&
                       hex_digit(line[i + 3]) >= 0) {
                token += static_cast<char>(hex_digit(line[i + 2]) * 16 + hex_digit(line[i + 3]));
                i += 3;
            } else {
                token += line[++i];
            }
        }
        tokens.push_back(std::move(token));
    }
    return tokens;
}

}  // namespace

int main(int argc, char** argv) {
    double seconds = 10;
    std::uint64_t seed = 20260504;
    std::size_t max_len = 65536;  // as the libFuzzer runs
    std::vector<std::string> tokens;
    std::vector<std::string> corpus;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        if (arg == "--seconds" && i + 1 < argc) {
            seconds = std::stod(argv[++i]);
        } else if (arg == "--seed" && i + 1 < argc) {
            seed = std::stoull(argv[++i]);
        } else if (arg == "--max-len" && i + 1 < argc) {
            max_len = std::stoull(argv[++i]);
        } else if (arg == "--dict" && i + 1 < argc) {
            tokens = read_dictionary(argv[++i]);
        } else if (std::filesystem::is_directory(arg)) {
            std::vector<std::filesystem::path> files;
            for (const auto& e : std::filesystem::recursive_directory_iterator(arg)) {
                if (e.is_regular_file()) files.push_back(e.path());
            }
            std::sort(files.begin(), files.end());
            for (const auto& f : files) corpus.push_back(read_all(f));
        } else {
            corpus.push_back(read_all(arg));
        }
    }
    if (corpus.empty()) corpus.emplace_back();
    if (tokens.empty()) tokens = {"\"", "\\", "\n", "{", "}", "[", "]", ":", ",", "\xff", std::string(1, '\0')};

    auto run = [](const std::string& input) {
        LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t*>(input.data()), input.size());
    };
    for (const auto& input : corpus) run(input);

    std::mt19937_64 rng(seed);
    auto pick = [&](std::size_t n) { return n == 0 ? 0 : static_cast<std::size_t>(rng() % n); };
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    std::size_t runs = 0;
    while (std::chrono::steady_clock::now() < deadline) {
        std::string input = corpus[pick(corpus.size())];
        const std::size_t edits = 1 + pick(8);
        for (std::size_t e = 0; e < edits; ++e) {
            const std::size_t at = pick(input.size() + 1);
            switch (pick(7)) {
                case 0:
                    if (!input.empty()) input[pick(input.size())] ^= static_cast<char>(1U << pick(8));
                    break;
                case 1: input.insert(at, 1, static_cast<char>(rng())); break;
                case 2: input.erase(at, pick(16)); break;
                case 3: input.insert(at, tokens[pick(tokens.size())]); break;
                case 4: {
                    const std::size_t from = pick(input.size() + 1);
                    input.insert(at, input.substr(from, pick(64)));
                    break;
                }
                case 5: {
                    // A run of one token: deep nesting, long strings, many keys.
                    const std::string& token = tokens[pick(tokens.size())];
                    std::string repeated;
                    for (std::size_t n = 1 + pick(1024); n > 0 && repeated.size() < max_len / 2; --n) repeated += token;
                    input.insert(at, repeated);
                    break;
                }
                default: {
                    const auto& other = corpus[pick(corpus.size())];
                    input = input.substr(0, at) + other.substr(std::min(at, other.size()));
                }
            }
        }
        if (input.size() > max_len) input.resize(max_len);
        run(input);
        ++runs;
    }
    std::printf("fuzz driver: %zu corpus inputs and %zu mutations in %.0f s, seed %llu: no failure\n", corpus.size(),
                runs, seconds, static_cast<unsigned long long>(seed));
    return 0;
}
