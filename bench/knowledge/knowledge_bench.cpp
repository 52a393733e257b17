// The knowledge index on N generated Markdown documents (three sections each, words drawn
// from a 200-word vocabulary): the first build, a re-run with nothing changed (size and
// mtime only), one edited file, query latency (p50, p99) on the lexical tier, the index
// size and the process's peak resident memory.
#include <fiskai/knowledge/store.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include <stdlib.h>
#include <sys/resource.h>

namespace asio = boost::asio;
namespace fs = std::filesystem;
using namespace fiskai::knowledge;
using clock_type = std::chrono::steady_clock;

namespace {

template <class T>
T run(asio::io_context& ioc, asio::awaitable<T> work) {
    ioc.restart();
    auto guard = asio::make_work_guard(ioc);
    auto f = asio::co_spawn(ioc, std::move(work), asio::use_future);
    while (f.wait_for(std::chrono::seconds(0)) != std::future_status::ready)
        ioc.run_one_for(std::chrono::milliseconds(5));
    return f.get();
}

double ms_since(clock_type::time_point start) {
    return std::chrono::duration<double, std::milli>(clock_type::now() - start).count();
}

std::vector<std::string> vocabulary() {
    std::vector<std::string> v;
    std::mt19937 rng(7);
    std::uniform_int_distribution<int> len(4, 9), letter(0, 25);
    for (int i = 0; i < 200; ++i) {
        std::string w;
        for (int n = len(rng); n > 0; --n) w += static_cast<char>('a' + letter(rng));
        v.push_back(std::move(w));
    }
    return v;
}

}  // namespace

int main(int argc, char** argv) {
    const int documents = argc > 1 ? std::atoi(argv[1]) : 10000;
    const int queries = argc > 2 ? std::atoi(argv[2]) : 1000;
    std::string pattern = (fs::temp_directory_path() / "fiskai-knowledge-bench-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) return 1;
    const fs::path root(pattern);
    const auto vocab = vocabulary();
    std::mt19937 rng(42);
    std::uniform_int_distribution<std::size_t> word(0, vocab.size() - 1);
    std::uniform_int_distribution<int> para(40, 120);
    std::uintmax_t corpus_bytes = 0;
    for (int d = 0; d < documents; ++d) {
        std::string text = fmt::format("# Document {} {}\n\n", d, vocab[word(rng)]);
        for (int s = 0; s < 3; ++s) {
            text += fmt::format("## {} {}\n\n", vocab[word(rng)], vocab[word(rng)]);
            for (int n = para(rng); n > 0; --n) text += vocab[word(rng)] + (n % 15 == 0 ? ".\n" : " ");
            text += "\n\n";
        }
        const auto dir = root / "docs" / fmt::format("d{:03}", d / 100);
        fs::create_directories(dir);
        std::ofstream(dir / fmt::format("doc-{}.md", d)) << text;
        corpus_bytes += text.size();
    }

    asio::io_context ioc;
    store_options o;
    o.directory = (root / "index").string();
    const std::vector<std::string> roots{(root / "docs").string()};

    auto w = store::open_writer(ioc.get_executor(), o);
    if (!w) return fmt::print(stderr, "{}\n", w.error().message), 1;
    auto t0 = clock_type::now();
    auto first = run(ioc, (*w)->index(roots, {}));
    const double build_ms = ms_since(t0);
    if (!first) return fmt::print(stderr, "{}\n", first.error().message), 1;

    t0 = clock_type::now();
    auto unchanged = run(ioc, (*w)->index(roots, {}));
    const double recheck_ms = ms_since(t0);

    std::ofstream(root / "docs" / "d000" / "doc-0.md") << "# Edited\n\nnew words here\n";
    t0 = clock_type::now();
    auto edited = run(ioc, (*w)->index(roots, {}));
    const double edit_ms = ms_since(t0);
    w->reset();

    auto r = store::open(ioc.get_executor(), o);
    if (!r) return fmt::print(stderr, "{}\n", r.error().message), 1;
    std::vector<double> lat;
    std::uniform_int_distribution<int> terms(1, 4);
    std::size_t total_hits = 0;
    for (int q = 0; q < queries; ++q) {
        std::string query;
        for (int n = terms(rng); n > 0; --n) query += vocab[word(rng)] + " ";
        const auto start = clock_type::now();
        auto res = run(ioc, (*r)->search(query, 5));
        lat.push_back(ms_since(start));
        if (res) total_hits += res->hits.size();
    }
    std::sort(lat.begin(), lat.end());
    const auto pct = [&](double p) { return lat[static_cast<std::size_t>(p * static_cast<double>(lat.size() - 1))]; };

    struct rusage ru {};
    getrusage(RUSAGE_SELF, &ru);
    std::error_code ec;
    const auto db_size = fs::file_size(root / "index" / "knowledge.db", ec);

    fmt::print("knowledge index, lexical tier (FTS5/BM25), {} documents ({:.1f} MiB of Markdown, {} chunks)\n",
               documents, static_cast<double>(corpus_bytes) / (1024.0 * 1024.0), first->chunks);
    fmt::print("  first build            {:>9.0f} ms  ({:.0f} documents/s)\n", build_ms,
               documents / (build_ms / 1000.0));
    fmt::print("  re-run, nothing changed {:>8.0f} ms  (skipped {})\n", recheck_ms,
               unchanged ? unchanged->skipped : -1);
    fmt::print("  re-run, one file edited {:>8.0f} ms  (updated {})\n", edit_ms, edited ? edited->updated : -1);
    fmt::print("  query p50 / p99         {:>8.2f} / {:.2f} ms over {} queries of 1-4 terms (avg {:.1f} hits)\n",
               pct(0.5), pct(0.99), queries, static_cast<double>(total_hits) / queries);
    fmt::print("  index file              {:>8.1f} MiB\n", static_cast<double>(db_size) / (1024.0 * 1024.0));
    fmt::print("  peak RSS                {:>8.1f} MiB\n", static_cast<double>(ru.ru_maxrss) / 1024.0);
    fs::remove_all(root, ec);
    return 0;
}
