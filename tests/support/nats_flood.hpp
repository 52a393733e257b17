#pragma once
// A thread publishing one message to one subject over and over, as fast as nats.c takes
// it, until stopped or destroyed: the load under which the tests end subscriptions.
// Destroying it stops and joins the thread, so a failed assertion (an exception) reports
// rather than terminating the test binary on a joinable std::thread.

#include <nats/nats.h>

#include <atomic>
#include <string>
#include <thread>
#include <utility>

namespace fiskai::test {

class nats_flood {
public:
    // `reply` empty: plain publishes; otherwise each message asks for a reply there.
    nats_flood(natsConnection* nc, std::string subject, std::string data, std::string reply = {})
        : subject_(std::move(subject)), data_(std::move(data)), reply_(std::move(reply)) {
        thread_ = std::thread([this, nc] {
            while (!stopping_.load()) {
                if (reply_.empty())
                    natsConnection_PublishString(nc, subject_.c_str(), data_.c_str());
                else
                    natsConnection_PublishRequestString(nc, subject_.c_str(), reply_.c_str(), data_.c_str());
            }
        });
    }
    ~nats_flood() { stop(); }
    nats_flood(const nats_flood&) = delete;
    nats_flood& operator=(const nats_flood&) = delete;

    void stop() {
        stopping_ = true;
        if (thread_.joinable()) thread_.join();
    }

private:
    std::string subject_;
    std::string data_;
    std::string reply_;
    std::atomic<bool> stopping_{false};
    std::thread thread_;
};

}  // namespace fiskai::test
