#include <fiskai/conns/embedded_broker.hpp>

#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <arpa/inet.h>
#include <cctype>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <netinet/in.h>
#include <sstream>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

namespace fiskai::conns {

namespace fs = std::filesystem;
using std::chrono::steady_clock;

namespace {

std::string slurp(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

std::string tail(std::string s, std::size_t lines) {
    std::size_t pos = s.size();
    if (pos > 0 && s.back() == '\n') --pos;
    while (lines-- > 0 && pos > 0) {
        pos = s.rfind('\n', pos - 1);
        if (pos == std::string::npos) return s;
    }
    return pos == 0 ? s : s.substr(pos + 1);
}

bool accepts(const std::string& host, unsigned short port) {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return false;
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    ::inet_pton(AF_INET, host.c_str(), &addr.sin_addr);
    const bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
    ::close(fd);
    return ok;
}

// `{"nats":["nats://127.0.0.1:45841"]}` -> 45841.
unsigned short port_from_ports_file(const std::string& text) {
    boost::system::error_code ec;
    const auto doc = boost::json::parse(text, ec);
    if (ec || !doc.is_object()) return 0;
    const auto* urls = doc.as_object().if_contains("nats");
    if (!urls || !urls->is_array() || urls->as_array().empty() || !urls->as_array()[0].is_string()) return 0;
    const std::string url(urls->as_array()[0].as_string());
    const auto colon = url.rfind(':');
    if (colon == std::string::npos) return 0;
    try {
        const int p = std::stoi(url.substr(colon + 1));
        return p > 0 && p < 65536 ? static_cast<unsigned short>(p) : 0;
    } catch (...) {
        return 0;
    }
}

}  // namespace

embedded_broker::embedded_broker(broker_options options) : options_(std::move(options)) {
    if (::access(options_.executable.c_str(), X_OK) != 0) {
        throw broker_error(errc::broker_not_installed,
                           fmt::format("cannot start the embedded NATS server: {} is not an executable ({}); install "
                                       "Debian's nats-server package or configure nats_context",
                                       options_.executable, std::strerror(errno)));
    }
    const bool token_ok = std::all_of(options_.token.begin(), options_.token.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '-' || c == '_';
    });
    if (!token_ok) {
        throw broker_error(errc::broker_failed,
                           "the embedded NATS server's token may hold only letters, digits, '-' and '_'");
    }
    char tmpl[] = "/tmp/fisk-ai-broker-XXXXXX";
    if (!::mkdtemp(tmpl))
        throw broker_error(errc::broker_failed,
                           fmt::format("creating a directory for the embedded NATS server: {}", std::strerror(errno)));
    work_dir_ = tmpl;
    store_dir_ = options_.store_dir.empty() ? work_dir_ + "/jetstream" : options_.store_dir;
    const auto log_file = work_dir_ + "/nats-server.log";

    std::vector<std::string> args = {options_.executable,
                                     "-a",
                                     options_.host,
                                     "-p",
                                     options_.port == 0 ? std::string("-1") : std::to_string(options_.port),
                                     "--ports_file_dir",
                                     work_dir_,
                                     "-l",
                                     log_file};
    if (options_.jetstream) {
        args.insert(args.end(), {"-js", "-sd", store_dir_});
    }
    // The token travels in a file only this user can read, never in argv (/proc is public).
    std::string token_file;
    if (!options_.token.empty()) {
        token_file = work_dir_ + "/auth.conf";
        const int fd = ::open(token_file.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        const auto text = fmt::format("authorization {{ token: \"{}\" }}\n", options_.token);
        const bool written = fd >= 0 && ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
        const int err = errno;
        if (fd >= 0) ::close(fd);
        if (!written) {
            std::error_code ignored;
            fs::remove_all(work_dir_, ignored);
            throw broker_error(errc::broker_failed, fmt::format("writing the embedded NATS server's config {}: {}",
                                                                token_file, std::strerror(err)));
        }
        args.insert(args.end(), {"-c", token_file});
    }
    args.insert(args.end(), options_.extra_args.begin(), options_.extra_args.end());
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);

    const char* const log_path = log_file.c_str();
    const pid_t parent = ::getpid();
    const pid_t pid = ::fork();
    if (pid < 0) {
        const int err = errno;
        std::error_code ignored;
        fs::remove_all(work_dir_, ignored);
        throw broker_error(errc::broker_failed,
                           fmt::format("starting {}: fork: {}", options_.executable, std::strerror(err)));
    }
    if (pid == 0) {
        // The child: only async-signal-safe calls until exec.
        ::setpgid(0, 0);  // a terminal's Ctrl-C goes to us; we stop the broker in order
        ::prctl(PR_SET_PDEATHSIG, SIGTERM);
        if (::getppid() != parent) ::_exit(127);
        // stdin from /dev/null; what it prints before its log is open (a usage error) goes
        // to the log file too, so a failed start can be explained.
        const int devnull = ::open("/dev/null", O_RDONLY);
        if (devnull >= 0) ::dup2(devnull, 0);
        const int log = ::open(log_path, O_WRONLY | O_CREAT | O_APPEND, 0600);
        if (log >= 0) {
            ::dup2(log, 1);
            ::dup2(log, 2);
        }
        ::close_range(3, ~0U, 0);  // nothing of ours (NATS sockets, pipes) goes with it
        ::execv(argv[0], argv.data());
        ::_exit(127);
    }
    pid_ = pid;

    // The server writes `<exe>_<pid>.ports` once it listens; then a TCP connect must succeed.
    const auto ports_file =
        fs::path(work_dir_) / fmt::format("{}_{}.ports", fs::path(options_.executable).filename().string(), pid);
    const auto deadline = steady_clock::now() + options_.startup_deadline;
    std::string failure;
    while (true) {
        int status = 0;
        if (::waitpid(pid_, &status, WNOHANG) == pid_) {
            pid_ = -1;
            failure = WIFEXITED(status) ? fmt::format("it exited with status {}", WEXITSTATUS(status))
                                        : fmt::format("it was killed by signal {}", WTERMSIG(status));
            break;
        }
        if (port_ == 0) {
            std::error_code ec;
            if (fs::exists(ports_file, ec)) port_ = port_from_ports_file(slurp(ports_file));
        }
        if (port_ != 0 && accepts(options_.host, port_)) break;
        if (steady_clock::now() >= deadline) {
            failure = fmt::format("it did not accept connections within {} ms", options_.startup_deadline.count());
            break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    if (!failure.empty()) {
        const auto log = tail(slurp(log_file), 8);
        stop();
        throw broker_error(errc::broker_failed,
                           fmt::format("starting the embedded NATS server ({}): {}{}{}", options_.executable, failure,
                                       log.empty() ? "" : "; its log ends with:\n", log));
    }
    // The server has read its config: the token need not stay on disk.
    if (!token_file.empty()) {
        std::error_code ignored;
        fs::remove(token_file, ignored);
    }
    url_ = fmt::format("nats://{}:{}", options_.host, port_);
}

embedded_broker::~embedded_broker() { stop(); }

bool embedded_broker::stop() noexcept {
    bool graceful = true;
    if (pid_ > 0) {
        ::kill(pid_, SIGTERM);
        const auto deadline = steady_clock::now() + options_.stop_grace;
        int status = 0;
        pid_t r = 0;
        while ((r = ::waitpid(pid_, &status, WNOHANG)) == 0 && steady_clock::now() < deadline) {
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
        if (r == 0) {
            graceful = false;
            ::kill(pid_, SIGKILL);
            ::waitpid(pid_, &status, 0);
        }
        pid_ = -1;
    }
    if (!work_dir_.empty()) {
        std::error_code ignored;
        fs::remove_all(work_dir_, ignored);  // the store too, unless it was given to us
        work_dir_.clear();
    }
    return graceful;
}

void embedded_broker::kill_now() noexcept {
    if (pid_ > 0) {
        ::kill(pid_, SIGKILL);
        int status = 0;
        ::waitpid(pid_, &status, 0);
        pid_ = -1;
    }
    if (!work_dir_.empty()) {
        std::error_code ignored;
        fs::remove_all(work_dir_, ignored);
        work_dir_.clear();
    }
}

}  // namespace fiskai::conns
