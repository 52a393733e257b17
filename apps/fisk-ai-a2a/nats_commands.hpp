#pragma once
// The NATS subcommands of fisk-ai-a2a: serve, discover, info. Each registers itself the
// way commands.hpp describes; the shared pieces (stderr logging, connection options) are
// here.

#include "commands.hpp"

#include <fiskai/conns/connection.hpp>
#include <fiskai/gocompat/log.hpp>

#include <boost/asio/any_io_executor.hpp>

#include <chrono>
#include <string>
#include <string_view>

namespace fiskai::a2a::app {

// `serve --config F [--embedded-broker]`: serves the wrapped application's tools over a2a.
subcommand add_serve_command(CLI::App& parent);
// `discover <identity> [--context N] [--json]`: prints a peer's agent card.
subcommand add_discover_command(CLI::App& parent);
// `info --config F [--json]`: what this agent serves and each remote host's status.
subcommand add_info_command(CLI::App& parent);
// `enqueue AGENT [PROMPT...]` and `answer AGENT TASK`: the queue's producer (queue_command.cpp).
subcommand add_enqueue_command(CLI::App& parent);
subcommand add_answer_command(CLI::App& parent);
// `dead-letters AGENT [--retry TASK]`: the queue's dead letters (queue_command.cpp).
subcommand add_dead_letters_command(CLI::App& parent);

// `ask <agent> [prompt...]`: sends a task over the task flow and follows it (serve.md §9.2).
subcommand add_ask_command(CLI::App& parent);

// The process logger (apps/common): stderr, in the format --log-format chose.
gocompat::logger stderr_logger();

// Connection options for a command: its name, events logged on `executor`.
conns::connect_options connection_options(std::string_view identity, boost::asio::any_io_executor executor);

}  // namespace fiskai::a2a::app
