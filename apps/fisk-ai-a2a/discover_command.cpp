// fisk-ai-a2a discover <identity> [--context N] [--json]
//
// Sends one discovery request to the agent serving <identity> and prints its card: the
// agent, its version and protocols, and its tools. The connection comes from --context,
// else the NATS CLI's selected context, else nats://127.0.0.1:4222. The sender is
// `fisk-ai`, as in the original.

#include "app_support.hpp"
#include "nats_commands.hpp"
#include "terminal_text.hpp"

#include <fiskai/a2a/client.hpp>
#include <fiskai/a2a_nats/transport.hpp>

#include <boost/asio/this_coro.hpp>
#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/serialize.hpp>

#include <cmath>
#include <fmt/format.h>

#include <memory>

namespace fiskai::a2a::app {

namespace asio = boost::asio;

namespace {

struct discover_options {
    std::string identity;
    std::string context;
    bool json = false;
    double timeout_seconds = 30;
};

boost::json::object card_json(const agent_card& card) {
    boost::json::object o;
    o["name"] = card.name;
    o["version"] = card.version;
    if (!card.description.empty()) o["description"] = card.description;
    boost::json::array protocols;
    for (const auto& p : card.protocols) protocols.emplace_back(p);
    o["protocols"] = std::move(protocols);
    boost::json::array tools;
    for (const auto& t : card.tools) {
        boost::json::object tool;
        tool["name"] = t.name;
        tool["description"] = t.description;
        tool["input_schema"] = t.input_schema ? t.input_schema->to_value() : boost::json::object{{"type", "object"}};
        tools.push_back(std::move(tool));
    }
    o["tools"] = std::move(tools);
    return o;
}

void print_card(const std::string& asked, const agent_card& card) {
    std::string out = fmt::format("Agent Card for {}\n\n", asked);
    out += fmt::format("  Agent: {}\n  Version: {}\n", card.name, card.version);
    if (!card.description.empty()) out += fmt::format("  Description: {}\n", card.description);
    if (!card.protocols.empty()) {
        std::string joined;
        for (const auto& p : card.protocols) joined += (joined.empty() ? "" : ", ") + p;
        out += fmt::format("  Protocols: {}\n", joined);
    }
    out += "\n";
    if (card.tools.empty()) {
        out += "The agent exposes no tools.\n";
    } else {
        // The name column is as wide as the longest name up to a bound: a card is the peer's
        // text, and one very long name must not pad every row to it.
        constexpr std::size_t max_name = 48;
        std::size_t width = 4;
        for (const auto& t : card.tools) width = std::max(width, std::min(t.name.size(), max_name));
        out += fmt::format("{:<{}}  {}\n", "Tool", width, "Description");
        for (const auto& t : card.tools) {
            out += fmt::format("{:<{}}  {}\n", fiskai::app::one_line(t.name, max_name), width,
                               fiskai::app::one_line(t.description, 60));
        }
    }
    fmt::print("{}", fiskai::app::terminal_safe(out));
}

asio::awaitable<int> run_discover(discover_options o) {
    auto ex = co_await asio::this_coro::executor;
    auto nats = conns::provider::dial(o.context, "fisk-ai", connection_options("fisk-ai", ex));
    a2a_nats::nats_transport transport(nats, ex);
    client c(transport, {"fisk-ai"});
    const auto timeout = std::chrono::duration_cast<std::chrono::steady_clock::duration>(
        std::chrono::duration<double>(o.timeout_seconds));
    const auto card = co_await c.discover(o.identity, timeout);
    if (!card) throw std::runtime_error(card.error().message);
    if (o.json) {
        fmt::print("{}\n", boost::json::serialize(card_json(*card)));
    } else {
        print_card(o.identity, *card);
    }
    co_return exit_ok;
}

}  // namespace

subcommand add_discover_command(CLI::App& parent) {
    auto opts = std::make_shared<discover_options>();
    auto* cmd = parent.add_subcommand("discover", "Print a peer agent's card: its version, protocols and tools");
    cmd->add_option("identity", opts->identity, "The peer's identity (letters, digits, '-' and '_')")
        ->required()
        ->check(fiskai::app::identity_validator("IDENTITY"));
    cmd->add_option(
        "--context", opts->context,
        "NATS context to connect with (default: the NATS CLI's selected context, else nats://127.0.0.1:4222)");
    cmd->add_flag("--json", opts->json, "Print the card as one JSON object: {name, version, protocols, tools}");
    cmd->add_option("--timeout", opts->timeout_seconds, "Seconds to wait for the reply (more than 0, at most 3600)")
        ->capture_default_str()
        ->check(CLI::Validator(
            [](const std::string& text) -> std::string {
                // CLI11's own range check lets NaN through (every comparison with it is false).
                double v = 0;
                try {
                    v = std::stod(text);
                } catch (const std::exception&) {
                    v = 0;
                }
                if (std::isfinite(v) && v > 0 && v <= 3600) return {};
                return fmt::format(
                    "{} is not a number of seconds between 0 (exclusive) and 3600; "
                    "pass for example --timeout 5 or --timeout 0.5",
                    text);
            },
            "SECONDS"));
    return {cmd, [opts](fiskai::app::runtime&) { return run_discover(*opts); }};
}

}  // namespace fiskai::a2a::app
