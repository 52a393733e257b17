#pragma once
// Private to libs/jetstream: the impl structs, nats.c error mapping and message copies.
// Every function here runs on a blocking thread (nats.c's last error is per thread).

#include <fiskai/jetstream/context.hpp>

#include <nats/nats.h>

#include <functional>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <string>

namespace fiskai::jetstream::detail {

// An error from a failed nats.c call, read on the thread that made it.
[[nodiscard]] error make_error(natsStatus status, jsErrCode err_code = static_cast<jsErrCode>(0));
// The same with the text given (an asynchronous publish's error carries its own).
[[nodiscard]] error make_error(natsStatus status, int err_code, std::string text);

[[nodiscard]] jetstream::headers copy_headers(natsMsg* msg);
// A stored message (js_GetMsg, js_GetLastMsg, an ordered delivery).
[[nodiscard]] message copy_message(natsMsg* msg, bool from_delivery);

[[nodiscard]] stream_info to_stream_info(const jsStreamInfo* si);
[[nodiscard]] consumer_info to_consumer_info(const jsConsumerInfo* ci);

// jsOptions with the API wait set.
[[nodiscard]] jsOptions api_options(milliseconds timeout);

struct owned_js {
    jsCtx* js = nullptr;
    ~owned_js() {
        if (js) jsCtx_Destroy(js);
    }
};

}  // namespace fiskai::jetstream::detail

namespace fiskai::jetstream {

struct context::impl {
    natsConnection* nc = nullptr;
    jsCtx* js = nullptr;
    // Publishes go out asynchronously on their own context: the ack comes back on nats.c's
    // thread and is posted to the awaiter, so a publish costs no pool thread and no extra
    // hop (the journal's append latency is one publish round trip).
    jsCtx* async_js = nullptr;
    boost::asio::any_io_executor blocking;
    milliseconds default_timeout{15000};

    ~impl() {
        if (async_js) jsCtx_Destroy(async_js);
        if (js) jsCtx_Destroy(js);
    }
    [[nodiscard]] milliseconds effective(milliseconds t) const { return t.count() > 0 ? t : default_timeout; }
};

}  // namespace fiskai::jetstream
