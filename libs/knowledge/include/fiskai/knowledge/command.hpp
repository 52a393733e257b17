#pragma once
// The `knowledge` command (Go's rag_command.go and rag_watch.go) as a function of its
// parsed options, so every executable that offers it (fisk-ai-mcp, fisk-ai-serve) runs
// the same code: index [--reindex] [--dry-run] [PATH...], show CITATION, doctor,
// watch [--debounce D] [--no-initial] [PATH...], search QUERY, sources.
// Results go to stdout; notes, warnings and failures to stderr.

#include <boost/asio/awaitable.hpp>

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <vector>

namespace fiskai::knowledge {

struct command_options {
    enum class action { index, show, doctor, watch, search, sources };
    action what = action::index;
    std::string config_path;
    // Base directory a relative harness.knowledge.directory resolves under; empty: the cwd.
    std::string store_dir;
    // index / watch: explicit paths; empty means harness.knowledge.paths (and then files
    // gone from disk are removed from the index).
    std::vector<std::string> paths;
    bool reindex = false;
    bool dry_run = false;
    std::string citation;                      // show
    std::string query;                         // search
    int top_k = 0;                             // search
    bool full = false;                         // search: whole chunks instead of one-line snippets
    std::chrono::milliseconds debounce{2000};  // watch
    bool no_initial = false;                   // watch
    // watch ends when this becomes true (the app's signal handling sets it).
    std::shared_ptr<std::atomic<bool>> stop = std::make_shared<std::atomic<bool>>(false);
};

// Runs one subcommand and returns the exit code (0 done, 1 failed). A bad config or
// option throws std::runtime_error with the reason.
boost::asio::awaitable<int> run_command(command_options o);

}  // namespace fiskai::knowledge
