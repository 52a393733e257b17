#pragma once
// A real nats-server with JetStream on a loopback port, a connection to it, a blocking
// pool and a jetstream::context; plus provisioning through nats.c directly (the product
// never provisions: streams, consumers and buckets are the operator's, so tests make them
// the way an operator's `nats` CLI would).

#include <fiskai/conns/connection.hpp>
#include <fiskai/conns/embedded_broker.hpp>
#include <fiskai/jetstream/context.hpp>

#include <nats/nats.h>

#include <boost/asio/thread_pool.hpp>

#include <chrono>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace fiskai::test {

inline conns::connect_options js_test_connect_options() {
    conns::connect_options o;
    o.name = conns::connection_name("jetstream-test");
    o.connect_timeout = std::chrono::milliseconds(2000);
    // A restarted broker is found again quickly.
    o.reconnect_wait = std::chrono::milliseconds(100);
    o.max_reconnect = 600;
    return o;
}

// What `nats stream add` would set; tests change fields before add_stream().
struct stream_spec {
    std::string name;
    std::vector<std::string> subjects;
    std::int64_t max_msgs_per_subject = 1;
    bool discard_new = true;
    bool discard_new_per_subject = true;
    std::int64_t max_age_ns = 0;
    std::int32_t max_msg_size = -1;
    bool work_queue = false;
};

// A broker started without JetStream, for the texts that must say so.
inline conns::broker_options without_jetstream() {
    conns::broker_options o;
    o.jetstream = false;
    return o;
}

class js_fixture {
public:
    explicit js_fixture(conns::broker_options broker_options = {})
        : broker(std::move(broker_options)),
          connection(conns::connection::dial_url(broker.url(), js_test_connect_options())),
          pool(4),
          js(*connection, pool.get_executor()) {
        if (natsConnection_JetStream(&raw_js_, connection->native_handle(), nullptr) != NATS_OK) {
            throw std::runtime_error("jsCtx");
        }
    }
    ~js_fixture() {
        if (raw_js_) jsCtx_Destroy(raw_js_);
        pool.join();
    }

    void add_stream(const stream_spec& spec) {
        jsStreamConfig cfg;
        jsStreamConfig_Init(&cfg);
        cfg.Name = spec.name.c_str();
        std::vector<const char*> subjects;
        for (const auto& s : spec.subjects) subjects.push_back(s.c_str());
        cfg.Subjects = subjects.data();
        cfg.SubjectsLen = static_cast<int>(subjects.size());
        cfg.MaxMsgsPerSubject = spec.max_msgs_per_subject;
        cfg.Discard = spec.discard_new ? js_DiscardNew : js_DiscardOld;
        cfg.DiscardNewPerSubject = spec.discard_new_per_subject;
        cfg.MaxAge = spec.max_age_ns;
        cfg.MaxMsgSize = spec.max_msg_size;
        if (spec.work_queue) cfg.Retention = js_WorkQueuePolicy;
        cfg.Storage = js_FileStorage;
        jsErrCode ec = static_cast<jsErrCode>(0);
        if (const natsStatus s = js_AddStream(nullptr, raw_js_, &cfg, nullptr, &ec); s != NATS_OK) {
            throw std::runtime_error("add stream " + spec.name + ": " + nats_GetLastError(nullptr));
        }
    }

    void add_pull_consumer(const std::string& stream, const std::string& durable, const std::string& filter,
                           std::int64_t max_deliver = 5) {
        jsConsumerConfig cfg;
        jsConsumerConfig_Init(&cfg);
        cfg.Durable = durable.c_str();
        cfg.FilterSubject = filter.c_str();
        cfg.AckPolicy = js_AckExplicit;
        cfg.AckWait = std::chrono::nanoseconds(std::chrono::seconds(30)).count();
        cfg.MaxDeliver = max_deliver;
        jsErrCode ec = static_cast<jsErrCode>(0);
        if (js_AddConsumer(nullptr, raw_js_, stream.c_str(), &cfg, nullptr, &ec) != NATS_OK) {
            throw std::runtime_error("add consumer " + durable + ": " + nats_GetLastError(nullptr));
        }
    }

    void add_kv(const std::string& bucket, std::int32_t max_value_size = -1, std::int64_t ttl_ns = 0,
                std::uint8_t history = 1) {
        kvConfig cfg;
        kvConfig_Init(&cfg);
        cfg.Bucket = bucket.c_str();
        cfg.MaxValueSize = max_value_size;
        cfg.TTL = ttl_ns;
        cfg.History = history;
        kvStore* kv = nullptr;
        if (js_CreateKeyValue(&kv, raw_js_, &cfg) != NATS_OK) {
            throw std::runtime_error("add kv " + bucket + ": " + nats_GetLastError(nullptr));
        }
        kvStore_Destroy(kv);
    }

    // A publish straight from nats.c with a Nats-Msg-Id (another writer, a lost ack).
    std::uint64_t raw_publish(const std::string& subject, const std::string& data, const std::string& msg_id = {}) {
        jsPubOptions po;
        jsPubOptions_Init(&po);
        if (!msg_id.empty()) po.MsgId = msg_id.c_str();
        jsPubAck* pa = nullptr;
        jsErrCode ec = static_cast<jsErrCode>(0);
        if (js_Publish(&pa, raw_js_, subject.c_str(), data.data(), static_cast<int>(data.size()), &po, &ec) !=
            NATS_OK) {
            throw std::runtime_error("publish " + subject + ": " + nats_GetLastError(nullptr));
        }
        const auto seq = pa->Sequence;
        jsPubAck_Destroy(pa);
        return seq;
    }

    [[nodiscard]] jsCtx* raw_js() const noexcept { return raw_js_; }

    // What an operator is told when this fixture's broker runs without JetStream.
    [[nodiscard]] std::string not_enabled_text() const {
        return "JetStream is not enabled on the NATS server at " + broker.url() +
               "; start it with -js (or jetstream {} in its configuration)";
    }

    conns::embedded_broker broker;
    std::unique_ptr<conns::connection> connection;
    boost::asio::thread_pool pool;
    jetstream::context js;

private:
    jsCtx* raw_js_ = nullptr;
};

}  // namespace fiskai::test
