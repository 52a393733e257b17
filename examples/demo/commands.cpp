#include "commands.hpp"

#include <boost/json.hpp>

#include <fcntl.h>
#include <sys/types.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

extern char** environ;

namespace json = boost::json;
namespace fs = std::filesystem;

namespace demo {

namespace {

// Writes `message` to stderr when the global --verbose flag is on.
void verbose(const minifisk::Context& ctx, const std::string& message) {
    if (!ctx.flag_bool("verbose")) return;
    std::cout.flush();
    std::cerr << ctx.app().name << ": " << message << "\n";
    std::cerr.flush();
}

// FNV-1a: a stable hash so that stream figures depend only on the name.
std::uint64_t fnv1a(const std::string& s) {
    std::uint64_t h = 14695981039346656037ULL;
    for (unsigned char c : s) {
        h ^= c;
        h *= 1099511628211ULL;
    }
    return h;
}

// Go's %q for the printable text the demo prints.
std::string quote(const std::string& s) { return json::serialize(json::value(s)); }

std::string join(const std::vector<std::string>& items, const std::string& sep) {
    std::string out;
    for (std::size_t i = 0; i < items.size(); ++i) out += (i == 0 ? "" : sep) + items[i];
    return out;
}

// --- configuration state ------------------------------------------------------------------

fs::path state_dir() {
    if (const char* dir = std::getenv("DEMO_STATE_DIR"); dir != nullptr && *dir != '\0') return dir;
    return fs::path("/tmp") / ("fisk-demo-state-" + std::to_string(::getuid()));
}

fs::path config_file() { return state_dir() / "config.json"; }

// The stored configuration; an absent file is an empty configuration.
json::object load_config() {
    std::ifstream in(config_file(), std::ios::binary);
    if (!in) return {};
    std::stringstream buf;
    buf << in.rdbuf();
    boost::system::error_code ec;
    json::value v = json::parse(buf.str(), ec);
    if (ec || !v.is_object()) throw std::runtime_error("corrupt configuration file " + config_file().string());
    return v.as_object();
}

// Writes the configuration atomically (temporary file, then rename).
void save_config(const json::object& cfg) {
    fs::create_directories(state_dir());
    const fs::path target = config_file();
    const fs::path tmp = target.string() + ".tmp." + std::to_string(::getpid());
    {
        std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
        out << json::serialize(cfg) << "\n";
        if (!out) throw std::runtime_error("cannot write " + tmp.string());
    }
    fs::rename(tmp, target);
}

}  // namespace

int stream_info(const minifisk::Context& ctx) {
    const std::string name = ctx.arg_string("name");
    verbose(ctx, "looking up stream " + name);
    const std::uint64_t h = fnv1a(name);
    const std::uint64_t messages = h % 100000;
    const std::uint64_t bytes = messages * (64 + (h >> 32) % 960);
    const std::vector<std::string> subjects = {name + ".>"};
    const std::string context = ctx.flag_string("context");

    if (ctx.flag_bool("json")) {
        json::object o;
        o["name"] = name;
        if (!context.empty()) o["context"] = context;
        o["messages"] = messages;
        o["bytes"] = bytes;
        json::array subj;
        for (const auto& s : subjects) subj.emplace_back(s);
        o["subjects"] = std::move(subj);
        std::cout << json::serialize(o) << "\n";
        return 0;
    }
    std::cout << "Information for stream " << name << "\n\n";
    if (!context.empty()) std::cout << "   Context: " << context << "\n";
    std::cout << "  Subjects: " << join(subjects, ", ") << "\n"
              << "  Messages: " << messages << "\n"
              << "     Bytes: " << bytes << "\n";
    return 0;
}

int stream_rm(const minifisk::Context& ctx) {
    const std::string name = ctx.arg_string("name");
    std::cout << "removed stream " << name << (ctx.flag_bool("force") ? " (forced)" : "") << "\n";
    return 0;
}

int pub(const minifisk::Context& ctx) {
    const std::int64_t count = ctx.flag_int("count");
    if (count < 0) return minifisk::fatal(ctx.app(), "--count must not be negative");
    const std::string subject = ctx.arg_string("subject");
    const std::string mode = ctx.flag_string("mode");
    const std::string timeout = minifisk::format_duration(ctx.flag_duration("timeout"));
    const std::string headers = join(ctx.flag_strings("header"), " ");
    const std::string body = join(ctx.arg_strings("body"), " ");
    verbose(ctx, "publishing " + std::to_string(count) + " message(s) to " + subject);
    if (count == 0) {
        std::cout << "nothing to publish to " << subject << "\n";
        return 0;
    }
    for (std::int64_t i = 1; i <= count; ++i) {
        std::cout << "published " << i << "/" << count << " to " << subject << " mode=" << mode << " headers=["
                  << headers << "] body=" << quote(body) << " timeout=" << timeout << "\n";
    }
    return 0;
}

int debug_dump(const minifisk::Context& ctx) {
    std::size_t keys = 0;
    try {
        keys = load_config().size();
    } catch (const std::exception& e) {
        return minifisk::fatal(ctx.app(), e.what());
    }
    const std::string context = ctx.flag_string("context");
    std::cout << "state_dir: " << state_dir().string() << "\n"
              << "config_keys: " << keys << "\n"
              << "context: " << (context.empty() ? "(unset)" : context) << "\n"
              << "verbose: " << (ctx.flag_bool("verbose") ? "true" : "false") << "\n"
              << "password: " << (ctx.flag_string("password").empty() ? "unset" : "set") << "\n";
    return 0;
}

int reset(const minifisk::Context& ctx) {
    std::error_code ec;
    fs::remove(config_file(), ec);
    if (ec) return minifisk::fatal(ctx.app(), "removing " + config_file().string() + ": " + ec.message());
    std::cout << "all state reset\n";
    return 0;
}

int sleep(const minifisk::Context& ctx) {
    const auto d = ctx.arg_duration("duration");
    verbose(ctx, "sleeping for " + minifisk::format_duration(d));
    if (d.count() > 0) std::this_thread::sleep_for(d);
    std::cout << "slept " << minifisk::format_duration(d) << "\n";
    return 0;
}

int flood(const minifisk::Context& ctx) {
    const std::int64_t total = ctx.flag_int("bytes");
    static const std::string head = "BEGIN\n";
    static const std::string tail = "END\n";
    if (total < static_cast<std::int64_t>(head.size() + tail.size()))
        return minifisk::fatal(ctx.app(), "--bytes must be at least " + std::to_string(head.size() + tail.size()));

    // Goes to stderr first so a merged capture shows stderr and stdout interleaved.
    std::cerr << "flood: writing " << total << " bytes\n";
    std::cerr.flush();

    // Every line is 64 bytes: "line 000001 " padded with a fixed pattern and "\n". The
    // last line is cut short to hit the exact size, and still ends with "\n", so the
    // output always ends with "\nEND\n".
    constexpr std::size_t line_len = 64;
    static const std::string pattern = "abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ";
    auto make_line = [&](std::uint64_t n) {
        std::string line = "line ";
        std::string num = std::to_string(n);
        if (num.size() < 6) num.insert(0, 6 - num.size(), '0');
        line += num + " ";
        for (std::size_t i = 0; line.size() < line_len - 1; ++i) line += pattern[i % pattern.size()];
        line += "\n";
        return line;
    };

    std::uint64_t remaining = static_cast<std::uint64_t>(total) - head.size() - tail.size();
    std::string buf = head;
    buf.reserve(1 << 16);
    std::uint64_t n = 1;
    while (remaining > 0) {
        std::string line = make_line(n++);
        if (remaining < line.size()) {
            line.resize(remaining - 1);
            line += "\n";
        }
        remaining -= line.size();
        buf += line;
        if (buf.size() >= (1 << 16) - line_len) {
            std::cout.write(buf.data(), static_cast<std::streamsize>(buf.size()));
            buf.clear();
        }
    }
    buf += tail;
    std::cout.write(buf.data(), static_cast<std::streamsize>(buf.size()));
    std::cout.flush();
    return 0;
}

int fail(const minifisk::Context& ctx) {
    const std::int64_t code = ctx.flag_int("code");
    if (code < 0 || code > 255) return minifisk::fatal(ctx.app(), "--code must be between 0 and 255");
    std::cout.flush();
    std::cerr << "failing with code " << code << "\n";
    std::cerr.flush();
    return static_cast<int>(code);
}

int spawn(const minifisk::Context& ctx) {
    const std::string marker = ctx.flag_string("marker");
    const auto delay = ctx.flag_duration("delay");
    const auto linger = ctx.flag_duration("linger");
    const bool detach = ctx.flag_bool("detach-output");

    // Nothing buffered may be duplicated into the child.
    std::cout.flush();
    std::cerr.flush();
    // A plain fork: the background process stays in this process group (no setsid,
    // no setpgid), so killing the group must take it down too.
    const pid_t pid = ::fork();
    if (pid < 0) return minifisk::fatal(ctx.app(), std::string("fork: ") + std::strerror(errno));
    if (pid == 0) {
        if (detach) {
            const int devnull = ::open("/dev/null", O_RDWR);
            if (devnull >= 0) {
                ::dup2(devnull, STDIN_FILENO);
                ::dup2(devnull, STDOUT_FILENO);
                ::dup2(devnull, STDERR_FILENO);
                if (devnull > STDERR_FILENO) ::close(devnull);
            }
        }
        if (delay.count() > 0) std::this_thread::sleep_for(delay);
        const std::string text = std::to_string(::getpid()) + "\n";
        const int fd = ::open(marker.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd < 0) ::_exit(1);
        const bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
        ::close(fd);
        ::_exit(ok ? 0 : 1);
    }
    std::cout << "started background pid " << pid << "\n";
    std::cout.flush();
    if (linger.count() > 0) std::this_thread::sleep_for(linger);
    return 0;
}

int echo(const minifisk::Context& ctx) {
    std::string text = join(ctx.arg_strings("text"), " ");
    if (ctx.flag_bool("upper"))
        std::transform(text.begin(), text.end(), text.begin(),
                       [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
    std::cout << text << "\n";
    return 0;
}

int env(const minifisk::Context& ctx) {
    if (ctx.arg_set("name")) {
        const std::string name = ctx.arg_string("name");
        if (const char* value = std::getenv(name.c_str()); value != nullptr) {
            std::cout << name << "=" << value << "\n";
        } else {
            std::cout << name << " is not set\n";
        }
        return 0;
    }
    std::vector<std::pair<std::string, std::string>> vars;
    for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
        std::string entry = *e;
        const auto eq = entry.find('=');
        if (eq == std::string::npos) {
            vars.emplace_back(entry, entry);
        } else {
            vars.emplace_back(entry.substr(0, eq), entry);
        }
    }
    std::stable_sort(vars.begin(), vars.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    for (const auto& v : vars) std::cout << v.second << "\n";
    return 0;
}

int config_get(const minifisk::Context& ctx) {
    const std::string key = ctx.arg_string("key");
    try {
        const json::object cfg = load_config();
        const auto* v = cfg.if_contains(key);
        if (v == nullptr || !v->is_string())
            return minifisk::fatal(ctx.app(), "configuration key " + quote(key) + " is not set");
        std::cout << v->as_string().c_str() << "\n";
    } catch (const std::exception& e) {
        return minifisk::fatal(ctx.app(), e.what());
    }
    return 0;
}

int config_set(const minifisk::Context& ctx) {
    const std::string key = ctx.arg_string("key");
    const std::string value = ctx.arg_string("value");
    try {
        json::object cfg = load_config();
        cfg[key] = value;
        save_config(cfg);
    } catch (const std::exception& e) {
        return minifisk::fatal(ctx.app(), e.what());
    }
    verbose(ctx, "wrote " + config_file().string());
    std::cout << "set " << key << "=" << value << "\n";
    return 0;
}

}  // namespace demo
