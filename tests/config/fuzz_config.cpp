// Fuzz target over configuration loading: YAML text -> decode -> prepare -> validate, in
// every mode. A configuration is operator input, so whatever it holds must end in a
// config_error naming the problem, never a crash, another exception type or undefined
// behaviour; and what is accepted must hold the invariants the servers rely on.
//
// Built twice: with clang's libFuzzer (-fsanitize=fuzzer) and, for g++, with the driver in
// tests/support/fuzz_driver.cpp.

#include "../support/fuzz_fail.hpp"

#include <fiskai/config/config.hpp>
#include <fiskai/gocompat/name.hpp>

#include <array>
#include <chrono>
#include <cstdint>
#include <exception>
#include <string>
#include <string_view>

namespace {

using namespace fiskai::config;

[[noreturn]] void fail(std::string_view what, std::string_view text) { fiskai::fuzz::fail("fuzz_config", what, text); }

void check_limits(const server_limits& limits, std::string_view where, std::string_view text) {
    if (limits.max_concurrent_tools < 0 || limits.max_concurrent_tools > max_concurrent_tools_ceiling) {
        fail(std::string(where) + ": max_concurrent_tools out of range: " + std::to_string(limits.max_concurrent_tools),
             text);
    }
    if (limits.tool_timeout < std::chrono::nanoseconds::zero())
        fail(std::string(where) + ": negative tool_timeout", text);
    if (limits.effective_concurrency() <= 0 || limits.effective_timeout() <= std::chrono::nanoseconds::zero()) {
        fail(std::string(where) + ": an effective limit is not positive", text);
    }
}

// What every accepted configuration guarantees, whatever the mode.
void check_accepted(const config& c, mode m, std::string_view text) {
    if (!c.identity.empty() && !fiskai::gocompat::is_valid_name(c.identity)) fail("accepted an invalid identity", text);
    for (const auto& host : c.remote_tools) {
        if (!fiskai::gocompat::is_valid_name(host.name)) fail("accepted an invalid remote_tools name", text);
        if (!host.exclude.tags.empty()) fail("accepted remote_tools exclude.tags", text);
    }
    if (c.mcp) check_limits(c.mcp->limits, "expose.agent.mcp", text);
    if (c.a2a) check_limits(c.a2a->limits, "expose.agent.a2a", text);
    const auto& serve = c.serve;
    if (serve.workers < 1 || serve.workers > max_serve_workers)
        fail("accepted expose.agent.workers out of range", text);
    if (serve.drain_timeout < std::chrono::nanoseconds::zero() ||
        serve.report_timeout <= std::chrono::nanoseconds::zero())
        fail("accepted a negative drain_timeout or a non-positive report_timeout", text);
    if (c.a2a && c.a2a->prompts &&
        (c.a2a->prompts->question_timeout < min_question_timeout ||
         c.a2a->prompts->accept_window <= std::chrono::nanoseconds::zero()))
        fail("accepted an a2a question_timeout below the floor or a non-positive accept_window", text);
    if (serve.queue && (serve.queue->ack_wait < min_queue_ack_wait || serve.queue->max_deliver < 1 ||
                        serve.queue->max_deliver > max_queue_max_deliver || serve.queue->consumer.empty()))
        fail("accepted queue settings out of range", text);
    if (serve.slack && (serve.slack->question_timeout < min_question_timeout || serve.slack->max_admitted < 1 ||
                        serve.slack->max_admitted > max_slack_max_admitted))
        fail("accepted slack settings out of range", text);
    if (c.llm.max_retries < 0 || c.llm.max_retries > max_llm_max_retries)
        fail("accepted llm.max_retries out of range", text);
    for (std::size_t i = 0; i < c.mcp_servers.size(); ++i) {
        const auto& server = c.mcp_servers[i];
        if (!fiskai::gocompat::is_valid_name(server.name, 64)) fail("accepted an invalid mcp_servers name", text);
        if (server.command.empty() == server.url.empty())
            fail("accepted mcp_servers without exactly one transport", text);
        if (!server.include.tags.empty() || !server.exclude.tags.empty()) fail("accepted mcp_servers tags", text);
        for (std::size_t j = 0; j < i; ++j) {
            if (c.mcp_servers[j].name == server.name) fail("accepted duplicate mcp_servers names", text);
        }
    }
    if (m == mode::serve && !c.a2a_channel_enabled() && !c.queue_channel_enabled() && !c.slack_channel_enabled())
        fail("serve mode accepted a config with nothing to serve", text);
    if (m == mode::mcp && !c.mcp) fail("mcp mode accepted a config without expose.agent.mcp", text);
    if (m == mode::server && !c.a2a_serving_enabled()) fail("server mode accepted a config that does not serve", text);
    // Validation is a pure function of the prepared config: it must accept it again.
    try {
        validate_for_mode(c, m);
    } catch (const config_error& e) {
        fail(std::string("an accepted config fails its own validation: ") + e.what(), text);
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    try {
        // lenient runs only the checks every mode shares: decode and prepare once, then
        // apply each mode's own checks to the prepared config, as parse(text, mode) does.
        const config c = parse(text, mode::lenient);
        check_accepted(c, mode::lenient, text);
        static constexpr std::array modes{mode::mcp, mode::server, mode::serve, mode::agent};
        for (const mode m : modes) {
            try {
                validate_for_mode(c, m);
            } catch (const config_error& e) {
                if (std::string_view(e.what()).empty()) fail("a config_error without a message", text);
                continue;
            }
            check_accepted(c, m, text);
        }
    } catch (const config_error& e) {
        if (std::string_view(e.what()).empty()) fail("a config_error without a message", text);
    } catch (const std::exception& e) {
        fail(std::string("an exception other than config_error escaped: ") + e.what(), text);
    }
    return 0;
}
