#include <fiskai/serve/serve.hpp>

namespace fiskai::serve {

agent::limits effective_limits(const agent::limits& configured, const budget& work) noexcept {
    agent::limits effective = configured;
    // A caller may only lower: a value that is unset, or not below the operator's, is ignored.
    if (work.max_tokens > 0 && work.max_tokens < configured.max_tokens) effective.max_tokens = work.max_tokens;
    if (work.max_iterations > 0 && work.max_iterations < configured.max_iterations) {
        effective.max_iterations = work.max_iterations;
    }
    if (work.call_timeout.count() > 0 && work.call_timeout < configured.call_timeout) {
        effective.call_timeout = work.call_timeout;
    }
    return effective;
}

outcome to_outcome(const agent::run_result& r) {
    outcome o;
    o.reason = r.crashed ? std::string() : r.reason;
    o.error = r.error;
    o.crashed = r.crashed;
    o.replayed = r.replayed;
    o.deferred = r.deferred;
    o.session_id = r.session_id;
    o.text = r.final_text;
    o.model_stop_reason = r.model_stop_reason;
    o.counters = r.counters;
    return o;
}

}  // namespace fiskai::serve
