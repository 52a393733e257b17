// fisk-ai-serve session ls|show ID [--transcript]|rm ID --config FILE [--json]
//
// The configured session store (harness.sessions), read without the run lock: ls lists
// every session (newest first), show folds one into its summary (and, with --transcript,
// its conversation), rm removes one.

#include "commands.hpp"

#include "app_support.hpp"
#include "terminal_text.hpp"

#include <fiskai/config/config.hpp>
#include <fiskai/conns/connection.hpp>
#include <fiskai/gocompat/quote.hpp>
#include <fiskai/gocompat/time.hpp>
#include <fiskai/gocompat/utf8.hpp>
#include <fiskai/runstate/store.hpp>

#include <boost/asio/thread_pool.hpp>
#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/serialize.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

namespace fiskai::serve_app {

namespace asio = boost::asio;
using fiskai::app::one_line;

namespace {

struct session_options {
    std::string config_path;
    std::string id;
    bool json = false;
    bool transcript = false;
    bool verbose = false;
    CLI::App* ls = nullptr;
    CLI::App* show = nullptr;
    CLI::App* rm = nullptr;
};

std::string status_of(const std::optional<runstate::terminal_reason>& t) {
    return t ? std::string(runstate::to_string(*t)) : std::string("open");
}

// The store the config names; `nats` holds the connection a JetStream backend borrows.
struct opened_store {
    asio::thread_pool pool{1};
    conns::provider nats;
    std::shared_ptr<runstate::store> store;
    ~opened_store() {
        store.reset();
        pool.join();
    }
};

std::unique_ptr<opened_store> open_store(const session_options& o) {
    const auto cfg = config::load_file(o.config_path, config::mode::lenient);
    auto s = std::make_unique<opened_store>();
    runstate::context ctx;
    ctx.blocking = s->pool.get_executor();
    if (runstate::needs_nats(cfg.harness.sessions.backend)) {
        s->nats = conns::provider::dial(cfg.nats_context, cfg.identity);
        ctx.nats = s->nats.nats();
    }
    s->store = runstate::make_store(cfg.harness.sessions.backend, cfg.harness.sessions.options_json, ctx);
    return s;
}

std::string block_line(const llm::content_block& b) {
    return std::visit(
        [](const auto& v) -> std::string {
            using T = std::decay_t<decltype(v)>;
            if constexpr (std::is_same_v<T, llm::text_block>) {
                return v.text;
            } else if constexpr (std::is_same_v<T, llm::thinking_block>) {
                return fmt::format("(thinking) {}", one_line(v.text, 200));
            } else if constexpr (std::is_same_v<T, llm::tool_use_block>) {
                return fmt::format("-> {} {}", v.name, v.input);
            } else if constexpr (std::is_same_v<T, llm::tool_result_block>) {
                return fmt::format("<- {}{}", v.is_error ? "error: " : "", one_line(v.content, 200));
            } else {
                return fmt::format("({})", v.kind);
            }
        },
        b);
}

std::string status_of(const runstate::run_state& rs) {
    return status_of(rs.terminal ? std::optional(rs.terminal->reason) : std::nullopt);
}

// The conversation as `show --transcript` prints it: one (role, text) per block.
std::vector<std::pair<std::string_view, std::string>> transcript_of(const runstate::run_state& rs) {
    std::vector<std::pair<std::string_view, std::string>> out;
    for (const auto& m : rs.messages) {
        const std::string_view who = m.who == llm::role::user ? "user" : "assistant";
        for (const auto& b : m.content) out.emplace_back(who, block_line(b));
    }
    if (rs.pending) {
        for (const auto& b : rs.pending->assistant.content) out.emplace_back("assistant (pending)", block_line(b));
    }
    return out;
}

void print_show(const runstate::run_state& rs, bool transcript) {
    fmt::print("Session {}\n", rs.run_id);
    fmt::print("  Status: {}\n", status_of(rs));
    if (rs.terminal && !rs.terminal->message.empty())
        fmt::print("  Message: {}\n", fiskai::app::terminal_safe(rs.terminal->message));
    fmt::print("  Model: {}\n", rs.fingerprint.model);
    fmt::print("  Created: {}\n", gocompat::format_rfc3339(rs.created));
    fmt::print("  Next iter: {}\n", rs.next_iteration);
    fmt::print("  LLM calls: {}\n", rs.counters.llm_calls);
    fmt::print("  Tool calls: {} (remote {})\n", rs.counters.tool_calls, rs.counters.remote_tool_calls);
    fmt::print("  Tokens: {} in / {} out\n", rs.counters.in_tokens, rs.counters.out_tokens);
    if (rs.pending) fmt::print("  Pending: an in-flight tool batch will resume first\n");
    fmt::print("\nPrompt\n  {}\n", one_line(rs.prompt, 200));
    if (!transcript) return;
    fmt::print("\n--- transcript ---\n\n");
    for (const auto& [role, text] : transcript_of(rs)) fmt::print("{}: {}\n", role, text);
}

// `show --json`: the summary's fields as one object; with --transcript, its lines too.
void print_show_json(const runstate::run_state& rs, bool transcript) {
    boost::json::object out{
        {"id", rs.run_id},
        {"status", status_of(rs)},
        {"message", rs.terminal ? rs.terminal->message : std::string()},
        {"model", rs.fingerprint.model},
        {"created", gocompat::format_rfc3339_nano(rs.created)},
        {"next_iteration", rs.next_iteration},
        {"llm_calls", rs.counters.llm_calls},
        {"tool_calls", rs.counters.tool_calls},
        {"remote_tool_calls", rs.counters.remote_tool_calls},
        {"in_tokens", rs.counters.in_tokens},
        {"out_tokens", rs.counters.out_tokens},
        {"pending", rs.pending.has_value()},
        {"prompt", rs.prompt},
    };
    if (transcript) {
        boost::json::array lines;
        for (const auto& [role, text] : transcript_of(rs))
            lines.push_back(boost::json::object{{"role", role}, {"text", text}});
        out["transcript"] = std::move(lines);
    }
    fmt::print("{}\n", boost::json::serialize(out));
}

asio::awaitable<int> run_session(session_options o) {
    if (missing_config(o.config_path)) co_return fiskai::app::exit_code::usage;
    auto s = open_store(o);
    if (o.ls->parsed()) {
        auto listed = co_await s->store->list();
        if (!listed) throw std::runtime_error(listed.error().message);
        auto runs = std::move(*listed);
        std::stable_sort(runs.begin(), runs.end(), [](const auto& a, const auto& b) {
            return std::tie(a.updated.seconds, a.updated.nanos) > std::tie(b.updated.seconds, b.updated.nanos);
        });
        if (o.json) {
            boost::json::array out;
            for (const auto& r : runs) {
                out.push_back(boost::json::object{{"id", r.run_id},
                                                  {"created", gocompat::format_rfc3339_nano(r.created)},
                                                  {"updated", gocompat::format_rfc3339_nano(r.updated)},
                                                  {"model", r.model},
                                                  {"status", status_of(r.terminal)},
                                                  {"prompt", r.prompt}});
            }
            fmt::print("{}\n", boost::json::serialize(out));
            co_return exit_code::ok;
        }
        if (runs.empty()) {
            fmt::print("No sessions in {}\n", s->store->location());
            co_return exit_code::ok;
        }
        std::vector<std::vector<std::string>> rows{{"ID", "CREATED", "UPDATED", "MODEL", "STATUS", "PROMPT"}};
        for (const auto& r : runs) {
            rows.push_back({r.run_id, gocompat::format_rfc3339(r.created), gocompat::format_rfc3339(r.updated), r.model,
                            status_of(r.terminal), one_line(r.prompt, 60)});
        }
        std::vector<std::size_t> width(rows.front().size(), 0);
        for (const auto& row : rows) {
            for (std::size_t i = 0; i + 1 < row.size(); ++i) width[i] = std::max(width[i], row[i].size());
        }
        for (const auto& row : rows) {
            std::string line;
            for (std::size_t i = 0; i < row.size(); ++i) {
                line += i + 1 < row.size() ? fmt::format("{:<{}}  ", row[i], width[i]) : row[i];
            }
            while (!line.empty() && line.back() == ' ') line.pop_back();
            fmt::print("{}\n", line);
        }
        co_return exit_code::ok;
    }
    if (o.show->parsed()) {
        auto loaded = co_await s->store->load(o.id);
        if (!loaded) {
            // "run not found" and "invalid run id" name the id already; a journal that cannot
            // be folded ("no records", "corrupt record sequence") says which one and where.
            const auto code = loaded.error().code;
            if (code == runstate::errc::not_found || code == runstate::errc::invalid_id) {
                throw std::runtime_error(loaded.error().message);
            }
            throw std::runtime_error(fmt::format("session {} in {} cannot be read: {}", gocompat::quote(o.id),
                                                 s->store->location(), loaded.error().message));
        }
        if (o.json)
            print_show_json(*loaded, o.transcript);
        else
            print_show(*loaded, o.transcript);
        co_return exit_code::ok;
    }
    // Removing is idempotent (as Go's store is), but the line says what happened.
    auto existed = co_await s->store->exists(o.id);
    if (!existed) throw std::runtime_error(existed.error().message);
    auto removed = co_await s->store->remove(o.id);
    if (!removed) throw std::runtime_error(removed.error().message);
    if (o.json) {
        fmt::print("{}\n", boost::json::serialize(boost::json::object{{"id", o.id}, {"removed", *existed}}));
    } else if (*existed) {
        fmt::print("Removed session {}\n", o.id);
    } else {
        fmt::print("No session {} in {}; nothing to remove\n", o.id, s->store->location());
    }
    co_return exit_code::ok;
}

}  // namespace

subcommand add_session_command(CLI::App& parent) {
    auto o = std::make_shared<session_options>();
    auto* cmd = parent.add_subcommand("session", "Inspect the configured session store (harness.sessions)");
    cmd->require_subcommand(1);
    cmd->add_option("-c,--config", o->config_path, "The fisk-ai YAML configuration naming the session store");
    cmd->add_flag("--json", o->json,
                  "JSON on stdout: ls one array of sessions, show one object (with --transcript its lines), rm "
                  "{id, removed}");
    o->ls = cmd->add_subcommand("ls", "List the sessions, newest first");
    o->show = cmd->add_subcommand("show", "Show one session's summary");
    o->show->add_option("id", o->id, "The session id")->required();
    o->show->add_flag("--transcript", o->transcript, "Also print the conversation");
    o->rm = cmd->add_subcommand("rm", "Remove one session");
    o->rm->add_option("id", o->id, "The session id")->required();
    for (auto* sub : {o->ls, o->show, o->rm}) sub->fallthrough();
    return {cmd, [o](fiskai::app::runtime&) { return run_session(*o); }};
}

}  // namespace fiskai::serve_app
