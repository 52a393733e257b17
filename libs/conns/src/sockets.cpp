#include "sockets.hpp"

#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <algorithm>
#include <cerrno>
#include <cstdlib>

namespace fiskai::conns::detail {

void for_each_socket(const std::function<void(int fd, ino_t inode)>& fn) {
    DIR* dir = ::opendir("/proc/self/fd");
    if (!dir) return;
    const int own = ::dirfd(dir);
    while (const dirent* e = ::readdir(dir)) {
        char* end = nullptr;
        const long fd = std::strtol(e->d_name, &end, 10);
        if (end == e->d_name || *end != '\0' || fd < 3 || fd == own) continue;
        struct stat st {};
        if (::fstat(static_cast<int>(fd), &st) != 0 || !S_ISSOCK(st.st_mode)) continue;
        fn(static_cast<int>(fd), st.st_ino);
    }
    ::closedir(dir);
}

std::vector<std::uint16_t> server_ports(const std::vector<std::string>& urls) {
    std::vector<std::uint16_t> out;
    for (std::string_view url : urls) {
        if (const auto scheme = url.find("://"); scheme != std::string_view::npos) url.remove_prefix(scheme + 3);
        url = url.substr(0, url.find_first_of("/?#"));
        if (const auto at = url.rfind('@'); at != std::string_view::npos) url.remove_prefix(at + 1);
        std::string_view port;
        if (!url.empty() && url.front() == '[') {
            const auto close = url.find(']');
            if (close != std::string_view::npos && close + 1 < url.size() && url[close + 1] == ':')
                port = url.substr(close + 2);
        } else if (const auto colon = url.rfind(':'); colon != std::string_view::npos) {
            port = url.substr(colon + 1);
        }
        unsigned long value = 4222;
        if (!port.empty()) {
            const std::string text(port);
            char* end = nullptr;
            value = std::strtoul(text.c_str(), &end, 10);
            if (*end != '\0' || value == 0 || value > 65535) continue;
        }
        out.push_back(static_cast<std::uint16_t>(value));
    }
    return out;
}

namespace {

// The peer port of a TCP socket; not_yet while it is still connecting, 0 when it is not a
// TCP socket (or its peer cannot be known).
constexpr int not_yet = -1;
int tcp_peer_port(int fd) {
    int type = 0;
    socklen_t len = sizeof type;
    if (::getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) != 0 || type != SOCK_STREAM) return 0;
    sockaddr_storage peer{};
    len = sizeof peer;
    if (::getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &len) != 0) return errno == ENOTCONN ? not_yet : 0;
    if (peer.ss_family == AF_INET) return ntohs(reinterpret_cast<const sockaddr_in*>(&peer)->sin_port);
    if (peer.ss_family == AF_INET6) return ntohs(reinterpret_cast<const sockaddr_in6*>(&peer)->sin6_port);
    return 0;
}

// How often a running dial's new sockets are looked at: a dial that answers in time never
// sees a scan.
constexpr std::chrono::milliseconds scan_interval{100};

}  // namespace

dial_watchdog::dial_watchdog(std::vector<std::uint16_t> ports, std::chrono::milliseconds limit)
    : ports_(std::move(ports)), limit_(limit) {
    for_each_socket([this](int, ino_t inode) { before_.insert(inode); });
    thread_ = std::thread([this] {
        std::unique_lock lock(mu_);
        while (!cv_.wait_for(lock, scan_interval, [this] { return stopping_; })) scan(std::chrono::steady_clock::now());
    });
}

dial_watchdog::~dial_watchdog() {
    {
        std::lock_guard lock(mu_);
        stopping_ = true;
    }
    cv_.notify_all();
    thread_.join();
}

bool dial_watchdog::fired() const {
    std::lock_guard lock(mu_);
    return fired_;
}

void dial_watchdog::scan(std::chrono::steady_clock::time_point now) {
    for_each_socket([&](int fd, ino_t inode) {
        if (before_.contains(inode)) return;
        auto seen = first_seen_.find(inode);
        if (seen == first_seen_.end()) {
            const int port = tcp_peer_port(fd);
            if (port == not_yet) return;
            if (port == 0 || std::find(ports_.begin(), ports_.end(), port) == ports_.end()) {
                before_.insert(inode);  // not a server connection: never looked at again
                return;
            }
            first_seen_.emplace(inode, now);
            return;
        }
        if (now - seen->second < limit_) return;
        ::shutdown(fd, SHUT_RDWR);
        fired_ = true;
        first_seen_.erase(seen);
        before_.insert(inode);
    });
}

}  // namespace fiskai::conns::detail
