// The knowledge command: Go's texts for the tier line, index stats, show, doctor and watch.
#include <fiskai/knowledge/command.hpp>

#include <fiskai/config/config.hpp>
#include <fiskai/gocompat/quote.hpp>
#include <fiskai/gocompat/utf8.hpp>
#include <fiskai/knowledge/store.hpp>

#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <fmt/chrono.h>
#include <fmt/format.h>

#include <cstdio>
#include <filesystem>
#include <ctime>
#include <set>
#include <stdexcept>

namespace fiskai::knowledge {

namespace {

constexpr const char* not_built_text = "the knowledge index has not been built yet; run: fisk-ai knowledge index";

config::config load_config(const command_options& o) {
    if (!o.store_dir.empty() && o.store_dir.front() != '/') {
        throw std::runtime_error(
            fmt::format("--store-dir must be an absolute path, got {}", gocompat::quote(o.store_dir)));
    }
    auto cfg = config::load_file(o.config_path, config::mode::lenient);
    if (!cfg.harness.knowledge.enabled) {
        throw std::runtime_error(
            fmt::format("knowledge is not enabled in {}; add a harness.knowledge block with "
                        "'enabled: true'",
                        gocompat::quote(o.config_path)));
    }
    return cfg;
}

void fail_on(const error& e) { throw std::runtime_error(e.message); }

std::shared_ptr<store> open_reader(boost::asio::any_io_executor io, const config::config& cfg,
                                   const command_options& o) {
    auto s = store::open(io, store_options_from(io, cfg, o.store_dir));
    if (!s) fail_on(s.error());
    return *s;
}

std::shared_ptr<store> open_writer(boost::asio::any_io_executor io, const config::config& cfg,
                                   const command_options& o) {
    auto s = store::open_writer(io, store_options_from(io, cfg, o.store_dir));
    if (!s) fail_on(s.error());
    return *s;
}

boost::asio::awaitable<void> print_tier(store& s) {
    auto line = co_await s.tier_line();
    if (!line) fail_on(line.error());
    fmt::print("{}\n", *line);
}

void print_index_stats(const index_stats& st, bool dry_run) {
    std::string line = fmt::format("{}: added={} updated={} skipped={} removed={} ({} files, {} chunks",
                                   dry_run ? "would index" : "indexed", st.added, st.updated, st.skipped, st.removed,
                                   st.files, st.chunks);
    if (st.embeddings > 0) line += fmt::format(", {} embeddings", st.embeddings);
    fmt::print("{})\n", line);
    std::fflush(stdout);
}

std::string stamp() {
    const std::time_t now = std::time(nullptr);
    std::tm tm{};
    localtime_r(&now, &tm);
    return fmt::format("[{:02}:{:02}:{:02}]", tm.tm_hour, tm.tm_min, tm.tm_sec);
}

const char* plural(std::size_t n, const char* one, const char* many) { return n == 1 ? one : many; }

struct roots_choice {
    std::vector<std::string> roots;
    bool reconcile = false;
};

roots_choice choose_roots(const command_options& o, const config::config& cfg) {
    roots_choice c;
    c.roots = o.paths;
    if (c.roots.empty()) {
        c.roots = cfg.harness.knowledge.paths;
        // Only a walk of the whole configured corpus may remove files gone from disk.
        c.reconcile = true;
    }
    if (c.roots.empty()) {
        throw std::runtime_error("no paths given and knowledge.paths is empty - pass a path or set knowledge.paths");
    }
    return c;
}

index_options progress_to_stdout(index_options o) {
    o.progress = [](const std::string& msg) {
        fmt::print("{}\n", msg);
        std::fflush(stdout);
    };
    return o;
}

boost::asio::awaitable<int> do_index(command_options o, const config::config& cfg) {
    auto io = co_await boost::asio::this_coro::executor;
    const auto choice = choose_roots(o, cfg);
    auto s = open_writer(io, cfg, o);
    co_await print_tier(*s);
    index_options opts;
    opts.reindex = o.reindex;
    opts.dry_run = o.dry_run;
    opts.reconcile = choice.reconcile;
    if (!o.dry_run && s->vector_enabled()) {
        // A first build (or a reindex) with vectors: say what it will cost before spending it.
        auto st = co_await s->stats();
        if (st && (st->documents == 0 || o.reindex)) {
            index_options dry = opts;
            dry.dry_run = true;
            auto est = co_await s->index(choice.roots, dry);
            if (!est) fail_on(est.error());
            fmt::print("first full build: about to embed {} chunks across {} files; run with --dry-run to preview\n",
                       est->embeddings, est->files);
        }
    }
    auto stats = co_await s->index(choice.roots, progress_to_stdout(opts));
    if (!stats) fail_on(stats.error());
    print_index_stats(*stats, o.dry_run);
    co_return 0;
}

boost::asio::awaitable<int> do_show(command_options o, const config::config& cfg) {
    auto io = co_await boost::asio::this_coro::executor;
    auto parsed = parse_citation(o.citation);
    if (!parsed) fail_on(parsed.error());
    auto s = open_reader(io, cfg, o);
    auto text = co_await s->chunk(parsed->first, parsed->second);
    if (!text && text.error().code == errc::not_built) throw std::runtime_error(not_built_text);
    if (!text && text.error().code == errc::not_found) {
        throw std::runtime_error(
            fmt::format("no chunk found for citation {}: it may have shifted since the last "
                        "reindex; run 'fisk-ai knowledge sources' to list files",
                        gocompat::quote(o.citation)));
    }
    if (!text) fail_on(text.error());
    if (!text->heading_path.empty()) fmt::print("# {}\n\n", text->heading_path);
    fmt::print("{}\n", text->content);
    co_return 0;
}

boost::asio::awaitable<int> do_doctor(command_options o, const config::config& cfg) {
    auto io = co_await boost::asio::this_coro::executor;
    auto s = open_reader(io, cfg, o);
    auto report = co_await s->doctor(cfg.harness.knowledge.paths);
    if (!report) fail_on(report.error());
    fmt::print("{}\n\n", report->tier_line);
    std::size_t width = 0;
    for (const auto& c : report->checks) width = std::max(width, c.name.size());
    for (const auto& c : report->checks) {
        const char* mark = c.ok ? " ok " : "FAIL";
        fmt::print("  {:>{}}: [{}]{}{}\n", c.name, width, mark, c.detail.empty() ? "" : " ", c.detail);
    }
    if (report->has_fatal()) throw std::runtime_error("knowledge doctor found problems that must be fixed");
    co_return 0;
}

std::string snippet(const std::string& content, std::size_t max) {
    std::string line;
    for (const char c : content) {
        const bool space = c == '\n' || c == '\r' || c == '\t' || c == ' ';
        if (space) {
            if (!line.empty() && line.back() != ' ') line += ' ';
        } else {
            line += c;
        }
    }
    if (line.size() <= max) return line;
    return std::string(gocompat::utf8_prefix(line, max)) + "...";
}

boost::asio::awaitable<int> do_search(command_options o, const config::config& cfg) {
    auto io = co_await boost::asio::this_coro::executor;
    auto s = open_reader(io, cfg, o);
    auto res = co_await s->search(o.query, o.top_k);
    if (!res) fail_on(res.error());
    if (res->degraded) {
        fmt::print("{}\n", degraded_tier_line(res->degrade_reason));
    } else {
        co_await print_tier(*s);
    }
    if (res->status == search_status::index_not_built) {
        fmt::print("{}\n", not_built_text);
        co_return 0;
    }
    if (res->status == search_status::index_empty) {
        fmt::print("the knowledge index is empty, or the query had no searchable terms\n");
        co_return 0;
    }
    if (res->hits.empty()) fmt::print("no results\n");
    for (const auto& h : res->hits) {
        fmt::print("\n{}\n", h.citation);
        if (!h.heading_path.empty()) fmt::print("  Section: {}\n", h.heading_path);
        fmt::print("    Chunk: {}\n", o.full ? h.content : snippet(h.content, 100));
    }
    co_return 0;
}

boost::asio::awaitable<int> do_sources(command_options o, const config::config& cfg) {
    auto io = co_await boost::asio::this_coro::executor;
    auto s = open_reader(io, cfg, o);
    co_await print_tier(*s);
    if (!s->built()) {
        fmt::print("{}\n", not_built_text);
        co_return 0;
    }
    std::string after;
    std::size_t n = 0;
    for (;;) {
        auto page = co_await s->enumerate(after, 500);
        if (!page) fail_on(page.error());
        for (const auto& d : page->documents) {
            if (n++ == 0) fmt::print("{:<60} {:>6}  {}\n", "Path", "Chunks", "Title");
            fmt::print("{:<60} {:>6}  {}\n", d.path, d.chunks, d.title);
        }
        if (!page->more || page->documents.empty()) break;
        after = page->documents.back().path;
    }
    if (n == 0) fmt::print("no indexed files\n");
    co_return 0;
}

// One index pass of the watcher, under the writer lock for the pass only.
boost::asio::awaitable<bool> watch_pass(command_options o, const config::config& cfg, roots_choice choice) {
    auto io = co_await boost::asio::this_coro::executor;
    auto s = store::open_writer(io, store_options_from(io, cfg, o.store_dir));
    if (!s && s.error().code == errc::locked) {
        fmt::print(stderr, "{} another knowledge writer is running; will retry\n", stamp());
        co_return false;
    }
    if (!s) {
        fmt::print(stderr, "{} reindex failed: {}\n", stamp(), s.error().message);
        co_return false;
    }
    index_options opts;
    opts.reconcile = choice.reconcile;
    opts.progress = [](const std::string& msg) { fmt::print(stderr, "{} {}\n", stamp(), msg); };
    auto stats = co_await (*s)->index(choice.roots, opts);
    if (!stats) {
        fmt::print(stderr, "{} reindex failed: {}\n", stamp(), stats.error().message);
        co_return true;
    }
    print_index_stats(*stats, false);
    co_return true;
}

std::size_t count_dirs(const std::vector<file_state>& files, const std::vector<std::string>& roots) {
    std::set<std::string> dirs(roots.begin(), roots.end());
    for (const auto& f : files) {
        const auto slash = f.path.rfind('/');
        if (slash != std::string::npos) dirs.insert(f.path.substr(0, slash));
    }
    return dirs.size();
}

boost::asio::awaitable<int> do_watch(command_options o, const config::config& cfg) {
    auto io = co_await boost::asio::this_coro::executor;
    if (o.debounce < std::chrono::milliseconds(100)) {
        throw std::runtime_error(fmt::format("--debounce must be at least 100ms, got {}ms", o.debounce.count()));
    }
    const auto choice = choose_roots(o, cfg);
    const auto dir = store_options_from(io, cfg, o.store_dir).directory;
    std::size_t present = 0;
    for (const auto& r : choice.roots) {
        std::error_code ec;
        if (std::filesystem::exists(r, ec)) {
            ++present;
        } else {
            fmt::print(stderr, "{} skipping missing path {}\n", stamp(), gocompat::quote(r));
        }
    }
    if (present == 0) throw std::runtime_error("none of the configured knowledge paths exist");
    {
        auto reader = open_reader(io, cfg, o);
        co_await print_tier(*reader);
    }
    auto last = scan_corpus(choice.roots, dir);
    bool pending = false;
    if (!o.no_initial) pending = !co_await watch_pass(o, cfg, choice);
    const auto dirs = count_dirs(last, choice.roots);
    fmt::print("watching {} {} under {} {} (debounce {}ms); press Ctrl-C to stop\n", dirs,
               plural(dirs, "directory", "directories"), choice.roots.size(),
               plural(choice.roots.size(), "path", "paths"), o.debounce.count());
    std::fflush(stdout);
    // Polls by size and mtime once per debounce interval: the same test the index uses
    // to skip a file unread, so a pass re-reads exactly what changed. A pass that could
    // not take the lock is retried at the next interval.
    boost::asio::steady_timer timer(io);
    auto next_check = std::chrono::steady_clock::now() + o.debounce;
    while (!o.stop->load()) {
        timer.expires_after(std::chrono::milliseconds(50));
        co_await timer.async_wait(boost::asio::use_awaitable);
        if (std::chrono::steady_clock::now() < next_check) continue;
        next_check = std::chrono::steady_clock::now() + o.debounce;
        auto now = scan_corpus(choice.roots, dir);
        if (now == last && !pending) continue;
        if (now != last) {
            std::vector<std::string> changed;
            std::set<std::string> before;
            for (const auto& f : last)
                before.insert(f.path + "\n" + std::to_string(f.size) + "\n" + std::to_string(f.mtime));
            std::set<std::string> after_paths;
            for (const auto& f : now) {
                after_paths.insert(f.path);
                if (before.count(f.path + "\n" + std::to_string(f.size) + "\n" + std::to_string(f.mtime)) == 0)
                    changed.push_back(f.path);
            }
            for (const auto& f : last) {
                if (after_paths.count(f.path) == 0) changed.push_back(f.path);
            }
            last = std::move(now);
            pending = true;
            if (!changed.empty()) {
                fmt::print("{} change detected in {} {}; reindexing:\n", stamp(), changed.size(),
                           plural(changed.size(), "file", "files"));
                for (const auto& p : changed) fmt::print("  {}\n", p);
            } else {
                fmt::print("{} change detected; reindexing\n", stamp());
            }
            std::fflush(stdout);
        }
        pending = !co_await watch_pass(o, cfg, choice);
    }
    fmt::print("stopped watching\n");
    co_return 0;
}

}  // namespace

boost::asio::awaitable<int> run_command(command_options o) {
    const auto cfg = load_config(o);
    for (const auto& w : cfg.warnings) fmt::print(stderr, "warning: {}\n", w);
    switch (o.what) {
        case command_options::action::index: co_return co_await do_index(std::move(o), cfg);
        case command_options::action::show: co_return co_await do_show(std::move(o), cfg);
        case command_options::action::doctor: co_return co_await do_doctor(std::move(o), cfg);
        case command_options::action::watch: co_return co_await do_watch(std::move(o), cfg);
        case command_options::action::search: co_return co_await do_search(std::move(o), cfg);
        case command_options::action::sources: co_return co_await do_sources(std::move(o), cfg);
    }
    co_return 1;
}

}  // namespace fiskai::knowledge
