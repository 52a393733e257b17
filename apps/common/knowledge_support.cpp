#include "knowledge_support.hpp"

#include "app_support.hpp"

#include <fiskai/gocompat/quote.hpp>
#include <fiskai/knowledge/builtins.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <stdexcept>

namespace fiskai::app {

CLI::App* add_knowledge_command(CLI::App& app, knowledge::command_options& o) {
    using action = knowledge::command_options::action;
    auto* k = app.add_subcommand("knowledge", "Build and inspect the local knowledge base for knowledge_search");
    k->require_subcommand(1);
    k->add_option("-c,--config", o.config_path, "The fisk-ai YAML configuration file")->required();
    k->add_option("--store-dir", o.store_dir,
                  "Base directory a relative harness.knowledge.directory resolves under (absolute); must match the "
                  "agent's")
        ->envname("FISK_AI_STORE_DIR");

    auto* index = k->add_subcommand("index", "Build or update the index (incremental by size, mtime and content)");
    index->add_option("paths", o.paths, "Paths to index; defaults to harness.knowledge.paths");
    index->add_flag("--reindex", o.reindex,
                    "Force a full rebuild, dropping and re-embedding everything (allows a model or dimension change)");
    index->add_flag("--dry-run", o.dry_run, "Count the files and chunks without writing or embedding anything");
    index->callback([&o] { o.what = action::index; });

    auto* show = k->add_subcommand("show", "Print one chunk verbatim, resolving a citation");
    show->add_option("citation", o.citation, "A citation of the form <relpath>#<ordinal>")->required();
    show->callback([&o] { o.what = action::show; });

    auto* doctor = k->add_subcommand("doctor", "Check the index and, when configured, the embeddings server");
    doctor->callback([&o] { o.what = action::doctor; });

    auto* watch = k->add_subcommand("watch", "Watch the knowledge paths and re-index on change");
    watch->add_option("paths", o.paths, "Paths to watch; defaults to harness.knowledge.paths");
    watch->add_option_function<int>(
        "--debounce-ms", [&o](int ms) { o.debounce = std::chrono::milliseconds(ms); },
        "How often to look for changes, in milliseconds (default 2000)");
    watch->add_flag("--no-initial", o.no_initial, "Skip the initial index pass");
    watch->callback([&o] { o.what = action::watch; });

    auto* search = k->add_subcommand("search", "Retrieve from the index for tuning; prints citations and snippets");
    search->add_option("query", o.query, "The search query")->required();
    search->add_option("--top-k", o.top_k, "Maximum number of results");
    search->add_flag("--full", o.full, "Print whole chunks instead of snippets");
    search->callback([&o] { o.what = action::search; });

    auto* sources = k->add_subcommand("sources", "List indexed files with their chunk counts and titles");
    sources->callback([&o] { o.what = action::sources; });
    return k;
}

boost::asio::awaitable<int> run_knowledge_command(knowledge::command_options options) {
    co_return co_await knowledge::run_command(std::move(options));
}

mcp_knowledge open_mcp_knowledge(boost::asio::any_io_executor io, const config::config& cfg,
                                 const std::vector<std::string>& allowlist) {
    mcp_knowledge out;
    std::string first_listed;
    for (const auto& name : allowlist) {
        if (name == knowledge::search_tool_name || name == knowledge::enumerate_tool_name) {
            first_listed = name;
            break;
        }
    }
    if (first_listed.empty()) {
        if (cfg.harness.knowledge.enabled) {
            log_info(
                "note: knowledge is enabled but not exposed over MCP; add knowledge_search to "
                "expose.agent.mcp.builtins to let MCP clients search your knowledge base");
        }
        return out;
    }
    const auto refuse = [&](const std::string& why) {
        return std::runtime_error(fmt::format("cannot expose {} over MCP: {}", first_listed, why));
    };
    for (const auto& p : cfg.harness.knowledge.paths) {
        std::error_code ec;
        if (!std::filesystem::exists(p, ec)) {
            throw refuse(
                fmt::format("harness.knowledge.paths: {} does not exist; create it or remove it from "
                            "harness.knowledge.paths",
                            gocompat::quote(p)));
        }
    }
    knowledge::store_options options;
    try {
        options = knowledge::store_options_from(io, cfg);
    } catch (const std::exception& e) {
        throw refuse(e.what());
    }
    // Served over MCP there is no per-run base: a relative directory is the cwd's.
    auto opened = knowledge::store::open(io, std::move(options));
    if (!opened) throw refuse(opened.error().message);
    out.store = *opened;
    for (auto& spec : knowledge::knowledge_tool_specs(out.store)) out.builtins.add(std::move(spec));
    return out;
}

toolkit::tool_list knowledge_tools_for_listing(const config::config& cfg) {
    toolkit::tool_list out;
    if (!cfg.harness.knowledge.enabled) return out;
    for (auto& spec : knowledge::knowledge_tool_specs(nullptr))
        out.push_back(toolkit::make_function_tool(std::move(spec)));
    return out;
}

}  // namespace fiskai::app
