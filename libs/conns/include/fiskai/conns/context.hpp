#pragma once
// NATS contexts as the NATS command-line tool stores them: one JSON file per context under
// `$XDG_CONFIG_HOME/nats/context/<name>.json` (else `~/.config/nats/context/`), and the
// selected context's name in `nats/context.txt` beside that folder. Reading only: fisk-ai
// never writes a context.

#include <fiskai/conns/error.hpp>

#include <string>
#include <string_view>

namespace fiskai::conns {

// A context that cannot be found, named or read. The message says which file and what
// to do about it; code() says which (invalid_context_name, context_not_found,
// no_context_directory, unreadable_file, malformed_context, unsupported_setting).
class context_error : public error {
public:
    using error::error;
};

// Where contexts live. Taken from the process environment by default; tests and embedders
// pass their own.
struct context_environment {
    std::string xdg_config_home;  // $XDG_CONFIG_HOME; empty means unset
    std::string home;             // the user's home directory

    // $XDG_CONFIG_HOME, and the home directory from the account database, else $HOME.
    [[nodiscard]] static context_environment from_process();

    // `$XDG_CONFIG_HOME` if set, else `<home>/.config`. Throws context_error when neither
    // is known.
    [[nodiscard]] std::string config_root() const;
    // `<root>/nats/context`.
    [[nodiscard]] std::string context_dir() const;
    // `<root>/nats/context/<name>.json`.
    [[nodiscard]] std::string context_file(std::string_view name) const;
    // `<root>/nats/context.txt`.
    [[nodiscard]] std::string selection_file() const;
};

// The settings of one context that a core connection honours (config-remote-conns C.3).
// Path fields are expanded: `$VAR` and `${VAR}` (unset: empty), then a leading `~`.
struct nats_context {
    std::string name;  // empty for the built-in default (no context selected)
    std::string path;  // the file it was read from; empty for the default

    std::string url;  // comma-separated server URLs; the scheme may be left out
    std::string user;
    std::string password;
    std::string creds;      // a credentials file (JWT and seed)
    std::string nkey;       // an NKey seed file
    std::string user_jwt;   // a JWT given inline
    std::string user_seed;  // the seed signing for user_jwt
    std::string token;
    std::string cert;  // client TLS certificate (used with key)
    std::string key;
    std::string ca;  // root CA file
    std::string inbox_prefix;
    std::string description;  // shown, never used

    // Settings of the Go client that nats.c 3.4.1 cannot honour. A context that sets one is
    // refused at connect time rather than silently connecting another way.
    bool tls_first = false;
    std::string socks_proxy;
    std::string nsc;

    // The servers to dial: `url`, else `nats://127.0.0.1:4222`.
    [[nodiscard]] std::string effective_url() const;
};

// A name the CLI would accept: non-empty, without `..`, `/` or `\`.
[[nodiscard]] bool is_valid_context_name(std::string_view name) noexcept;

// The selected context's name (the trimmed content of context.txt), or empty when none is
// selected or the file is absent.
[[nodiscard]] std::string selected_context(const context_environment& env = context_environment::from_process());

// Reads context `name`, or the selected one when `name` is empty; with nothing selected
// the result is the default context (no file, every setting empty). Unknown JSON keys are
// ignored and keys match case-insensitively, as the Go reader does. Throws context_error:
// `invalid context name <name>`, `unknown context "<name>": ...` naming the file and the
// fix, or the file's read or parse failure.
[[nodiscard]] nats_context load_context(std::string_view name,
                                        const context_environment& env = context_environment::from_process());

// Parses the JSON text of a context file. Throws context_error on malformed JSON or a
// field of the wrong type; `origin` names the file in the message.
[[nodiscard]] nats_context parse_context(std::string_view json_text, std::string_view origin,
                                         const context_environment& env = context_environment::from_process());

}  // namespace fiskai::conns
