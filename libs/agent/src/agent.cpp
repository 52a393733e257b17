#include <fiskai/agent/agent.hpp>
#include <fiskai/agent/hitl.hpp>
#include <fiskai/gocompat/json.hpp>
#include <fiskai/gocompat/quote.hpp>
#include <fiskai/gocompat/time.hpp>
#include <fiskai/llm/provider.hpp>
#include <fiskai/knowledge/builtins.hpp>
#include <fiskai/memory/builtins.hpp>
#include <fiskai/memory/store.hpp>
#include <fiskai/runstate/fingerprint.hpp>
#include <fiskai/runstate/state.hpp>
#include <fiskai/runstate/store.hpp>
#include <fiskai/toolkit/confirm_gate.hpp>
#include <fiskai/toolkit/prompter.hpp>
#include <fiskai/toolkit/tool_call.hpp>

#include <boost/asio/error.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/json.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <limits>
#include <map>
#include <mutex>
#include <optional>
#include <set>

namespace fiskai::agent {

// A run's tool definitions copy every input schema, and the fingerprint serialises them and
// the system prompt to hash them: work that gives the same answer for every run of a
// runtime. Only runs without per-run built-ins are kept (those tools are made per run, and
// holding them would hold their stores), keyed by the tools' identity: the runtime's tools
// are fixed for its life, and the key holds them, so an address cannot be reused.
class offer_cache {
public:
    struct offer {
        std::vector<std::pair<toolkit::tool_ptr, bool>> tools;  // in order, with defer_loading
        llm::tool_set definitions;
        std::string tools_hash;
    };

    std::shared_ptr<const offer> find(const std::vector<std::pair<toolkit::tool_ptr, bool>>& tools) const {
        std::lock_guard lock(mu_);
        if (tools_ && tools_->tools == tools) return tools_;
        return nullptr;
    }
    void keep(std::shared_ptr<const offer> o) {
        std::lock_guard lock(mu_);
        tools_ = std::move(o);
    }
    std::optional<std::string> system_hash(const std::vector<std::string>& system) const {
        std::lock_guard lock(mu_);
        if (system_ && system_->first == system) return system_->second;
        return std::nullopt;
    }
    void keep_system_hash(std::vector<std::string> system, std::string hash) {
        std::lock_guard lock(mu_);
        system_ = std::make_shared<const std::pair<std::vector<std::string>, std::string>>(std::move(system),
                                                                                           std::move(hash));
    }

private:
    mutable std::mutex mu_;  // a runtime may be shared by io_contexts on several threads
    std::shared_ptr<const offer> tools_;
    std::shared_ptr<const std::pair<std::vector<std::string>, std::string>> system_;
};

std::shared_ptr<offer_cache> make_offer_cache() { return std::make_shared<offer_cache>(); }

namespace {

namespace asio = boost::asio;
namespace json = boost::json;

constexpr std::size_t tool_search_threshold = 10;

class silent_sink final : public event_sink {};

// How a step ended the run early: a terminal reason and its text.
struct ending {
    runstate::terminal_reason reason = runstate::terminal_reason::error;
    std::string message;
};

std::string joined_text(const llm::message& m) {
    std::string out;
    for (const auto& block : m.content) {
        if (const auto* t = std::get_if<llm::text_block>(&block)) out += t->text;
    }
    return out;
}

std::string joined_text(const std::vector<llm::content_block>& blocks) {
    return joined_text(llm::message{llm::role::assistant, blocks});
}

// a + b for iteration numbers and caps (both from a journal or the configuration, so
// anything), saturating at the int64 limits.
std::int64_t add_iterations(std::int64_t a, std::int64_t b) {
    std::int64_t sum = 0;
    if (__builtin_add_overflow(a, b, &sum)) {
        return b > 0 ? std::numeric_limits<std::int64_t>::max() : std::numeric_limits<std::int64_t>::min();
    }
    return sum;
}

bool has_tag(const toolkit::tool& t, std::string_view tag) {
    const auto& tags = t.tags();
    return std::find(tags.begin(), tags.end(), tag) != tags.end();
}

// Go's required-argument pre-check for command tools: the missing names in schema order,
// and the roster (required in schema order, optional sorted).
std::optional<std::string> missing_required(const toolkit::tool& t, const json::value& arguments) {
    if (t.kind() != toolkit::tool_kind::command || !arguments.is_object()) return std::nullopt;
    const auto& schema = t.input_schema();
    std::vector<std::string> required;
    if (const auto* r = schema.if_contains("required"); r != nullptr && r->is_array()) {
        for (const auto& v : r->get_array()) {
            if (v.is_string()) required.emplace_back(v.get_string());
        }
    }
    std::vector<std::string> missing;
    for (const auto& name : required) {
        if (!arguments.get_object().contains(name)) missing.push_back(name);
    }
    if (missing.empty()) return std::nullopt;
    std::vector<std::string> optional;
    if (const auto* p = schema.if_contains("properties"); p != nullptr && p->is_object()) {
        for (const auto& kv : p->get_object()) {
            const std::string key(kv.key());
            if (std::find(required.begin(), required.end(), key) == required.end()) optional.push_back(key);
        }
    }
    std::sort(optional.begin(), optional.end());
    auto text = fmt::format("tool {} was called without required parameter(s): {}. required: {}",
                            gocompat::quote(t.name()), fmt::join(missing, ", "), fmt::join(required, ", "));
    if (!optional.empty()) text += fmt::format("; optional: {}", fmt::join(optional, ", "));
    return text;
}

std::optional<std::string> check_dir(std::string_view what, const std::string& dir) {
    if (dir.empty()) return std::nullopt;
    const std::filesystem::path p(dir);
    if (!p.is_absolute()) return fmt::format("{} must be an absolute path, got {}", what, gocompat::quote(dir));
    std::error_code ec;
    const auto status = std::filesystem::status(p, ec);
    if (ec || !std::filesystem::exists(status)) {
        return fmt::format("{} {} does not exist; the caller must create it before the run", what,
                           gocompat::quote(dir));
    }
    if (!std::filesystem::is_directory(status)) {
        return fmt::format("{} {} is not a directory", what, gocompat::quote(dir));
    }
    return std::nullopt;
}

std::string_view question_kind(std::string_view tool) {
    if (tool == "ask_human_confirm") return "confirm";
    if (tool == "ask_human_select") return "select";
    if (tool == "ask_human_input") return "input";
    return "";
}

// The tool_use id that may have started without a journaled result: the first unanswered
// call of the pending batch, when the run that journaled the batch ended without a
// terminal (a crash) or with the hard-cancel terminal. A gate abort, a budget stop or a
// clean suspend end with another terminal, and then nothing of the batch was running.
// Tools run one at a time in block order, so no other call of the batch can have started.
std::optional<std::string> possibly_started(const std::vector<runstate::record>& records,
                                            const runstate::pending_turn& pending) {
    std::size_t last_assistant = records.size();
    for (std::size_t i = records.size(); i-- > 0;) {
        if (std::holds_alternative<runstate::assistant_record>(records[i].payload)) {
            last_assistant = i;
            break;
        }
    }
    if (last_assistant == records.size()) return std::nullopt;
    const runstate::terminal_record* last_terminal = nullptr;
    for (std::size_t i = last_assistant + 1; i < records.size(); ++i) {
        if (const auto* t = std::get_if<runstate::terminal_record>(&records[i].payload)) last_terminal = t;
    }
    if (last_terminal != nullptr && last_terminal->message != text::interrupted) return std::nullopt;
    for (const auto& block : pending.assistant.content) {
        if (const auto* use = std::get_if<llm::tool_use_block>(&block)) {
            if (!pending.answered.contains(use->id)) return use->id;
        }
    }
    return std::nullopt;
}

// The run's prompter as one tool call sees it: a question a tool asks (the HITL built-ins)
// carries the id of the call it belongs to, so a remote caller can tie the question to the
// tool_call event it saw (serve.md §6.2, §6.10), as approvals already do.
class call_prompter final : public toolkit::prompter {
public:
    call_prompter(toolkit::prompter& inner, std::string call_id) : inner_(inner), call_id_(std::move(call_id)) {}
    [[nodiscard]] bool can_prompt() const override { return inner_.can_prompt(); }
    asio::awaitable<toolkit::approval_reply> approve(toolkit::approval_request request) override {
        if (request.call_id.empty()) request.call_id = call_id_;
        co_return co_await inner_.approve(std::move(request));
    }
    asio::awaitable<toolkit::question_reply> ask(toolkit::question q) override {
        if (q.call_id.empty()) q.call_id = call_id_;
        co_return co_await inner_.ask(std::move(q));
    }

private:
    toolkit::prompter& inner_;
    std::string call_id_;
};

class session_run {
public:
    session_run(const runtime& rt, run_request req)
        : rt_(rt),
          req_(std::move(req)),
          events_(req_.events != nullptr ? *req_.events : null_events()),
          asker_(req_.asker != nullptr ? *req_.asker : toolkit::default_deny_prompter()) {
        result_.session_id = req_.session_id;
    }

    asio::awaitable<run_result> run() {
        std::optional<ending> end;
        try {
            end = co_await setup();
            if (!end && !result_.replayed) end = co_await loop();
        } catch (const std::exception& e) {
            co_return crash(e.what());
        } catch (...) {
            co_return crash("unknown exception");
        }
        if (result_.replayed) co_return std::move(result_);
        if (!end) end = ending{runstate::terminal_reason::error, "internal error: the loop ended without an outcome"};
        co_await finish(*end);
        co_return std::move(result_);
    }

private:
    // ---- setup ---------------------------------------------------------------------

    asio::awaitable<std::optional<ending>> setup() {
        if (auto bad = check_dir("tool_work_dir", req_.tool_work_dir)) co_return fail_early(*bad);
        if (req_.session_id.empty()) co_return fail_early("a run needs a session id");
        if (auto valid = runstate::validate_id(req_.session_id); !valid) co_return fail_early(valid.error().message);
        if (!rt_.provider || !rt_.sessions) co_return fail_early("the agent runtime has no provider or session store");

        if (auto clash = build_tools()) co_return fail_early(*clash);
        if (auto clash = co_await build_memory()) co_return fail_early(*clash);
        if (auto clash = build_knowledge()) co_return fail_early(*clash);
        if (tools_.empty()) co_return fail_early(no_tools_text());
        build_definitions();
        build_system();

        co_return co_await open_session();
    }

    std::optional<std::string> claim(const toolkit::tool_ptr& t) {
        if (!t || t->name().empty()) return std::string("a tool without a name cannot be offered to the model");
        if (!by_name_.emplace(t->name(), t).second) {
            return fmt::format("tool name {} is offered twice; rename or filter one of them",
                               gocompat::quote(t->name()));
        }
        tools_.push_back(t);
        return std::nullopt;
    }

    std::optional<std::string> build_tools() {
        for (const auto& t : rt_.tools) {
            if (t && !t->exposed().on(toolkit::surface::agent)) continue;
            if (auto clash = claim(t)) return clash;
        }
        if (rt_.cfg.harness.human_in_the_loop_enabled) {
            for (auto& t : hitl_tools()) {
                hitl_names_.push_back(t->name());
                builtins_.insert(t->name());
                if (auto clash = claim(t)) return clash;
            }
            if (!asker_.can_prompt()) events_.warn(warning{"hitl_no_terminal", {}, {}, 0});
        }
        return std::nullopt;
    }

    std::optional<std::string> build_knowledge() {
        if (!rt_.knowledge) return std::nullopt;
        for (auto& spec : knowledge::knowledge_tool_specs(rt_.knowledge)) {
            auto t = toolkit::make_function_tool(std::move(spec));
            if (by_name_.count(t->name()) != 0) {
                return fmt::format(
                    "knowledge adds a built-in tool {} but the application already exposes a tool with that name; "
                    "exclude or rename it",
                    gocompat::quote(t->name()));
            }
            builtins_.insert(t->name());
            if (auto clash = claim(t)) return clash;
        }
        knowledge_on_ = true;
        return std::nullopt;
    }

    asio::awaitable<std::optional<std::string>> build_memory() {
        if (!rt_.memory) co_return std::nullopt;
        memory_view_ = std::shared_ptr<memory::view>(rt_.memory->open_view());
        for (auto& t : memory::memory_tools(memory_view_)) {
            builtins_.insert(t->name());
            if (auto clash = claim(t)) co_return clash;
        }
        if (rt_.cfg.harness.memory.index_enabled()) {
            auto listed = co_await memory_view_->list();
            if (listed) {
                memory_index_ = memory::memory_index_block(*listed);
            } else {
                events_.warn(warning{"memory_index", {}, listed.error().message, 0});
            }
        }
        co_return std::nullopt;
    }

    std::string no_tools_text() const {
        const std::string where =
            rt_.config_file.empty() ? std::string("the configuration") : gocompat::quote(rt_.config_file);
        if (rt_.cfg.application_path.empty()) {
            return "no tools available: this agent wraps no application (application_path unset) and enables no "
                   "built-in or remote tools; set application_path, or enable harness.knowledge, harness.memory, "
                   "human_in_the_loop, or remote_tools in " +
                   where;
        }
        return "no tools available after filtering; check include/exclude in " + where;
    }

    void build_definitions() {
        std::size_t deferrable = 0;
        for (const auto& t : tools_) {
            if (!builtins_.contains(t->name())) ++deferrable;
        }
        const std::size_t count = tools_.size();
        bool defer = false;
        if (count >= tool_search_threshold) {
            if (!rt_.provider->caps().supports_tool_search) {
                events_.warn(warning{"tool_search_unsupported", {}, {}, static_cast<std::int64_t>(count)});
            } else if (!rt_.cfg.llm.tool_search_allowed()) {
                events_.warn(warning{"tool_search_disabled", {}, {}, static_cast<std::int64_t>(count)});
            } else {
                defer = deferrable > 0;
            }
        }
        // Order: the runtime's tools (definition order), then the built-ins, never deferred.
        std::vector<std::pair<toolkit::tool_ptr, bool>> offered;
        for (int pass = 0; pass < 2; ++pass) {
            for (const auto& t : tools_) {
                const bool builtin = builtins_.contains(t->name());
                if (builtin != (pass == 1)) continue;
                bool deferred = false;
                if (!builtin && defer) {
                    deferred = t->kind() == toolkit::tool_kind::remote || !has_tag(*t, "ai:no_defer");
                }
                tool_search_ = tool_search_ || deferred;
                offered.emplace_back(t, deferred);
                if (t->confirm().posture != toolkit::confirm_posture::not_required) ++gated_;
            }
        }
        const bool cacheable = builtins_.empty() && rt_.offers;
        if (auto kept = cacheable ? rt_.offers->find(offered) : nullptr) {
            definitions_ = kept->definitions;
            tools_hash_ = kept->tools_hash;
        } else {
            std::vector<llm::tool_def> definitions;
            definitions.reserve(offered.size());
            for (const auto& [t, deferred] : offered) {
                definitions.push_back(llm::tool_def{t->name(), t->model_description(), t->input_schema(), deferred});
            }
            definitions_ = llm::tool_set(std::move(definitions));
            tools_hash_ = runstate::tools_hash(definitions_.defs());
            if (cacheable) {
                rt_.offers->keep(std::make_shared<const offer_cache::offer>(
                    offer_cache::offer{std::move(offered), definitions_, tools_hash_}));
            }
        }
        if (gated_ > 0 && !asker_.can_prompt()) events_.warn(warning{"confirm_no_terminal", {}, {}, gated_});
    }

    void build_system() {
        system_.push_back(rt_.cfg.system_prompt);
        if (auto note = hitl_system_note(hitl_names_); !note.empty()) system_.push_back(std::move(note));
        if (memory_view_) system_.emplace_back(memory::memory_system_note());
        if (knowledge_on_) system_.emplace_back(knowledge::knowledge_system_note());
        fingerprint_.provider = rt_.provider->caps().provider;
        fingerprint_.model = rt_.cfg.llm.model;
        if (auto kept = rt_.offers ? rt_.offers->system_hash(system_) : std::nullopt) {
            fingerprint_.system_hash = std::move(*kept);
        } else {
            fingerprint_.system_hash = runstate::system_hash(system_);
            if (rt_.offers) rt_.offers->keep_system_hash(system_, fingerprint_.system_hash);
        }
        fingerprint_.tools_hash = tools_hash_;
        fingerprint_.thinking_mode = rt_.cfg.llm.thinking_enabled ? "summarized" : "off";
        fingerprint_.max_tokens = rt_.configured.max_tokens;
        fingerprint_.max_iterations = rt_.configured.max_iterations;
    }

    // After the fingerprint: the resume reminder (never persisted) and the memory index.
    void finish_system(bool reopened) {
        if (reopened) system_.emplace_back(text::resume_reminder);
        if (!memory_index_.empty()) system_.push_back(memory_index_);
    }

    run_info info(bool resumed) const {
        run_info i;
        i.session_id = req_.session_id;
        for (const auto& d : definitions_) i.tools.push_back(d.name);
        i.resumed = resumed;
        i.follow_up = req_.mode == session_mode::follow_up;
        i.gated_tools = gated_;
        return i;
    }

    asio::awaitable<std::optional<ending>> open_session() {
        auto& store = *rt_.sessions;
        const bool follow_up = req_.mode == session_mode::follow_up;

        // A new session is the common case, so it is created at once (the store refuses an
        // id that exists: errc::exists) rather than after a separate existence check; only a
        // follow-up, or an id that turns out to exist, reads what is stored. Its first
        // record's sync overlaps the first model call (create_started): a model call acts on
        // nothing, and the assistant record that follows it waits for the sync.
        if (!follow_up) {
            const std::string prompt = req_.prompt.empty() ? std::string(text::default_prompt) : req_.prompt;
            runstate::meta_record meta;
            meta.run_id = req_.session_id;
            meta.created = gocompat::to_go_time(std::chrono::system_clock::now());
            meta.fingerprint = fingerprint_;
            meta.prompt = prompt;
            auto created = co_await store.create_started(req_.session_id, std::move(meta));
            if (created) {
                journal_ = std::move(*created);
                messages_.push_back(llm::message{llm::role::user, {llm::text_block{prompt}}});
                iteration_cap_ = req_.effective.max_iterations;
                finish_system(false);
                events_.starting(info(false));
                co_return std::nullopt;
            }
            if (created.error().code != runstate::make_error_code(runstate::errc::exists))
                co_return fail_early(created.error().message);
        }

        // What is read decides the resume, and it is read before the lock: another worker
        // may still be writing the session. So the read is checked against what the lock
        // finds, and read again once when they differ (that worker has finished meanwhile).
        std::vector<runstate::record> records;
        runstate::run_state state;
        for (int attempt = 1;; ++attempt) {
            auto read = co_await store.read(req_.session_id);
            if (!read) {
                if (follow_up && read.error().code == runstate::make_error_code(runstate::errc::not_found)) {
                    co_return fail_early(fmt::format("session {} does not exist; a follow-up needs an existing session",
                                                     gocompat::quote(req_.session_id)));
                }
                co_return fail_early(read.error().message);
            }
            records = std::move(*read);
            auto folded = runstate::fold(records);
            if (!folded) co_return fail_early(folded.error().message);
            state = std::move(*folded);

            // A session resting on a final outcome answers again from the journal.
            if (!follow_up && !records.empty()) {
                if (const auto* t = std::get_if<runstate::terminal_record>(&records.back().payload);
                    t != nullptr && t->reason != runstate::terminal_reason::suspended) {
                    replay(state, *t);
                    co_return std::nullopt;
                }
            }
            if (state.interactive) {
                co_return fail_early(
                    fmt::format("session {} is an interactive chat session; resume it with the full-screen chat UI",
                                gocompat::quote(req_.session_id)));
            }

            if (state.fingerprint.provider != fingerprint_.provider) {
                co_return fail_early(runstate::provider_mismatch_text(req_.session_id, state.fingerprint.provider,
                                                                      fingerprint_.provider));
            }
            if (auto differences = runstate::diff(state.fingerprint, fingerprint_); !differences.empty()) {
                if (!req_.force && (!follow_up || state.pending)) {
                    auto refused = runstate::drift_text(req_.session_id, differences);
                    if (follow_up) {
                        const std::string hint =
                            "re-run against the original configuration, or pass --force to continue "
                            "with the current one";
                        if (auto at = refused.rfind(hint); at != std::string::npos) {
                            refused.replace(at, hint.size(), "ask the operator to restore the configuration");
                        }
                    }
                    co_return fail_early(refused);
                }
                if (attempt == 1) {
                    events_.warn(warning{"fingerprint_drift", {}, fmt::format("{}", fmt::join(differences, "; ")), 0});
                }
            }

            auto opened = co_await store.open(req_.session_id);
            if (!opened) co_return fail_early(opened.error().message);
            if ((*opened)->last_seq() == state.last_seq) {
                journal_ = std::move(*opened);
                break;
            }
            (void)(*opened)->close();
            if (attempt == 2) {
                co_return fail_early(fmt::format("session {} changed while this run was opening it; try again",
                                                 gocompat::quote(req_.session_id)));
            }
        }

        messages_ = state.messages;
        iteration_ = state.next_iteration;
        pending_ = state.pending;
        if (pending_) started_call_ = possibly_started(records, *pending_);
        result_.counters.llm_calls = state.counters.llm_calls;
        result_.counters.tool_calls = state.counters.tool_calls;
        result_.counters.remote_tool_calls = state.counters.remote_tool_calls;
        result_.counters.tokens = llm::usage{state.counters.in_tokens, state.counters.out_tokens,
                                             state.counters.cache_read_tokens, state.counters.cache_create_tokens};
        // A turn opened by a follow-up has its own budgets (serve.md §3.2); an opening turn
        // stays cumulative across resumes (Go).
        if (follow_up || state.turn_start_iteration > 0) {
            budget_used_ = state.turn_usage;
            iteration_cap_ = add_iterations(follow_up ? state.next_iteration : state.turn_start_iteration,
                                            req_.effective.max_iterations);
        } else {
            budget_used_ = result_.counters.tokens;
            iteration_cap_ = req_.effective.max_iterations;
        }
        finish_system(true);
        events_.starting(info(true));
        if (!pending_ && state.last_stop_reason == "pause_turn") events_.warn(warning{"resume_paused_turn", {}, {}, 0});

        if (auto end = co_await complete_pending()) co_return end;

        if (follow_up) {
            if (!req_.prompt.empty()) {
                llm::message typed{llm::role::user, {llm::text_block{req_.prompt}}};
                // GCC 12 destroys a temporary in a co_await expression twice: bind it first.
                runstate::payload body = runstate::user_record{typed};
                auto written = co_await journal_->append_next(std::move(body));
                if (!written) {
                    events_.warn(warning{"journal_user", {}, written.error().message, 0});
                    co_return ending{runstate::terminal_reason::error, "journaling run: " + written.error().message};
                }
                if (!messages_.empty() && messages_.back().who == llm::role::user) {
                    for (auto& block : typed.content) messages_.back().content.push_back(std::move(block));
                } else {
                    messages_.push_back(std::move(typed));
                }
            }
            budget_used_ = {};
            iteration_cap_ = add_iterations(iteration_, req_.effective.max_iterations);
        }
        co_return std::nullopt;
    }

    void replay(const runstate::run_state& state, const runstate::terminal_record& t) {
        result_.replayed = true;
        result_.reason = std::string(runstate::to_string(t.reason));
        result_.error = t.message;
        result_.counters.llm_calls = state.counters.llm_calls;
        result_.counters.tool_calls = state.counters.tool_calls;
        result_.counters.remote_tool_calls = state.counters.remote_tool_calls;
        result_.counters.tokens = llm::usage{state.counters.in_tokens, state.counters.out_tokens,
                                             state.counters.cache_read_tokens, state.counters.cache_create_tokens};
        result_.model_stop_reason = state.last_stop_reason;
        for (auto it = state.messages.rbegin(); it != state.messages.rend(); ++it) {
            if (it->who == llm::role::assistant) {
                result_.final_text = joined_text(*it);
                break;
            }
        }
    }

    // A start failure: nothing journaled (no session was opened), reported as `error`.
    std::optional<ending> fail_early(std::string message) {
        early_ = true;
        return ending{runstate::terminal_reason::error, std::move(message)};
    }

    // ---- the loop ------------------------------------------------------------------

    asio::awaitable<std::optional<ending>> complete_pending() {
        if (!pending_) co_return std::nullopt;
        auto turn = std::move(*pending_);
        pending_.reset();
        std::vector<llm::tool_result_block> results = turn.results;
        for (const auto& block : turn.assistant.content) {
            const auto* use = std::get_if<llm::tool_use_block>(&block);
            if (use == nullptr || turn.answered.contains(use->id)) continue;
            if (started_call_ && *started_call_ == use->id && !read_only(use->name)) {
                // Never repeat a side effect silently: tell the model what is known.
                events_.warn(warning{"unverified_effect", use->name, use->id, 0});
                ++result_.counters.tool_calls;
                llm::tool_result_block unverified{use->id, std::string(text::unverified_effect), true};
                if (auto end = co_await journal_result(unverified, is_remote(use->name))) co_return end;
                results.push_back(std::move(unverified));
                continue;
            }
            auto dispatched = co_await dispatch(*use, turn.iteration);
            if (dispatched.end) co_return dispatched.end;
            results.push_back(std::move(dispatched.result));
        }
        messages_.push_back(std::move(turn.assistant));
        llm::message answers{llm::role::user, {}};
        for (auto& r : results) answers.content.emplace_back(std::move(r));
        messages_.push_back(std::move(answers));
        co_return std::nullopt;
    }

    bool read_only(const std::string& name) const {
        const auto it = by_name_.find(name);
        return it != by_name_.end() && has_tag(*it->second, "impact:ro");
    }

    bool is_remote(const std::string& name) const {
        const auto it = by_name_.find(name);
        return it != by_name_.end() && it->second->kind() == toolkit::tool_kind::remote;
    }

    asio::awaitable<bool> hard_cancelled() {
        auto state = co_await asio::this_coro::cancellation_state;
        co_return state.cancelled() != asio::cancellation_type::none;
    }

    asio::awaitable<std::optional<ending>> loop() {
        while (iteration_ < iteration_cap_) {
            if (req_.stop != nullptr && req_.stop->closed()) {
                co_return ending{runstate::terminal_reason::suspended, {}};
            }
            if (co_await hard_cancelled()) co_return interrupted();
            const std::int64_t i = iteration_++;

            llm::request request;
            request.model = rt_.cfg.llm.model;
            request.system = system_;
            request.messages = messages_;
            request.tools = definitions_;
            request.tool_search = tool_search_;
            request.thinking = rt_.cfg.llm.thinking_enabled;
            request.prompt_cache = rt_.cfg.llm.prompt_cache_enabled();
            request.max_output_tokens = output_cap();

            events_.status(i + 1, "calling-llm", result_.counters.tokens);
            // A hard cancel may surface as asio's operation_aborted thrown at a co_await
            // inside the call rather than as a cancelled result: both are the hard stop.
            std::optional<llm::call_result<llm::response>> reply;
            bool aborted = false;
            try {
                reply.emplace(co_await rt_.provider->call(std::move(request), req_.effective.call_timeout));
            } catch (const boost::system::system_error& e) {
                if (e.code() != asio::error::operation_aborted) throw;
                aborted = true;
            }
            if (aborted || co_await hard_cancelled()) co_return interrupted();
            if (!*reply) co_return ending{runstate::terminal_reason::error, "llm call: " + reply->error().message};
            auto& resp = **reply;

            ++result_.counters.llm_calls;
            llm::add_usage(result_.counters.tokens, resp.used);
            llm::add_usage(budget_used_, resp.used);
            result_.model_stop_reason = resp.stop_reason;

            llm::message assistant{llm::role::assistant, resp.content};
            std::vector<const llm::tool_use_block*> uses;
            for (const auto& block : assistant.content) {
                if (const auto* use = std::get_if<llm::tool_use_block>(&block)) uses.push_back(use);
            }
            // A turn that ends the run decides its terminal with it.
            std::optional<ending> end;
            if (resp.stop_reason == "max_tokens") {
                end = ending{runstate::terminal_reason::error, std::string(text::truncated)};
            } else if (uses.empty() && resp.stop_reason != "pause_turn") {
                end = resp.stop_reason == "refusal"
                          ? ending{runstate::terminal_reason::error, std::string(text::refused)}
                          : ending{runstate::terminal_reason::completed, {}};
            }

            // Journal the turn before any tool runs: a crash mid-batch never re-pays for it. A
            // final turn is journaled with its terminal, one write and one sync for both.
            runstate::assistant_record rec{i,
                                           assistant,
                                           resp.stop_reason,
                                           resp.used.in,
                                           resp.used.out,
                                           resp.used.cache_read,
                                           resp.used.cache_create};
            std::vector<runstate::payload> bodies;
            bodies.emplace_back(std::move(rec));
            if (end) bodies.emplace_back(runstate::terminal_record{end->reason, end->message});
            auto written = co_await journal_->append_next_all(std::move(bodies));
            if (!written)
                co_return ending{runstate::terminal_reason::error, "journaling run: " + written.error().message};
            terminal_journaled_ = end.has_value();
            messages_.push_back(assistant);

            events_.message(resp, end.has_value());
            if (end) {
                result_.final_text = joined_text(resp.content);
                co_return end;
            }
            if (req_.effective.max_tokens > 0 && llm::total_tokens(budget_used_) >= req_.effective.max_tokens) {
                co_return ending{
                    runstate::terminal_reason::budget,
                    fmt::format("token budget ({}) exhausted after {} iterations", req_.effective.max_tokens, i + 1)};
            }
            if (uses.empty()) continue;  // pause_turn: the next request sends the turn back

            llm::message answers{llm::role::user, {}};
            for (const auto* use : uses) {
                auto dispatched = co_await dispatch(*use, i);
                if (dispatched.end) co_return dispatched.end;
                answers.content.emplace_back(std::move(dispatched.result));
            }
            messages_.push_back(std::move(answers));
        }
        co_return ending{
            runstate::terminal_reason::max_iterations,
            fmt::format("max iterations ({}) reached without a final answer", req_.effective.max_iterations)};
    }

    std::int64_t output_cap() const {
        if (req_.effective.max_output_tokens > 0) return req_.effective.max_output_tokens;
        return rt_.cfg.llm.thinking_enabled ? 16384 : 8192;
    }

    // ---- dispatch ------------------------------------------------------------------

    struct dispatched_call {
        llm::tool_result_block result;
        std::optional<ending> end;  // the run ends here (gate abort, journal failure, hard cancel)
    };

    // A result's sync overlaps what comes next (the next model call, or the next tool's
    // approval); whatever must not be repeated after a crash waits for it (durable_first()).
    asio::awaitable<std::optional<ending>> journal_result(const llm::tool_result_block& r, bool remote) {
        runstate::payload body = runstate::tool_result_record{r.tool_use_id, r, remote};
        auto written = co_await journal_->append_next_started(std::move(body));
        if (!written) co_return ending{runstate::terminal_reason::error, "journaling run: " + written.error().message};
        co_return std::nullopt;
    }

    // Before a tool runs, everything journaled so far is durable: a crash must never leave a
    // finished call looking unanswered while a later one has started (resume would run it again).
    asio::awaitable<std::optional<ending>> durable_first() {
        auto settled = co_await journal_->durable();
        if (!settled) co_return ending{runstate::terminal_reason::error, "journaling run: " + settled.error().message};
        co_return std::nullopt;
    }

    asio::awaitable<std::optional<toolkit::outcome>> approve(const toolkit::tool& t, std::string line,
                                                             std::string call_id) {
        auto decision = co_await gate_.check(t, std::move(line), std::move(call_id), asker_);
        if (decision.allowed) co_return std::nullopt;
        if (decision.aborted) abort_reason_ = decision.reason;
        co_return toolkit::denial_outcome(decision.reason);
    }

    asio::awaitable<dispatched_call> dispatch(const llm::tool_use_block& use, std::int64_t iteration) {
        ++result_.counters.tool_calls;
        dispatched_call out;
        out.result.tool_use_id = use.id;
        const auto found = by_name_.find(use.name);
        bool remote = false;
        if (use.input_error) {
            out.result.content = "invalid tool input from the model: " + *use.input_error;
            out.result.is_error = true;
        } else if (found == by_name_.end()) {
            events_.warn(warning{"unknown_tool", use.name, {}, 0});
            out.result.content = fmt::format("unknown tool {}", gocompat::quote(use.name));
            out.result.is_error = true;
        } else {
            auto tool = found->second;
            json::value arguments;
            boost::system::error_code ec;
            arguments = json::parse(use.input, ec, {}, gocompat::go_parse_options());
            if (ec) arguments = json::object();
            if (auto missing = missing_required(*tool, arguments)) {
                events_.warn(warning{"missing_required", use.name, *missing, 0});
                out.result.content = *missing;
                out.result.is_error = true;
            } else {
                remote = tool->kind() == toolkit::tool_kind::remote;
                if (auto end = co_await durable_first()) {
                    out.end = std::move(end);
                    co_return out;
                }
                auto finished = co_await run_one(tool, use, std::move(arguments), iteration);
                if (finished.end) co_return finished;
                out = std::move(finished);
            }
        }
        if (remote) ++result_.counters.remote_tool_calls;
        out.end = co_await journal_result(out.result, remote);
        co_return out;
    }

    asio::awaitable<dispatched_call> run_one(toolkit::tool_ptr tool, const llm::tool_use_block& use,
                                             json::value arguments, std::int64_t iteration) {
        dispatched_call out;
        out.result.tool_use_id = use.id;
        toolkit::tool_call_policy policy;
        policy.timeout = req_.effective.tool_timeout;
        policy.carries_deferral = true;
        policy.call.work_dir = req_.tool_work_dir;
        policy.call.timeout = req_.effective.tool_timeout;
        const std::string call_id = use.id;
        // Lives in this frame, which outlasts the call.
        call_prompter call_asker(asker_, call_id);
        policy.call.asker = &call_asker;
        policy.approve = [this, call_id](const toolkit::tool& t, std::string line) {
            return approve(t, std::move(line), call_id);
        };
        auto* events = &events_;
        const std::string input = use.input;
        // Shared with the callback: whether the call really started (a denial never does,
        // and Go emits no call or result event for it).
        auto ran = std::make_shared<bool>(false);
        policy.on_start = [events, call_id, input, ran](const toolkit::tool& t, const std::string& line) {
            *ran = true;
            const bool remote = t.kind() == toolkit::tool_kind::remote;
            events->tool_call(tool_call_trace{call_id, t.name(), line, t.kind(), input, remote, t.remote_agent()});
        };
        events_.status(iteration + 1, "executing-tool", result_.counters.tokens);
        const auto started = std::chrono::steady_clock::now();
        std::optional<toolkit::outcome> finished;
        bool aborted = false;
        try {
            finished.emplace(co_await toolkit::run_tool_call(tool, std::move(arguments), std::move(policy)));
        } catch (const boost::system::system_error& e) {
            if (e.code() != asio::error::operation_aborted) throw;
            aborted = true;
        }
        if (aborted || co_await hard_cancelled()) {
            out.end = interrupted();
            co_return out;
        }
        if (!abort_reason_.empty()) {
            out.end = ending{runstate::terminal_reason::suspended, std::exchange(abort_reason_, {})};
            co_return out;
        }
        const auto& outcome = *finished;
        out.result.content = outcome.render();
        out.result.is_error = outcome.is_error();
        if (outcome.is_deferral()) {
            deferred_call d{use.id, use.name, outcome.deferred_question_id(), std::string(question_kind(use.name)), {}};
            boost::system::error_code ec;
            if (auto args = json::parse(use.input, ec, {}, gocompat::go_parse_options()); !ec && args.is_object()) {
                if (const auto* q = args.get_object().if_contains("question"); q != nullptr && q->is_string()) {
                    d.question = std::string(q->get_string());
                }
            }
            result_.deferred.push_back(std::move(d));
        }
        if (*ran) {
            tool_result_trace trace{use.id,
                                    use.name,
                                    out.result.content,
                                    out.result.is_error,
                                    outcome.is_deferral(),
                                    std::chrono::steady_clock::now() - started,
                                    tool->kind() == toolkit::tool_kind::remote,
                                    std::nullopt};
            // A remote reply always has the command result's shape; only a peer that ran a
            // command names one (an in-process tool on the peer sends no exec).
            if (const auto* ran_command = outcome.command();
                ran_command != nullptr && (!trace.remote || !ran_command->command.empty())) {
                trace.exec = exec_info{ran_command->command, ran_command->exit_code, ran_command->truncated};
            }
            events_.tool_result(trace);
        }
        co_return out;
    }

    // ---- the end -------------------------------------------------------------------

    ending interrupted() const { return ending{runstate::terminal_reason::suspended, std::string(text::interrupted)}; }

    asio::awaitable<void> finish(const ending& end) {
        result_.reason = std::string(runstate::to_string(end.reason));
        result_.error = end.message;
        if (end.reason == runstate::terminal_reason::suspended && end.message.empty()) result_.error.clear();
        if (!journal_ || early_) co_return;
        // After a hard cancel asio refuses any co_await until the state is reset; the
        // terminal must still be written so the session stays resumable (D10).
        co_await asio::this_coro::reset_cancellation_state();
        if (!terminal_journaled_) {
            runstate::payload body = runstate::terminal_record{end.reason, end.message};
            auto written = co_await journal_->append_next(std::move(body));
            if (!written) events_.warn(warning{"journal_terminal", {}, written.error().message, 0});
        }
        if (auto closed = journal_->close(); !closed) {
            events_.warn(warning{"journal_close", {}, closed.error().message, 0});
        }
    }

    run_result crash(std::string_view what) {
        events_.crashed(what);
        run_result crashed;
        crashed.crashed = true;
        crashed.error = std::string(text::crashed);
        crashed.session_id = req_.session_id;
        crashed.counters = result_.counters;
        // No terminal record: the session stays resumable (Go).
        if (journal_) (void)journal_->close();
        return crashed;
    }

    const runtime& rt_;
    run_request req_;
    event_sink& events_;
    toolkit::prompter& asker_;
    run_result result_;

    toolkit::tool_list tools_;
    std::map<std::string, toolkit::tool_ptr, std::less<>> by_name_;
    std::set<std::string, std::less<>> builtins_;
    std::vector<std::string> hitl_names_;
    std::shared_ptr<memory::view> memory_view_;
    bool knowledge_on_ = false;
    std::string memory_index_;
    llm::tool_set definitions_;  // built once per run (or kept from the last), shared by its requests
    std::string tools_hash_;
    bool tool_search_ = false;
    std::int64_t gated_ = 0;
    std::vector<std::string> system_;
    runstate::fingerprint fingerprint_;

    std::unique_ptr<runstate::journal> journal_;
    std::vector<llm::message> messages_;
    std::int64_t iteration_ = 0;
    std::int64_t iteration_cap_ = 0;
    llm::usage budget_used_;
    std::optional<runstate::pending_turn> pending_;
    std::optional<std::string> started_call_;
    toolkit::confirm_gate gate_;
    std::string abort_reason_;
    bool early_ = false;
    bool terminal_journaled_ = false;  // written with the final turn (append_next_all)
};

}  // namespace

limits limits::from(const config::config& cfg) {
    limits l;
    l.max_tokens = cfg.llm.budget.max_tokens > 0 ? cfg.llm.budget.max_tokens : config::default_max_tokens;
    l.max_iterations =
        cfg.llm.budget.max_iterations > 0 ? cfg.llm.budget.max_iterations : config::default_max_iterations;
    l.max_output_tokens = cfg.llm.budget.max_output_tokens;
    l.call_timeout = cfg.llm.budget.call_timeout;
    l.tool_timeout = cfg.harness.tool_timeout;
    return l;
}

event_sink& null_events() noexcept {
    static silent_sink sink;
    return sink;
}

agent::agent(boost::asio::any_io_executor executor, std::shared_ptr<const runtime> shared)
    : executor_(std::move(executor)), shared_(std::move(shared)) {}

boost::asio::awaitable<run_result> agent::run(run_request request) {
    // The run keeps the runtime alive for as long as it lasts.
    auto keep = shared_;
    // A hard cancel must reach the loop as a state it can see and answer (terminal
    // `interrupted`), not as operation_aborted thrown out of the next co_await; the
    // caller's setting is restored before returning.
    const bool caller_throws = co_await boost::asio::this_coro::throw_if_cancelled();
    co_await boost::asio::this_coro::throw_if_cancelled(false);
    session_run session(*keep, std::move(request));
    auto result = co_await session.run();
    co_await boost::asio::this_coro::throw_if_cancelled(caller_throws);
    co_return result;
}

}  // namespace fiskai::agent
