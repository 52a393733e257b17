#pragma once
// The embedded default broker: Debian's `nats-server` run as a child process on a loopback
// port, with JetStream in a temporary directory, for trying fisk-ai on one machine and for
// tests. Started by the constructor, which returns only once the server accepts
// connections; stopped by stop() or the destructor (SIGTERM, then SIGKILL after a grace).
// The child is also told to stop if this process dies (PR_SET_PDEATHSIG), so an abrupt exit
// leaves no broker behind.

#include <fiskai/conns/error.hpp>

#include <chrono>
#include <string>
#include <string_view>
#include <sys/types.h>
#include <vector>

namespace fiskai::conns {

// code() is broker_not_installed or broker_failed.
class broker_error : public error {
public:
    using error::error;
};

struct broker_options {
    std::string executable = "/usr/sbin/nats-server";
    std::string host = "127.0.0.1";
    // 0: an ephemeral port chosen by the server and read back from its ports file.
    unsigned short port = 0;
    // JetStream's store. Empty: a fresh temporary directory, removed on stop.
    std::string store_dir;
    bool jetstream = true;
    // Appended to the command line (e.g. `-c <file>` for authorisation settings).
    std::vector<std::string> extra_args;
    // Clients must present this token (letters, digits, '-' and '_'). Never on the command
    // line, which any local user can read in /proc: it goes in a 0600 config file in the
    // broker's private directory, given with `-c`, and removed once the server accepts
    // connections (serve.md Amendment 12). Empty: no authorisation.
    std::string token;
    // How long the server has to accept connections.
    std::chrono::milliseconds startup_deadline{10000};
    // How long stop() waits after SIGTERM before SIGKILL.
    std::chrono::milliseconds stop_grace{5000};
};

class embedded_broker {
public:
    // Starts the server and waits until it accepts a TCP connection. Throws broker_error
    // naming the executable, and quoting the server's log when it failed to start.
    explicit embedded_broker(broker_options options = {});
    ~embedded_broker();
    embedded_broker(const embedded_broker&) = delete;
    embedded_broker& operator=(const embedded_broker&) = delete;

    // `nats://127.0.0.1:<port>`.
    [[nodiscard]] const std::string& url() const noexcept { return url_; }
    [[nodiscard]] unsigned short port() const noexcept { return port_; }
    [[nodiscard]] const std::string& store_dir() const noexcept { return store_dir_; }
    [[nodiscard]] pid_t pid() const noexcept { return pid_; }
    [[nodiscard]] bool running() const noexcept { return pid_ > 0; }

    // SIGTERM, a wait of stop_grace, then SIGKILL; reaps the child and removes a temporary
    // store. Returns false when SIGKILL was needed. Idempotent.
    bool stop() noexcept;
    // SIGKILL now, without a grace (a second signal, an abrupt exit); the temporary store
    // is removed all the same.
    void kill_now() noexcept;

private:
    broker_options options_;
    std::string work_dir_;  // ours: ports file, log, and the store when none was given
    std::string store_dir_;
    std::string url_;
    unsigned short port_ = 0;
    pid_t pid_ = -1;
};

}  // namespace fiskai::conns
