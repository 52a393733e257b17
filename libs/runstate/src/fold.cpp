#include <fiskai/runstate/state.hpp>

#include <fiskai/gocompat/quote.hpp>

#include <fmt/format.h>

#include <initializer_list>
#include <limits>

namespace fiskai::runstate {

namespace {

llm::message user_text(const std::string& text) {
    llm::message m;
    m.who = llm::role::user;
    m.content.push_back(llm::text_block{text});
    return m;
}

llm::message user_results(const std::vector<llm::tool_result_block>& results) {
    llm::message m;
    m.who = llm::role::user;
    m.content.reserve(results.size());
    for (const auto& r : results) m.content.emplace_back(r);
    return m;
}

// A follow-up merges into a trailing user message (roles keep alternating; this is also
// the runtime's merge after an errored turn).
void append_or_merge_user(std::vector<llm::message>& messages, const llm::message& m) {
    if (!messages.empty() && messages.back().who == llm::role::user) {
        auto& content = messages.back().content;
        content.insert(content.end(), m.content.begin(), m.content.end());
        return;
    }
    messages.push_back(m);
}

bool all_answered(const llm::message& m, const std::set<std::string>& answered) {
    for (const auto& b : m.content) {
        if (const auto* use = std::get_if<llm::tool_use_block>(&b); use != nullptr && !answered.contains(use->id)) {
            return false;
        }
    }
    return true;
}

error corrupt(std::string detail) { return make_error(errc::corrupt, detail); }

}  // namespace

result<run_state> fold(const std::vector<record>& records) {
    if (records.empty()) return make_error(errc::no_records);
    const auto* meta = std::get_if<meta_record>(&records.front().payload);
    if (meta == nullptr) return make_error(errc::no_meta);
    if (meta->version != format_version) {
        return make_error(errc::unsupported_version,
                          fmt::format("snapshot version {}, supported {}", meta->version, format_version));
    }

    run_state rs;
    rs.version = meta->version;
    rs.run_id = meta->run_id;
    rs.fingerprint = meta->fingerprint;
    rs.prompt = meta->prompt;
    rs.interactive = meta->interactive;
    rs.created = meta->created;
    rs.messages.push_back(user_text(meta->prompt));

    // The open assistant turn: the loop only calls the LLM again once a turn's tools are
    // all answered, so a new assistant record commits the previous one.
    const assistant_record* cur = nullptr;
    std::vector<llm::tool_result_block> cur_results;
    std::set<std::string> cur_answered;
    const auto commit = [&] {
        rs.messages.push_back(cur->message);
        if (!cur_results.empty()) rs.messages.push_back(user_results(cur_results));
    };

    // Tracked apart from `cur`, which a trailing user record clears.
    std::int64_t last_iter = 0;
    std::string last_stop;
    bool saw_assistant = false;

    std::uint64_t last_seq = records.front().seq;
    for (std::size_t i = 1; i < records.size(); ++i) {
        const auto& r = records[i];
        if (r.seq <= last_seq) return corrupt(fmt::format("seq {} not increasing after {}", r.seq, last_seq));
        last_seq = r.seq;
        if (std::holds_alternative<meta_record>(r.payload)) {
            return corrupt(fmt::format("duplicate meta at seq {}", r.seq));
        }
        if (const auto* a = std::get_if<assistant_record>(&r.payload)) {
            // The schema refuses negatives in a stored record; fold checks again for records
            // built any other way, and keeps next_iteration (last + 1) representable.
            if (a->iteration < 0 || a->iteration == std::numeric_limits<std::int64_t>::max()) {
                return corrupt(fmt::format("assistant at seq {} has iteration {}, outside 0 to {}", r.seq, a->iteration,
                                           std::numeric_limits<std::int64_t>::max() - 1));
            }
            for (const auto n : {a->in_tokens, a->out_tokens, a->cache_read_tokens, a->cache_create_tokens}) {
                if (n < 0) return corrupt(fmt::format("assistant at seq {} has a negative token count ({})", r.seq, n));
            }
            if (cur != nullptr) commit();
            cur = a;
            cur_results.clear();
            cur_answered.clear();
            last_iter = a->iteration;
            last_stop = a->stop_reason;
            saw_assistant = true;
            rs.counters.llm_calls++;
            // Saturating at llm::max_token_count: a journal may hold any count.
            rs.counters.in_tokens = llm::add_tokens(rs.counters.in_tokens, a->in_tokens);
            rs.counters.out_tokens = llm::add_tokens(rs.counters.out_tokens, a->out_tokens);
            rs.counters.cache_read_tokens = llm::add_tokens(rs.counters.cache_read_tokens, a->cache_read_tokens);
            rs.counters.cache_create_tokens = llm::add_tokens(rs.counters.cache_create_tokens, a->cache_create_tokens);
            llm::add_usage(rs.turn_usage,
                           llm::usage{a->in_tokens, a->out_tokens, a->cache_read_tokens, a->cache_create_tokens});
        } else if (const auto* u = std::get_if<user_record>(&r.payload)) {
            if (cur != nullptr) {
                commit();
                cur = nullptr;
                cur_results.clear();
                cur_answered.clear();
            }
            append_or_merge_user(rs.messages, u->message);
            rs.turn_usage = {};
            rs.turn_start_iteration = saw_assistant ? last_iter + 1 : 0;
        } else if (const auto* t = std::get_if<tool_result_record>(&r.payload)) {
            if (cur == nullptr) return corrupt(fmt::format("tool_result before any assistant at seq {}", r.seq));
            cur_results.push_back(t->result);
            cur_answered.insert(t->tool_use_id);
            rs.counters.tool_calls++;
            if (t->remote) rs.counters.remote_tool_calls++;
        } else if (const auto* term = std::get_if<terminal_record>(&r.payload)) {
            rs.terminal = *term;
        }
    }

    if (cur != nullptr) {
        if (all_answered(cur->message, cur_answered)) {
            commit();
        } else {
            rs.pending = pending_turn{cur->message, cur->iteration, cur->stop_reason, std::move(cur_results),
                                      std::move(cur_answered)};
        }
    }
    if (saw_assistant) {
        rs.next_iteration = last_iter + 1;
        rs.last_stop_reason = last_stop;
    }
    rs.last_seq = last_seq;
    return rs;
}

}  // namespace fiskai::runstate
