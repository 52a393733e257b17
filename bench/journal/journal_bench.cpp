// The session journal's figures: file-backend appends per second (write + fdatasync per
// record, through the blocking pool and back) beside the floor, a plain C loop of write +
// fdatasync of the same lines on the same disk; a served one-tool task's journal (a new
// session, the model's turn, the tool's result, the answer with the terminal) beside the same
// syscalls in a plain C sequence; and fold of a 10,000-record journal, alone and with the
// read, parse and schema check in front of it (store::load).
//
// Usage: journal_bench [appends] [directory on the disk to measure]
#include "../support/bare_journal.hpp"

#include <fiskai/runstate/file_store.hpp>
#include <fiskai/runstate/state.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/asio/use_future.hpp>

#include <boost/json/parse.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include <fcntl.h>
#include <unistd.h>

namespace rs = fiskai::runstate;
namespace llm = fiskai::llm;
using clock_type = std::chrono::steady_clock;

namespace {

template <class T>
T run(boost::asio::awaitable<T> a) {
    boost::asio::io_context ioc;
    auto f = boost::asio::co_spawn(ioc, std::move(a), boost::asio::use_future);
    ioc.run();
    return f.get();
}

rs::record sample(std::uint64_t seq) {
    // A realistic mix: an assistant turn with a tool call, then its result.
    if (seq % 2 == 0) {
        rs::assistant_record a;
        a.iteration = static_cast<std::int64_t>(seq / 2);
        a.message.who = llm::role::assistant;
        a.message.content.push_back(llm::text_block{"Checking the stream state before changing anything."});
        a.message.content.push_back(llm::tool_use_block{
            "toolu_" + std::to_string(seq), "stream_info", R"({"stream":"ORDERS","json":true})", {}});
        a.stop_reason = "tool_use";
        a.in_tokens = 1200;
        a.out_tokens = 80;
        a.cache_read_tokens = 3000;
        return {seq, a};
    }
    rs::tool_result_record t;
    t.tool_use_id = "toolu_" + std::to_string(seq - 1);
    t.result = {t.tool_use_id,
                R"({"command":"stream info ORDERS --json","exit_code":0,"output":")" + std::string(300, 'o') + R"("})",
                false};
    return {seq, t};
}

rs::meta_record meta() {
    rs::meta_record m;
    m.prompt = "report on the ORDERS stream";
    m.fingerprint = {"anthropic", "claude-sonnet-4-6", std::string(64, 'a'), std::string(64, 'b'), "off", 200000, 50};
    return m;
}

double floor_rate(const std::string& dir, int n) {
    const std::string path = dir + "/floor.json";
    const int fd = ::open(path.c_str(), O_CREAT | O_TRUNC | O_WRONLY | O_APPEND | O_CLOEXEC, 0600);
    if (fd < 0) std::abort();
    std::vector<std::string> lines;
    for (int i = 0; i < n; ++i) lines.push_back(rs::encode_record(sample(static_cast<std::uint64_t>(i) + 2)) + "\n");
    const auto start = clock_type::now();
    for (const auto& line : lines) {
        if (!fiskai::bench::write_synced(fd, line)) std::abort();
    }
    const auto elapsed = std::chrono::duration<double>(clock_type::now() - start).count();
    ::close(fd);
    ::unlink(path.c_str());
    return n / elapsed;
}

double journal_rate(const std::string& dir, int n, boost::asio::thread_pool& pool) {
    auto store = rs::make_file_store(dir + "/runs", pool.get_executor());
    auto work = [&]() -> boost::asio::awaitable<double> {
        std::string id = "bench";
        rs::meta_record m = meta();
        auto j = co_await store->create(std::move(id), std::move(m));
        if (!j) std::abort();
        std::vector<rs::record> records;
        for (int i = 0; i < n; ++i) records.push_back(sample(static_cast<std::uint64_t>(i) + 2));
        const auto start = clock_type::now();
        for (auto& r : records) {
            const auto seq = r.seq;
            auto ok = co_await (*j)->append(seq, std::move(r));
            if (!ok) std::abort();
        }
        const auto elapsed = std::chrono::duration<double>(clock_type::now() - start).count();
        co_return n / elapsed;
    };
    auto task = work();
    const double rate = run(std::move(task));
    auto removal = store->remove("bench");
    (void)run(std::move(removal));
    return rate;
}

// The records of a served one-tool task, in the calls the agent makes: the session created
// started, the model's turn appended started, durable() before the tool runs, the tool's
// result appended started, then the answer and the terminal in one append_all. Per task, ms.
std::vector<double> task_journal_ms(const std::string& dir, int n, boost::asio::thread_pool& pool) {
    auto store = rs::make_file_store(dir + "/tasks", pool.get_executor());
    auto work = [&]() -> boost::asio::awaitable<std::vector<double>> {
        std::vector<double> out;
        for (int i = 0; i < n; ++i) {
            const auto start = clock_type::now();
            auto j = co_await store->create_started(fmt::format("task-{}", i), meta());
            if (!j) std::abort();
            if (!co_await (*j)->append_started(2, sample(2))) std::abort();
            if (!co_await (*j)->durable()) std::abort();
            if (!co_await (*j)->append_started(3, sample(3))) std::abort();
            std::vector<rs::record> last{sample(4), {5, rs::terminal_record{rs::terminal_reason::completed, ""}}};
            if (!co_await (*j)->append_all(std::move(last))) std::abort();
            out.push_back(std::chrono::duration<double, std::milli>(clock_type::now() - start).count());
        }
        co_return out;
    };
    auto task = work();
    auto samples = run(std::move(task));
    std::filesystem::remove_all(dir + "/tasks");
    return samples;
}

// The same durable points as plain syscalls, one after another: the new file with its first
// line synced and the directory synced, then one write + fdatasync for the model's turn, the
// tool's result, and the answer with the terminal.
std::vector<double> task_floor_ms(const std::string& dir, int n) {
    const std::string line1 = rs::encode_record({1, meta()}) + "\n";
    const std::string line2 = rs::encode_record(sample(2)) + "\n";
    const std::string line3 = rs::encode_record(sample(3)) + "\n";
    const std::string line45 = rs::encode_record(sample(4)) + "\n" +
                               rs::encode_record({5, rs::terminal_record{rs::terminal_reason::completed, ""}}) + "\n";
    std::vector<double> out;
    for (int i = 0; i < n; ++i) {
        const std::string path = fmt::format("{}/floor-task-{}.json", dir, i);
        const auto start = clock_type::now();
        const int fd = fiskai::bench::create_synced(path, dir, line1);
        if (fd < 0) std::abort();
        for (const auto* line : {&line2, &line3, &line45}) {
            if (!fiskai::bench::write_synced(fd, *line)) std::abort();
        }
        out.push_back(std::chrono::duration<double, std::milli>(clock_type::now() - start).count());
        ::close(fd);
        ::unlink(path.c_str());
    }
    return out;
}

struct fold_figures {
    double fold_ms = 0;
    double load_ms = 0;
    double parse_ms = 0;
    std::size_t bytes = 0;
};

fold_figures fold_figure(const std::string& dir, boost::asio::thread_pool& pool) {
    constexpr int records = 10'000;
    std::vector<rs::record> all;
    all.push_back({1, meta()});
    for (int i = 2; i <= records; ++i) all.push_back(sample(static_cast<std::uint64_t>(i)));
    fold_figures out;
    std::vector<double> folds;
    for (int round = 0; round < 7; ++round) {
        const auto start = clock_type::now();
        auto s = rs::fold(all);
        folds.push_back(std::chrono::duration<double, std::milli>(clock_type::now() - start).count());
        if (!s) std::abort();
    }
    std::sort(folds.begin(), folds.end());
    out.fold_ms = folds[folds.size() / 2];

    // The same journal on disk, loaded as `session show` or a resume would.
    std::filesystem::create_directories(dir + "/fold");
    std::string text;
    for (auto& r : all) {
        if (r.seq == 1) std::get<rs::meta_record>(r.payload).run_id = "folded";
        text += rs::encode_record(r) + "\n";
    }
    out.bytes = text.size();
    {
        // The JSON parse alone, for where load's time goes.
        std::vector<double> parses;
        for (int round = 0; round < 5; ++round) {
            const auto start = clock_type::now();
            std::size_t pos = 0;
            std::size_t objects = 0;
            while (pos < text.size()) {
                const auto nl = text.find('\n', pos);
                objects += boost::json::parse(std::string_view(text).substr(pos, nl - pos)).is_object() ? 1 : 0;
                pos = nl + 1;
            }
            parses.push_back(std::chrono::duration<double, std::milli>(clock_type::now() - start).count());
            if (objects != all.size()) std::abort();
        }
        std::sort(parses.begin(), parses.end());
        out.parse_ms = parses[parses.size() / 2];
    }
    {
        const int fd = ::open((dir + "/fold/folded.json").c_str(), O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC, 0600);
        if (fd < 0 || ::write(fd, text.data(), text.size()) != static_cast<ssize_t>(text.size())) std::abort();
        ::close(fd);
    }
    auto store = rs::make_file_store(dir + "/fold", pool.get_executor());
    std::vector<double> loads;
    for (int round = 0; round < 5; ++round) {
        auto load = store->load("folded");
        const auto start = clock_type::now();
        auto s = run(std::move(load));
        loads.push_back(std::chrono::duration<double, std::milli>(clock_type::now() - start).count());
        if (!s || s->counters.llm_calls != records / 2) std::abort();
    }
    std::sort(loads.begin(), loads.end());
    out.load_ms = loads[loads.size() / 2];
    std::filesystem::remove_all(dir + "/fold");
    return out;
}

}  // namespace

int main(int argc, char** argv) {
    const int n = argc > 1 ? std::atoi(argv[1]) : 2000;
    std::string base = argc > 2 ? argv[2] : std::filesystem::temp_directory_path().string();
    std::string dir = base + "/fiskai-journal-bench-XXXXXX";
    if (::mkdtemp(dir.data()) == nullptr) {
        fmt::print(stderr, "journal_bench: cannot create a directory under {}\n", base);
        return 1;
    }
    boost::asio::thread_pool pool(4);
    // Warm the disk and the caches once, then interleave short rounds of the two so drift
    // on a shared disk hits both; the figures are the medians over the rounds.
    constexpr int rounds = 9;
    (void)floor_rate(dir, 50);
    std::vector<double> floors;
    std::vector<double> journals;
    std::vector<double> ratios;
    std::vector<double> task_floors;
    std::vector<double> task_journals;
    const int tasks_per_round = std::max(1, n / rounds / 4);
    for (int round = 0; round < rounds; ++round) {
        floors.push_back(floor_rate(dir, n / rounds));
        journals.push_back(journal_rate(dir, n / rounds, pool));
        ratios.push_back(journals.back() / floors.back());
        auto tf = task_floor_ms(dir, tasks_per_round);
        task_floors.insert(task_floors.end(), tf.begin(), tf.end());
        auto tj = task_journal_ms(dir, tasks_per_round, pool);
        task_journals.insert(task_journals.end(), tj.begin(), tj.end());
    }
    const auto median = [](std::vector<double> v) {
        std::sort(v.begin(), v.end());
        return v[v.size() / 2];
    };
    const double floor = median(floors);
    const double journal = median(journals);
    const double ratio = median(ratios);
    const auto folded = fold_figure(dir, pool);
    pool.join();
    std::filesystem::remove_all(dir);

    fmt::print("session journal, file backend ({} appends per side in {} interleaved rounds, medians; directory {})\n",
               rounds * (n / rounds), rounds, base);
    fmt::print("  {:<52} {:>12}\n", "measure", "value");
    fmt::print("  {:<52} {:>9.0f} /s\n", "floor: C loop of write + fdatasync", floor);
    fmt::print("  {:<52} {:>9.0f} /s\n", "journal::append (write + fdatasync on the pool)", journal);
    fmt::print("  {:<52} {:>11.2f}x  (goal >= 0.80)\n", "journal / floor (median of the rounds' ratios)", ratio);
    fmt::print("  {:<52} {:>9.2f} ms  (p50 of {})\n", "a served task's journal (5 records, 4 durable points)",
               median(task_journals), task_journals.size());
    fmt::print("  {:<52} {:>9.2f} ms\n", "  floor: the same syscalls one after another", median(task_floors));
    fmt::print("  {:<52} {:>9.2f} ms  (goal < 50)\n", "fold of 10,000 records", folded.fold_ms);
    fmt::print("  {:<52} {:>9.2f} ms  ({:.1f} MB: read, parse, schema, fold)\n", "store::load of the same journal",
               folded.load_ms, static_cast<double>(folded.bytes) / 1e6);
    fmt::print("  {:<52} {:>9.2f} ms\n", "  of which Boost.JSON parse of every line", folded.parse_ms);
    return 0;
}
