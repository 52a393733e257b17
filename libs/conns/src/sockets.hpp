#pragma once
// The process's open sockets, read from /proc/self/fd: nats.c 3.4.1 gives no access to its
// connection's socket, and two workarounds need it (close-on-exec, the dial watchdog).

#include <sys/types.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <string_view>
#include <thread>
#include <vector>

namespace fiskai::conns::detail {

// Calls `fn(fd, inode)` for each socket the process has open (stdin to stderr excepted).
void for_each_socket(const std::function<void(int fd, ino_t inode)>& fn);

// The TCP port of each server URL (`nats://user:pass@host:4222`, `tls://[::1]`, `host`): the
// port after the host, or NATS's 4222.
[[nodiscard]] std::vector<std::uint16_t> server_ports(const std::vector<std::string>& urls);

// nats.c 3.4.1 reads the server's answer to the connect's PING one byte at a time and stops
// only at a newline or a closed connection: once the connect deadline has passed, every
// read fails at once and the loop appends a byte and reads again, forever, at full CPU and
// with a growing buffer, and the dial never returns (nats-io/nats.c#707, fixed in 3.8). A
// server that sends INFO and then goes silent (a stopped process, a partition) does this.
// While a dial runs, the watchdog looks at the TCP sockets opened since it started whose
// peer is on one of the servers' ports, and shuts down one that has lived `limit` (the
// connect timeout and a margin): the loop reads that as a closed connection and the
// attempt fails. A TLS connection reads it as an error and keeps looping: the watchdog
// cannot end that one.
class dial_watchdog {
public:
    dial_watchdog(std::vector<std::uint16_t> ports, std::chrono::milliseconds limit);
    ~dial_watchdog();
    dial_watchdog(const dial_watchdog&) = delete;
    dial_watchdog& operator=(const dial_watchdog&) = delete;

    // Whether it shut a socket down.
    [[nodiscard]] bool fired() const;

private:
    void scan(std::chrono::steady_clock::time_point now);

    std::vector<std::uint16_t> ports_;
    std::chrono::milliseconds limit_;
    std::set<ino_t> before_;                                             // sockets open at the start
    std::map<ino_t, std::chrono::steady_clock::time_point> first_seen_;  // new ones on the ports
    mutable std::mutex mu_;
    std::condition_variable cv_;
    bool stopping_ = false;
    bool fired_ = false;
    std::thread thread_;
};

}  // namespace fiskai::conns::detail
