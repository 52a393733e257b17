// A queue worker in a process of its own, for the kill -9 test: the real server and queue
// channel, the agent on fiskai-fake-llm, the file journal in a directory shared with the
// test, and the `probe` tool. Prints `ready` on stdout once the channel is bound, then
// serves until killed; the first SIGTERM or SIGINT drains it as fisk-ai-serve's does, and it
// exits 0 once drained.
//
//   queue_worker_child NATS_URL LLM_PORT JOURNAL_DIR ACK_WAIT_SECONDS
#include "session_harness.hpp"

#include <fiskai/conns/connection.hpp>
#include <fiskai/jetstream/context.hpp>
#include <fiskai/jetstream/offload.hpp>
#include <fiskai/serve/queue_channel.hpp>
#include <fiskai/serve/serve.hpp>
#include <fiskai/toolkit/function_tool.hpp>

#include <boost/asio/signal_set.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/json.hpp>

#include <csignal>
#include <cstdio>
#include <string>

int main(int argc, char** argv) {
    namespace asio = boost::asio;
    namespace json = boost::json;
    namespace serve = fiskai::serve;
    if (argc != 5) {
        std::fprintf(stderr, "usage: queue_worker_child NATS_URL LLM_PORT JOURNAL_DIR ACK_WAIT_SECONDS\n");
        return 2;
    }
    try {
        fiskai::config::config cfg;
        cfg.llm.model = "claude-test";
        fiskai::test::session_harness h(cfg, argv[3], fiskai::test::fake_model_provider(std::stoi(argv[2])));
        fiskai::toolkit::function_tool_spec spec;
        spec.name = "probe";
        spec.description = "Looks at something.";
        spec.exposed = fiskai::toolkit::exposure::everywhere();
        spec.confirm = fiskai::toolkit::confirm_posture::not_required;
        spec.handler = [](const json::object&,
                          const fiskai::toolkit::call_options&) -> asio::awaitable<fiskai::toolkit::outcome> {
            co_return fiskai::toolkit::outcome::from_json(json::value("probed"));
        };
        h.rt->tools.push_back(fiskai::toolkit::make_function_tool(std::move(spec)));

        fiskai::conns::connect_options co;
        co.name = fiskai::conns::connection_name("queue-worker-child");
        auto nats = fiskai::conns::connection::dial_url(argv[1], co);
        asio::thread_pool pool(2);
        fiskai::jetstream::context js(*nats, pool.get_executor());
        serve::queue_channel_options o;
        o.identity = "svc";
        o.ack_wait = std::chrono::seconds(std::stoi(argv[4]));
        o.fetch_wait = std::chrono::milliseconds(500);
        o.tool_names = {"probe"};
        auto channel = fiskai::test::run_on(h.ioc, serve::queue_channel::open(*nats, js, h.ioc.get_executor(), o));
        serve::server server(h.ioc.get_executor(), h.rt, serve::server_options{1});
        server.add(channel, serve::channel_options{true});
        asio::signal_set signals(h.ioc, SIGTERM, SIGINT);
        signals.async_wait([&server](const boost::system::error_code& ec, int) {
            if (!ec) server.drain();
        });
        std::printf("ready\n");
        std::fflush(stdout);
        fiskai::test::run_on(h.ioc, server.run(), std::chrono::hours(1));
        signals.cancel();
        // A fetch still waiting on its thread posts its result to h.ioc when it returns, so it
        // must return before h goes: closing the connection ends its wait.
        nats->close();
        fiskai::jetstream::wait_for_offloaded_threads(std::chrono::seconds(10));
    } catch (const std::exception& e) {
        std::fprintf(stderr, "queue_worker_child: %s\n", e.what());
        return 1;
    }
    return 0;
}
