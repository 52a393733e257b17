// fisk-ai-a2a check [--encode]
//
// Reads one captured message on stdin and runs it through the arrival pipeline every
// receiver uses: the size cap, JSON, the protocol id, its schema, the typed decode. Prints
// the protocol id (exit 0) or why the message is refused (stderr, exit 1). With --encode it
// prints the decoded message re-encoded in the canonical form, the bytes the Go original
// emits for it, with no trailing newline unless stdout is a terminal.

#include "commands.hpp"

#include <fiskai/a2a/codec.hpp>
#include <fiskai/a2a/protocol.hpp>
#include <fiskai/a2a/validator.hpp>

#include <fmt/core.h>

#include <cstdio>
#include <memory>
#include <string>

#include <unistd.h>

namespace fiskai::a2a::app {

namespace {

// All of stdin, but never more than one byte past the cap: a body over the cap is refused
// without being read in full.
bool read_stdin(std::string& out) {
    char buffer[64 * 1024];
    while (out.size() <= max_message_size) {
        const std::size_t n = std::fread(buffer, 1, sizeof buffer, stdin);
        out.append(buffer, n);
        if (n < sizeof buffer) return std::ferror(stdin) == 0;
    }
    return true;
}

int run_check(bool canonical) {
    std::string body;
    if (!read_stdin(body)) {
        fmt::print(stderr, "fisk-ai-a2a: reading stdin failed\n");
        return exit_failure;
    }
    const auto message = default_validator().check(body);
    if (!message) {
        fmt::print(stderr, "refused: {}\n", message.error().message);
        return exit_refused;
    }
    if (!canonical) {
        fmt::print("{}\n", protocol_of(*message));
        return exit_ok;
    }
    const auto text = encode(*message);
    if (!text) {
        fmt::print(stderr, "refused: {}\n", text.error().message);
        return exit_refused;
    }
    std::fwrite(text->data(), 1, text->size(), stdout);
    if (isatty(STDOUT_FILENO) != 0) std::fputc('\n', stdout);
    return std::fflush(stdout) == 0 ? exit_ok : exit_failure;
}

}  // namespace

subcommand add_check_command(CLI::App& parent) {
    auto* cli = parent.add_subcommand("check",
                                      "Check one captured a2a message read on stdin: print its protocol id, or why it "
                                      "is refused (exit 1)");
    auto canonical = std::make_shared<bool>(false);
    cli->add_flag("--encode", *canonical,
                  "Print the message re-encoded in the canonical form (the bytes the Go original emits) instead of its "
                  "protocol id");
    cli->footer(
        "The message goes through the checks every receiver applies: the 786432-byte cap, JSON, the protocol "
        "id, its schema and the typed decode.");
    return {cli,
            [canonical](fiskai::app::runtime&) -> boost::asio::awaitable<int> { co_return run_check(*canonical); }};
}

}  // namespace fiskai::a2a::app
