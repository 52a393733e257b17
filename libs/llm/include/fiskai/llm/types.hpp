#pragma once
// The neutral conversation types every provider maps to and from, and that the session
// journal stores (runstate writes them as Go's neutral message JSON). Nothing here knows
// a wire format.

#include <boost/json/object.hpp>

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace fiskai::llm {

enum class role { user, assistant };

struct text_block {
    std::string text;
    friend bool operator==(const text_block&, const text_block&) = default;
};

// signature: opaque bytes from the provider, echoed back verbatim on the next request.
struct thinking_block {
    std::string text;
    std::string signature;
    friend bool operator==(const thinking_block&, const thinking_block&) = default;
};

struct tool_use_block {
    std::string id;
    std::string name;
    // The arguments as compact raw JSON of an object.
    std::string input;
    // Set when the model sent arguments that are not a JSON object: `input` is then `{}`
    // and this says what was wrong, so the loop can answer the call with that error.
    std::optional<std::string> input_error;
    friend bool operator==(const tool_use_block&, const tool_use_block&) = default;
};

struct tool_result_block {
    std::string tool_use_id;
    std::string content;
    bool is_error = false;
    friend bool operator==(const tool_result_block&, const tool_result_block&) = default;
};

// Any other block a provider returns (server tool use, search results, redacted
// thinking, ...), kept verbatim: `kind` is its `type`, `raw` its compact JSON.
struct provider_block {
    std::string kind;
    std::string raw;
    friend bool operator==(const provider_block&, const provider_block&) = default;
};

using content_block = std::variant<text_block, thinking_block, tool_use_block, tool_result_block, provider_block>;

struct message {
    role who = role::user;
    std::vector<content_block> content;
    friend bool operator==(const message&, const message&) = default;
};

struct tool_def {
    std::string name;
    std::string description;
    boost::json::object input_schema;
    bool defer_loading = false;
};

// The tools a request offers. A run offers the same tools in every request, so the list is
// shared rather than copied into each one, and a codec encodes it once per wire format
// (encoded()). Immutable once built; safe to share between threads.
class tool_set {
public:
    tool_set();
    tool_set(std::vector<tool_def> defs);  // NOLINT: a list of tools is a tool set
    tool_set(std::initializer_list<tool_def> defs) : tool_set(std::vector<tool_def>(defs)) {}

    [[nodiscard]] const std::vector<tool_def>& defs() const noexcept;
    [[nodiscard]] std::size_t size() const noexcept { return defs().size(); }
    [[nodiscard]] bool empty() const noexcept { return defs().empty(); }
    [[nodiscard]] const tool_def& operator[](std::size_t i) const { return defs()[i]; }
    [[nodiscard]] auto begin() const noexcept { return defs().begin(); }
    [[nodiscard]] auto end() const noexcept { return defs().end(); }

    // What `encode` (a wire format's encoder of the whole list) makes of the list: made on
    // the first call with that encoder and kept with the list for the next.
    using encoder = std::string (*)(const std::vector<tool_def>&);
    [[nodiscard]] const std::string& encoded(encoder encode) const;

    struct shared;  // opaque: the list and its encodings

private:
    std::shared_ptr<const shared> shared_;
};

struct usage {
    std::int64_t in = 0;
    std::int64_t out = 0;
    std::int64_t cache_read = 0;
    std::int64_t cache_create = 0;
    friend bool operator==(const usage&, const usage&) = default;
};

// The largest token count kept: 2^53 - 1, exact in a double, so every JSON reader of a
// journal or a reply agrees on it. The codecs clamp what a provider reports to
// [0, max_token_count], and the sums below saturate there.
inline constexpr std::int64_t max_token_count = (std::int64_t{1} << 53) - 1;

// a + b for token counts: each clamped to [0, max_token_count] first, the sum capped there.
[[nodiscard]] constexpr std::int64_t add_tokens(std::int64_t a, std::int64_t b) noexcept {
    const auto clamp = [](std::int64_t v) { return v < 0 ? 0 : (v > max_token_count ? max_token_count : v); };
    const std::int64_t sum = clamp(a) + clamp(b);  // at most 2^54: no overflow
    return sum > max_token_count ? max_token_count : sum;
}

// Every count of `u` summed, saturating.
[[nodiscard]] constexpr std::int64_t total_tokens(const usage& u) noexcept {
    return add_tokens(add_tokens(u.in, u.out), add_tokens(u.cache_read, u.cache_create));
}

// Adds `u` into `into`, each count saturating.
constexpr void add_usage(usage& into, const usage& u) noexcept {
    into.in = add_tokens(into.in, u.in);
    into.out = add_tokens(into.out, u.out);
    into.cache_read = add_tokens(into.cache_read, u.cache_read);
    into.cache_create = add_tokens(into.cache_create, u.cache_create);
}

struct request {
    std::string model;
    std::vector<std::string> system;
    std::vector<message> messages;
    tool_set tools;
    bool tool_search = false;
    bool thinking = false;
    bool prompt_cache = true;
    bool interactive = false;
    std::int64_t max_output_tokens = 0;
};

struct response {
    std::vector<content_block> content;
    // Passed through verbatim: an unknown stop reason survives.
    std::string stop_reason;
    usage used;
    std::string request_id;
};

struct capabilities {
    std::string provider;
    bool supports_tool_search = false;
};

}  // namespace fiskai::llm
