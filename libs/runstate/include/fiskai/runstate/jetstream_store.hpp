#pragma once
// The JetStream backend (`jetstream`): each run is a sequence of messages on an existing
// stream, one record per subject (`<prefix>.<id>._meta`, `<prefix>.<id>.<N>`), the stream
// configured one message per subject with discard-new-per-subject so a record subject is
// write-once. A second writer of a record is rejected by the stream; the rejection is
// classified by reading the subject back (our own Nats-Msg-Id: a lost ack, adopted). No
// expected-sequence header is sent (D11: nats-server 2.9.10 ignores the run-wide one).
// See docs/journal.md.

#include <fiskai/runstate/store.hpp>

#include <boost/asio/awaitable.hpp>

#include <chrono>
#include <memory>
#include <string>
#include <string_view>

namespace fiskai::runstate {

struct jetstream_store_options {
    std::string stream;  // required; must already exist
    // Bounds binding to the stream and checking it (Go: 10 s).
    std::chrono::milliseconds bind_timeout{10000};
    // Bounds each store or journal operation (Go: 15 s).
    std::chrono::milliseconds op_timeout{15000};
    // Bounds each wait of an ordered read of a run's records (Go: 5 s).
    std::chrono::milliseconds fetch_wait{5000};
};

// Binds to the stream and checks it; throws startup_error with Go's texts (a missing
// stream names the `nats stream add ...` to run; nothing is provisioned). Nothing blocks
// the calling thread.
[[nodiscard]] boost::asio::awaitable<std::shared_ptr<store>> bind_jetstream_store(jetstream_store_options options,
                                                                                  const context& ctx);

// The registry's factory (registered as `jetstream`, needing NATS): decodes `{"stream": ...}` strictly, then binds. The factory
// signature is synchronous, so this runs the bind on a private io_context and blocks the
// caller for at most the bind timeout: call it at start-up, before the io thread serves.
[[nodiscard]] std::shared_ptr<store> make_jetstream_store(std::string_view options_json, const context& ctx);

}  // namespace fiskai::runstate
