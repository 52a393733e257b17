// run_session: one agent session from a developer's shell, without NATS. A test harness,
// not a product path.
//
//   run_session --config fisk-ai.yaml --journal /tmp/runs [--session s1] [--follow-up]
//               [--approve once|run|deny|silent] [--answer yes|no|silent] PROMPT...
//
// Events go to stderr, the final answer to stdout. Exit 0 when the run completed, 1 for
// any other outcome, 2 for bad usage or configuration.

#include "session_harness.hpp"

#include <fiskai/config/config.hpp>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <filesystem>
#include <iostream>

using namespace fiskai;

namespace {

struct stderr_sink final : agent::event_sink {
    void starting(const agent::run_info& i) override {
        fmt::print(stderr, "starting session {} ({} tools{})\n", i.session_id, i.tools.size(),
                   i.resumed ? ", resumed" : "");
    }
    void warn(const agent::warning& w) override { fmt::print(stderr, "warning {}: {} {}\n", w.kind, w.name, w.detail); }
    void status(std::int64_t i, std::string_view phase, const llm::usage&) override {
        fmt::print(stderr, "[{}] {}\n", i, phase);
    }
    void tool_call(const agent::tool_call_trace& t) override {
        fmt::print(stderr, "tool call {} {}: {}\n", t.call_id, t.name, t.display);
    }
    void tool_result(const agent::tool_result_trace& t) override {
        fmt::print(stderr, "tool result {}{}: {}\n", t.call_id, t.is_error ? " (error)" : "", t.output.substr(0, 500));
    }
    void message(const llm::response& r, bool terminal) override {
        fmt::print(stderr, "assistant ({}{})\n", r.stop_reason, terminal ? ", final" : "");
    }
    void crashed(std::string_view what) override { fmt::print(stderr, "crashed: {}\n", what); }
};

toolkit::reply_status status_of(const std::string& s) {
    if (s == "silent") return toolkit::reply_status::silent;
    if (s == "deny" || s == "no") return toolkit::reply_status::answered;
    return toolkit::reply_status::answered;
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{"Runs one fisk-ai agent session without NATS (a test harness)"};
    std::string config_path, journal_dir, session = "session", approve = "deny", answer = "no";
    bool follow_up = false;
    std::vector<std::string> prompt;
    app.add_option("--config", config_path, "fisk-ai configuration file")->required();
    app.add_option("--journal", journal_dir, "directory of the file journal")->required();
    app.add_option("--session", session, "session id");
    app.add_flag("--follow-up", follow_up, "continue an existing session with the prompt");
    app.add_option("--approve", approve, "reply to approvals: once, run, deny, silent")
        ->check(CLI::IsMember({"once", "run", "deny", "silent"}));
    app.add_option("--answer", answer, "reply to questions: yes, no, silent")
        ->check(CLI::IsMember({"yes", "no", "silent"}));
    app.add_option("prompt", prompt, "the prompt");
    CLI11_PARSE(app, argc, argv);

    try {
        auto cfg = config::load_file(config_path, config::mode::lenient);
        std::filesystem::create_directories(journal_dir);
        llm::provider_config p;
        p.name = cfg.llm.provider;
        p.base_url = cfg.llm.base_url;
        p.api_key_env = cfg.llm.api_key_env;
        p.max_retries = cfg.llm.max_retries;
        p.insecure_http = cfg.llm.insecure_http;
        fmt::print(stderr, "loading tools\n");
        test::session_harness h(cfg, journal_dir, p);
        fmt::print(stderr, "loaded {} tools\n", h.rt->tools.size());

        test::scripted_prompter asker;
        asker.approval.status = status_of(approve);
        asker.approval.choice = approve == "once"  ? toolkit::approval::allow_once
                                : approve == "run" ? toolkit::approval::allow_for_run
                                                   : toolkit::approval::deny;
        asker.answer.status = status_of(answer);
        asker.answer.confirmed = answer == "yes";
        asker.answer.question_id = "q-" + session;

        stderr_sink sink;
        std::string text;
        for (const auto& word : prompt) text += (text.empty() ? "" : " ") + word;
        auto r =
            h.request(session, text, follow_up ? agent::session_mode::follow_up : agent::session_mode::open_or_create);
        r.asker = &asker;
        r.events = &sink;
        auto result = h.run(std::move(r), std::chrono::hours(1));
        fmt::print(stderr, "outcome: {}{}{}\n", result.crashed ? "crashed" : result.reason,
                   result.error.empty() ? "" : ": ", result.error);
        std::cout << result.final_text << "\n";
        return result.reason == "completed" ? 0 : 1;
    } catch (const std::exception& e) {
        fmt::print(stderr, "run_session: {}\n", e.what());
        return 2;
    }
}
