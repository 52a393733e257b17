#pragma once
// Shared by the knowledge tests: a temporary directory, the hand-written corpus copied
// next to a few hundred generated distractor documents, and running a coroutine on an
// io_context that the store's pool and the HTTP client resume on.

#include "temp_dir.hpp"

#include <fiskai/knowledge/store.hpp>

#include <catch2/catch.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include <stdlib.h>

namespace fiskai::test {

using fiskai::test::temp_dir;

// Runs `work` on `ioc` until it finishes, failing when the deadline passes first.
template <class T>
T run_on(boost::asio::io_context& ioc, boost::asio::awaitable<T> work,
         std::chrono::steady_clock::duration deadline = std::chrono::seconds(60)) {
    // The last run's guard going stopped the context; start it again.
    ioc.restart();
    auto guard = boost::asio::make_work_guard(ioc);
    auto future = boost::asio::co_spawn(ioc, std::move(work), boost::asio::use_future);
    const auto end = std::chrono::steady_clock::now() + deadline;
    while (future.wait_for(std::chrono::seconds(0)) != std::future_status::ready &&
           std::chrono::steady_clock::now() < end) {
        ioc.run_one_for(std::chrono::milliseconds(20));
    }
    if (future.wait_for(std::chrono::seconds(0)) != std::future_status::ready) {
        throw std::runtime_error("coroutine did not finish within the test deadline");
    }
    return future.get();
}

// The hand-written documents with known answers.
inline std::filesystem::path corpus_source() {
    return std::filesystem::path(FISKAI_SOURCE_DIR) / "tests" / "knowledge" / "corpus";
}

// Deterministic distractors: Markdown documents with headings and paragraphs drawn from a
// vocabulary that shares some words with the known documents, so ranking has to work.
inline void generate_distractors(const std::filesystem::path& dir, int count, unsigned seed = 42) {
    static const std::vector<std::string> vocab{
        "system",  "service", "message",  "server",   "client",  "config",  "update",  "release", "team",
        "data",    "request", "process",  "network",  "storage", "cluster", "policy",  "account", "metrics",
        "report",  "queue",   "review",   "planning", "meeting", "budget",  "quarter", "roadmap", "design",
        "feature", "support", "customer", "office",   "travel",  "expense", "invoice", "holiday", "training",
        "laptop",  "monitor", "printer",  "kitchen",  "stream",  "deploy",  "key",     "cache",   "log",
        "page",    "flag",    "limit",    "backup",   "snapshot"};
    std::mt19937 rng(seed);
    std::uniform_int_distribution<std::size_t> word(0, vocab.size() - 1);
    std::uniform_int_distribution<int> words_per_para(20, 80);
    std::filesystem::create_directories(dir);
    for (int d = 0; d < count; ++d) {
        std::string text = "# Notes " + std::to_string(d) + " on " + vocab[word(rng)] + "\n\n";
        for (int s = 0; s < 3; ++s) {
            text += "## " + vocab[word(rng)] + " " + vocab[word(rng)] + "\n\n";
            const int n = words_per_para(rng);
            for (int w = 0; w < n; ++w) text += vocab[word(rng)] + (w % 12 == 11 ? ".\n" : " ");
            text += "\n\n";
        }
        std::ofstream(dir / ("note-" + std::to_string(d) + ".md")) << text;
    }
}

// A corpus directory: the known documents under known/, distractors under generated/.
inline std::filesystem::path make_corpus(const temp_dir& t, int distractors = 300) {
    const auto root = t.path / "docs";
    std::filesystem::create_directories(root / "known");
    for (const auto& e : std::filesystem::directory_iterator(corpus_source())) {
        std::filesystem::copy_file(e.path(), root / "known" / e.path().filename());
    }
    generate_distractors(root / "generated", distractors);
    return root;
}

}  // namespace fiskai::test

// Catch shows a result as its error's message rather than streaming its value.
namespace Catch {
template <class T>
struct StringMaker<boost::system::result<T, fiskai::knowledge::error>> {
    static std::string convert(const boost::system::result<T, fiskai::knowledge::error>& r) {
        return r ? std::string("(a value)") : "error: " + r.error().message;
    }
};
}  // namespace Catch
