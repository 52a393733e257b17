#include "decode.hpp"

#include "text.hpp"

#include <fiskai/gocompat/json.hpp>
#include <fiskai/gocompat/quote.hpp>

#include <fmt/format.h>
#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <map>
#include <utility>

// yaml-cpp is permissive where the config must be strict: it keeps duplicate mapping keys,
// ignores nothing on its own, and converts "yes" to true. So this file walks the node tree
// itself against a table of known keys, and checks every scalar's type by hand.

namespace fiskai::config::detail {
namespace {

constexpr std::string_view str_tag = "tag:yaml.org,2002:str";
constexpr std::string_view bool_tag = "tag:yaml.org,2002:bool";
constexpr std::string_view int_tag = "tag:yaml.org,2002:int";

// ---------------------------------------------------------------------------------------
// The schema: the keys allowed in each mapping, by path pattern ("[]" stands for a list
// index). It also feeds the hints of the unknown-key error.

using key_list = std::vector<std::string_view>;

const key_list filter_keys{"tools", "tags"};

const std::vector<std::pair<std::string_view, key_list>>& schema() {
    static const std::vector<std::pair<std::string_view, key_list>> table{
        {"",
         {"identity", "application_path", "nats_context", "system_prompt", "include", "exclude", "global_flags",
          "remote_agents", "remote_tools", "expose", "harness", "llm", "mcp_servers"}},
        {"include", filter_keys},
        {"exclude", filter_keys},
        {"remote_agents[]", {"name", "alias"}},
        {"remote_tools[]", {"name", "alias", "include", "exclude"}},
        {"remote_tools[].include", filter_keys},
        {"remote_tools[].exclude", filter_keys},
        {"expose", {"agent"}},
        {"expose.agent",
         {"mcp", "a2a", "tools", "workers", "work_dir", "drain_timeout", "report_timeout", "queue", "slack"}},
        {"expose.agent.mcp",
         {"port", "address", "instructions", "confirm_over_mcp", "builtins", "max_concurrent_tools", "tool_timeout",
          "serve_remote_tools", "allowed_origins", "max_connections"}},
        {"expose.agent.a2a", {"serve_tools", "max_concurrent_tools", "tool_timeout", "prompts"}},
        {"expose.agent.a2a.prompts", {"elicitation", "question_timeout", "accept_window"}},
        {"expose.agent.queue", {"stream", "task_store", "consumer", "ack_wait", "max_deliver", "dead_letter"}},
        {"expose.agent.slack",
         {"app_token_env", "bot_token_env", "api_base_url", "channels", "approvers", "question_timeout",
          "max_admitted"}},
        {"expose.agent.tools", {"include", "exclude"}},
        {"expose.agent.tools.include", filter_keys},
        {"expose.agent.tools.exclude", filter_keys},
        {"harness",
         {"human_in_the_loop", "confirm_tags", "tool_timeout", "no_tui", "no_bell", "memory", "sessions", "knowledge"}},
        {"harness.human_in_the_loop", {"enabled"}},
        {"harness.memory", {"enabled", "backend", "no_index", "options"}},
        {"harness.sessions", {"backend", "options"}},
        {"harness.knowledge", {"enabled", "paths", "directory", "top_k", "max_injected_tokens", "embeddings"}},
        {"harness.knowledge.embeddings",
         {"base_url", "model", "api_key_env", "timeout", "query_prefix", "document_prefix"}},
        {"llm",
         {"model", "provider", "base_url", "api_key_env", "max_retries", "insecure_http", "budget", "thinking",
          "no_prompt_cache", "no_tool_search"}},
        {"llm.budget", {"max_tokens", "max_output_tokens", "max_iterations", "call_timeout"}},
        {"llm.thinking", {"enabled"}},
        {"mcp_servers[]",
         {"name", "command", "args", "work_dir", "env", "env_passthrough", "url", "headers_env", "alias", "include",
          "exclude", "confirm", "tool_timeout", "startup_timeout"}},
        {"mcp_servers[].include", filter_keys},
        {"mcp_servers[].exclude", filter_keys},
    };
    return table;
}

const key_list& keys_for(std::string_view pattern) {
    for (const auto& [p, keys] : schema()) {
        if (p == pattern) return keys;
    }
    static const key_list none;
    return none;
}

std::string join_path(std::string_view parent, std::string_view key) {
    if (parent.empty()) return std::string(key);
    return fmt::format("{}.{}", parent, key);
}

// Keys renamed or moved since designs the operator may have copied from.
std::string_view renamed_key(std::string_view key) {
    if (key == "agent_to_agent") return "expose.agent.a2a.serve_tools";
    return {};
}

// Optimal string alignment distance: edits plus adjacent transpositions ("prot" -> "port").
std::size_t edit_distance(std::string_view a, std::string_view b) {
    std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
    for (std::size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
    for (std::size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
    for (std::size_t i = 1; i <= a.size(); ++i) {
        for (std::size_t j = 1; j <= b.size(); ++j) {
            const std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
            d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
                d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
            }
        }
    }
    return d[a.size()][b.size()];
}

// The hint appended to an unknown-key error: the key's real home when it exists elsewhere
// (the classic trap is harness.human_in_the_loop written at the top level), else a close
// sibling for a typo, else the list of valid keys at that level.
std::string unknown_key_hint(std::string_view pattern, std::string_view path, std::string_view key) {
    if (const auto moved = renamed_key(key); !moved.empty()) {
        return fmt::format("; did you mean \"{}\"?", moved);
    }
    std::vector<std::string> homes;
    for (const auto& [p, keys] : schema()) {
        if (p == pattern) continue;
        if (std::find(keys.begin(), keys.end(), key) != keys.end()) homes.push_back(join_path(p, key));
    }
    if (!homes.empty() && homes.size() <= 3) {
        std::string quoted;
        for (const auto& h : homes) quoted += (quoted.empty() ? "" : " or ") + fmt::format("\"{}\"", h);
        return fmt::format("; it is not valid here, did you mean {}?", quoted);
    }
    const auto& siblings = keys_for(pattern);
    std::string_view closest;
    std::size_t best = 3;
    for (const auto sibling : siblings) {
        const auto dist = edit_distance(ascii_lower(key), sibling);
        if (dist < best && dist < sibling.size()) {
            best = dist;
            closest = sibling;
        }
    }
    if (!closest.empty()) return fmt::format("; did you mean \"{}\"?", join_path(path, closest));
    std::string list;
    for (const auto sibling : siblings) list += (list.empty() ? "" : ", ") + std::string(sibling);
    if (path.empty()) return fmt::format("; valid top-level keys are: {}", list);
    return fmt::format("; valid keys in {} are: {}", path, list);
}

// ---------------------------------------------------------------------------------------
// Errors

int line_of(const YAML::Node& n) {
    const auto mark = n.Mark();
    return mark.is_null() ? 0 : mark.line + 1;
}

[[noreturn]] void fail(int line, const std::string& detail) {
    if (line > 0) throw config_error(fmt::format("parsing config: line {}: {}", line, detail));
    throw config_error("parsing config: " + detail);
}

bool is_quoted(const YAML::Node& n) { return n.Tag() == "!" || n.Tag() == str_tag; }

std::string describe(const YAML::Node& n) {
    switch (n.Type()) {
        case YAML::NodeType::Map: return "a mapping";
        case YAML::NodeType::Sequence: return "a list";
        case YAML::NodeType::Null: return "nothing";
        case YAML::NodeType::Scalar:
            if (is_quoted(n)) return "the quoted string " + gocompat::quote(n.Scalar());
            return gocompat::quote(n.Scalar());
        default: return "an undefined value";
    }
}

[[noreturn]] void wrong_type(int line, std::string_view path, std::string_view want, const YAML::Node& got) {
    fail(line, fmt::format("{} must be {}, got {}", path, want, describe(got)));
}

// ---------------------------------------------------------------------------------------
// Mappings

struct field {
    YAML::Node value;
    std::string path;
    int line = 0;  // the key's line
};

// A mapping checked against the schema: no duplicate keys, no unknown keys. A YAML null
// stands for an empty mapping, so `harness:` with nothing under it is the defaults.
class mapping {
public:
    mapping(const YAML::Node& node, std::string path, std::string_view pattern, int line) : path_(std::move(path)) {
        if (node.IsNull()) return;
        if (!node.IsMap()) {
            if (path_.empty())
                fail(line, fmt::format("the document must be a mapping of keys to values, got {}", describe(node)));
            wrong_type(line, path_, "a mapping", node);
        }
        const auto& allowed = keys_for(pattern);
        // Copies, not references: yaml-cpp's iterator hands out a temporary pair, and the
        // nodes are cheap shared handles.
        for (auto it = node.begin(); it != node.end(); ++it) {
            const YAML::Node key = it->first;
            const YAML::Node value = it->second;
            const int key_line = line_of(key);
            if (!key.IsScalar()) {
                fail(key_line, fmt::format("{}: keys must be plain strings, got {}",
                                           path_.empty() ? "top level" : path_, describe(key)));
            }
            const std::string& name = key.Scalar();
            std::string child = join_path(path_, name);
            for (const auto& f : fields_) {
                if (f.first == name) {
                    fail(key_line, fmt::format("duplicate key \"{}\" (first set on line {}); remove one of them", child,
                                               f.second.line));
                }
            }
            if (std::find(allowed.begin(), allowed.end(), name) == allowed.end()) {
                fail(key_line, fmt::format("unknown key \"{}\"{}{}", child, path_.empty() ? " at top level" : "",
                                           unknown_key_hint(pattern, path_, name)));
            }
            fields_.emplace_back(name, field{value, std::move(child), key_line});
        }
    }

    [[nodiscard]] const field* get(std::string_view key) const {
        for (const auto& f : fields_) {
            if (f.first == key) return &f.second;
        }
        return nullptr;
    }

    [[nodiscard]] const std::string& path() const { return path_; }

private:
    std::string path_;
    std::vector<std::pair<std::string, field>> fields_;
};

// ---------------------------------------------------------------------------------------
// Scalars. A YAML null leaves the default in place, like an omitted key.

void read(const mapping& m, std::string_view key, std::string& out) {
    const field* f = m.get(key);
    if (f == nullptr || f->value.IsNull()) return;
    if (!f->value.IsScalar()) wrong_type(f->line, f->path, "a string", f->value);
    out = f->value.Scalar();
}

// Only YAML 1.2 booleans: yaml-cpp's own conversion also takes yes/no/on/off, which the Go
// decoder reads as strings, so a file meaning one thing to both must not use them.
void read(const mapping& m, std::string_view key, bool& out) {
    const field* f = m.get(key);
    if (f == nullptr || f->value.IsNull()) return;
    const YAML::Node& v = f->value;
    if (v.IsScalar() && !is_quoted(v) && (v.Tag() == "?" || v.Tag() == bool_tag)) {
        const std::string& s = v.Scalar();
        if (s == "true" || s == "True" || s == "TRUE") {
            out = true;
            return;
        }
        if (s == "false" || s == "False" || s == "FALSE") {
            out = false;
            return;
        }
    }
    wrong_type(f->line, f->path, "a boolean (true or false)", v);
}

// A YAML 1.2 core-schema integer: decimal with an optional sign, 0x hex or 0o octal.
// nullopt when the text is not an integer; `overflow` set when it is one but too large.
std::optional<std::int64_t> parse_yaml_int(std::string_view s, bool& overflow) {
    overflow = false;
    int base = 10;
    bool neg = false;
    if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'o')) {
        base = s[1] == 'x' ? 16 : 8;
        s.remove_prefix(2);
    } else if (!s.empty() && (s[0] == '-' || s[0] == '+')) {
        neg = s[0] == '-';
        s.remove_prefix(1);
    }
    if (s.empty()) return std::nullopt;
    for (const char c : s) {
        const bool ok = base == 16 ? std::isxdigit(static_cast<unsigned char>(c)) != 0
                                   : (c >= '0' && c < static_cast<char>('0' + std::min(base, 10)));
        if (!ok) return std::nullopt;
    }
    std::uint64_t magnitude = 0;
    const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), magnitude, base);
    constexpr auto max = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
    if (ec == std::errc::result_out_of_range || magnitude > max + (neg ? 1 : 0)) {
        overflow = true;
        return std::nullopt;
    }
    (void)ptr;
    if (neg) return static_cast<std::int64_t>(~magnitude + 1);
    return static_cast<std::int64_t>(magnitude);
}

template <typename Int>
void read_int(const mapping& m, std::string_view key, Int& out) {
    const field* f = m.get(key);
    if (f == nullptr || f->value.IsNull()) return;
    const YAML::Node& v = f->value;
    if (!v.IsScalar() || is_quoted(v) || !(v.Tag() == "?" || v.Tag() == int_tag)) {
        wrong_type(f->line, f->path, "an integer", v);
    }
    bool overflow = false;
    const auto parsed = parse_yaml_int(v.Scalar(), overflow);
    if (!parsed && !overflow) wrong_type(f->line, f->path, "an integer", v);
    if (overflow || *parsed < std::numeric_limits<Int>::min() || *parsed > std::numeric_limits<Int>::max()) {
        fail(f->line, fmt::format("{} is out of range: {}", f->path, v.Scalar()));
    }
    out = static_cast<Int>(*parsed);
}

void read(const mapping& m, std::string_view key, std::vector<std::string>& out) {
    const field* f = m.get(key);
    if (f == nullptr || f->value.IsNull()) return;
    const YAML::Node& v = f->value;
    if (!v.IsSequence()) wrong_type(f->line, f->path, "a list of strings", v);
    out.clear();
    std::size_t index = 0;
    for (const auto& item : v) {
        if (item.IsNull()) {
            out.emplace_back();
        } else if (item.IsScalar()) {
            out.push_back(item.Scalar());
        } else {
            const int line = line_of(item);
            wrong_type(line > 0 ? line : f->line, fmt::format("{}[{}]", f->path, index), "a string", item);
        }
        ++index;
    }
}

// A mapping of free names to strings (mcp_servers[].env, headers_env): any key, each once,
// each value a scalar; kept in file order.
void read(const mapping& m, std::string_view key, std::vector<std::pair<std::string, std::string>>& out) {
    const field* f = m.get(key);
    if (f == nullptr || f->value.IsNull()) return;
    const YAML::Node& v = f->value;
    if (!v.IsMap()) wrong_type(f->line, f->path, "a mapping of names to strings", v);
    out.clear();
    std::vector<int> lines;
    for (auto it = v.begin(); it != v.end(); ++it) {
        const YAML::Node name = it->first;
        const YAML::Node value = it->second;
        const int line = line_of(name) > 0 ? line_of(name) : f->line;
        if (!name.IsScalar())
            fail(line, fmt::format("{}: keys must be plain strings, got {}", f->path, describe(name)));
        const std::string child = join_path(f->path, name.Scalar());
        for (std::size_t i = 0; i < out.size(); ++i) {
            if (out[i].first == name.Scalar()) {
                fail(line,
                     fmt::format("duplicate key \"{}\" (first set on line {}); remove one of them", child, lines[i]));
            }
        }
        if (value.IsNull()) {
            out.emplace_back(name.Scalar(), std::string());
        } else if (value.IsScalar()) {
            out.emplace_back(name.Scalar(), value.Scalar());
        } else {
            wrong_type(line, child, "a string", value);
        }
        lines.push_back(line);
    }
}

void read(const mapping& m, std::string_view key, std::string_view pattern, filter& out) {
    const field* f = m.get(key);
    if (f == nullptr) return;
    const mapping fm(f->value, f->path, pattern, f->line);
    read(fm, "tools", out.tools);
    read(fm, "tags", out.tags);
}

// Calls `each(item_mapping)` for every entry of a list of mappings.
template <typename Each>
void read_list_of_mappings(const mapping& m, std::string_view key, std::string_view item_pattern, Each each) {
    const field* f = m.get(key);
    if (f == nullptr || f->value.IsNull()) return;
    if (!f->value.IsSequence()) wrong_type(f->line, f->path, "a list", f->value);
    std::size_t index = 0;
    for (const auto& item : f->value) {
        const int line = line_of(item);
        each(mapping(item, fmt::format("{}[{}]", f->path, index), item_pattern, line > 0 ? line : f->line));
        ++index;
    }
}

// ---------------------------------------------------------------------------------------
// Raw blocks as canonical JSON. Plain scalars resolve by the YAML 1.2 core schema (as the
// Go decoder does), quoted ones stay strings; keys are sorted, as Go's encoding/json
// sorts a decoded map's keys, so equal blocks give equal text.

bool is_yaml_float(std::string_view s) {
    std::size_t i = 0;
    if (i < s.size() && (s[i] == '-' || s[i] == '+')) ++i;
    std::size_t int_digits = 0;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i, ++int_digits;
    std::size_t frac_digits = 0;
    bool point = false;
    if (i < s.size() && s[i] == '.') {
        point = true;
        ++i;
        while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i, ++frac_digits;
    }
    if (int_digits + frac_digits == 0) return false;
    bool exponent = false;
    if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
        exponent = true;
        ++i;
        if (i < s.size() && (s[i] == '-' || s[i] == '+')) ++i;
        std::size_t exp_digits = 0;
        while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i, ++exp_digits;
        if (exp_digits == 0) return false;
    }
    return i == s.size() && (point || exponent);
}

std::string scalar_json(const YAML::Node& n) {
    std::string out;
    const std::string& s = n.Scalar();
    if (is_quoted(n)) {
        gocompat::append_json_string(out, s);
        return out;
    }
    if (s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL") return "null";
    if (s == "true" || s == "True" || s == "TRUE") return "true";
    if (s == "false" || s == "False" || s == "FALSE") return "false";
    bool overflow = false;
    if (const auto i = parse_yaml_int(s, overflow)) return std::to_string(*i);
    if (overflow || is_yaml_float(s)) {
        const double d = std::strtod(s.c_str(), nullptr);
        if (std::isfinite(d)) {
            gocompat::append_json_float(out, d);
            return out;
        }
    }
    gocompat::append_json_string(out, s);
    return out;
}

// Aliases make a YAML document a graph: nine nested levels of ten aliases each expand to
// a billion nodes, and an alias inside the anchor it names is a cycle. The JSON text of
// one block is capped, counted as it is produced, and so is its nesting, so such a
// document is refused at once instead of exhausting time, memory or the stack (Go's
// yaml.v3 refuses excessive aliasing and self-containing anchors too). The depth is
// Boost.JSON's default parse limit, which the backends decoding the block apply anyway.
inline constexpr std::size_t max_raw_json_bytes = std::size_t{1} << 20;
inline constexpr int max_raw_json_depth = 32;

struct json_budget {
    std::string_view block;  // the option block's path, for the error
    int line = 0;
    std::size_t used = 0;
    int depth = 0;

    void enter() {
        if (++depth > max_raw_json_depth) {
            fail(line, fmt::format("{}: the block nests more than {} levels deep; option blocks are small settings: "
                                   "check for an alias (*name) inside the anchor it names",
                                   block, max_raw_json_depth));
        }
    }
    void leave() noexcept { --depth; }

    void spend(std::size_t bytes) {
        used += bytes;
        if (used > max_raw_json_bytes) {
            fail(line, fmt::format("{}: the block expands to more than {} bytes of JSON; option blocks are small "
                                   "settings: check for aliases (*name) repeated inside it",
                                   block, max_raw_json_bytes));
        }
    }
};

void to_json(const YAML::Node& n, const std::string& path, int line, std::string& out, json_budget& budget) {
    budget.spend(1);
    switch (n.Type()) {
        case YAML::NodeType::Scalar: {
            const std::string scalar = scalar_json(n);
            budget.spend(scalar.size());
            out += scalar;
            return;
        }
        case YAML::NodeType::Sequence: {
            budget.enter();
            out += '[';
            std::size_t index = 0;
            for (const auto& item : n) {
                if (index > 0) out += ',';
                const int item_line = line_of(item);
                to_json(item, fmt::format("{}[{}]", path, index), item_line > 0 ? item_line : line, out, budget);
                ++index;
            }
            out += ']';
            budget.leave();
            return;
        }
        case YAML::NodeType::Map: {
            budget.enter();
            std::map<std::string, std::pair<std::string, int>> members;  // sorted by key bytes
            for (auto it = n.begin(); it != n.end(); ++it) {
                const YAML::Node key_node = it->first;
                const YAML::Node value_node = it->second;
                const int key_line = line_of(key_node);
                if (!key_node.IsScalar()) {
                    fail(key_line, fmt::format("{}: keys must be plain strings, got {}", path, describe(key_node)));
                }
                const std::string key = key_node.Scalar();
                const std::string child = join_path(path, key);
                if (const auto seen = members.find(key); seen != members.end()) {
                    fail(key_line, fmt::format("duplicate key \"{}\" (first set on line {}); remove one of them", child,
                                               seen->second.second));
                }
                std::string value;
                budget.spend(key.size());
                to_json(value_node, child, key_line, value, budget);
                members.emplace(key, std::make_pair(std::move(value), key_line));
            }
            out += '{';
            bool first = true;
            for (const auto& [key, member] : members) {
                if (!first) out += ',';
                first = false;
                gocompat::append_json_string(out, key);
                out += ':';
                out += member.first;
            }
            out += '}';
            budget.leave();
            return;
        }
        default: out += "null"; return;
    }
}

// An absent or null options block is "no options" (empty text) rather than the JSON
// literal null, so backends see one representation of "nothing configured".
void read_raw_json(const mapping& m, std::string_view key, std::string& out) {
    const field* f = m.get(key);
    if (f == nullptr || f->value.IsNull()) return;
    out.clear();
    json_budget budget{f->path, f->line};
    to_json(f->value, f->path, f->line, out, budget);
}

// ---------------------------------------------------------------------------------------
// Blocks

void read_limits(const mapping& m, raw_limits& out) {
    read_int(m, "max_concurrent_tools", out.max_concurrent_tools);
    read(m, "tool_timeout", out.tool_timeout);
}

void read_expose(const mapping& top, raw_config& raw) {
    const field* expose_field = top.get("expose");
    if (expose_field == nullptr) return;
    const mapping expose(expose_field->value, expose_field->path, "expose", expose_field->line);
    const field* agent_field = expose.get("agent");
    if (agent_field == nullptr) return;
    const mapping agent(agent_field->value, agent_field->path, "expose.agent", agent_field->line);

    // `mcp:` with no value is YAML null. The Go decoder most likely read that as "absent";
    // here it counts as present, because the operator clearly wrote the key to opt in.
    if (const field* f = agent.get("mcp")) {
        const mapping mcp(f->value, f->path, "expose.agent.mcp", f->line);
        raw_mcp& out = raw.mcp.emplace();
        read_int(mcp, "port", out.settings.port);
        read(mcp, "address", out.settings.address);
        read(mcp, "instructions", out.settings.instructions);
        read(mcp, "confirm_over_mcp", out.confirm_over_mcp);
        read(mcp, "builtins", out.builtins);
        read_limits(mcp, out.limits);
        read(mcp, "serve_remote_tools", out.settings.serve_remote_tools);
        read(mcp, "allowed_origins", out.settings.allowed_origins);
        read_int(mcp, "max_connections", out.settings.max_connections);
    }
    // Same presence rule as mcp, though only serve_tools enables anything.
    if (const field* f = agent.get("a2a")) {
        const mapping a2a(f->value, f->path, "expose.agent.a2a", f->line);
        raw_a2a& out = raw.a2a.emplace();
        read(a2a, "serve_tools", out.serve_tools);
        read_limits(a2a, out.limits);
        // Present even when null, as for the other blocks: the key enables the channel.
        if (const field* p = a2a.get("prompts")) {
            const mapping prompts(p->value, p->path, "expose.agent.a2a.prompts", p->line);
            raw_a2a_prompts& po = out.prompts.emplace();
            read(prompts, "elicitation", po.elicitation);
            read(prompts, "question_timeout", po.question_timeout);
            read(prompts, "accept_window", po.accept_window);
        }
    }
    raw_serve& serve = raw.serve;
    read_int(agent, "workers", serve.workers);
    read(agent, "work_dir", raw.cfg.serve.work_dir);
    read(agent, "drain_timeout", serve.drain_timeout);
    read(agent, "report_timeout", serve.report_timeout);
    if (const field* f = agent.get("queue")) {
        const mapping queue(f->value, f->path, "expose.agent.queue", f->line);
        raw_queue& out = serve.queue.emplace();
        read(queue, "stream", out.settings.stream);
        read(queue, "task_store", out.settings.task_store);
        read(queue, "consumer", out.settings.consumer);
        read(queue, "ack_wait", out.ack_wait);
        read_int(queue, "max_deliver", out.max_deliver);
        read(queue, "dead_letter", out.settings.dead_letter);
    }
    if (const field* f = agent.get("slack")) {
        const mapping slack(f->value, f->path, "expose.agent.slack", f->line);
        raw_slack& out = serve.slack.emplace();
        read(slack, "app_token_env", out.settings.app_token_env);
        read(slack, "bot_token_env", out.settings.bot_token_env);
        read(slack, "api_base_url", out.settings.api_base_url);
        read(slack, "channels", out.settings.channels);
        read(slack, "approvers", out.settings.approvers);
        read(slack, "question_timeout", out.question_timeout);
        read_int(slack, "max_admitted", out.max_admitted);
    }
    if (const field* f = agent.get("tools")) {
        const mapping tools(f->value, f->path, "expose.agent.tools", f->line);
        read(tools, "include", "expose.agent.tools.include", raw.cfg.expose_tools_include);
        read(tools, "exclude", "expose.agent.tools.exclude", raw.cfg.expose_tools_exclude);
    }
}

void read_harness(const mapping& top, raw_config& raw) {
    const field* harness_field = top.get("harness");
    if (harness_field == nullptr) return;
    const mapping harness(harness_field->value, harness_field->path, "harness", harness_field->line);
    harness_settings& out = raw.cfg.harness;

    if (const field* f = harness.get("human_in_the_loop")) {
        const mapping hitl(f->value, f->path, "harness.human_in_the_loop", f->line);
        read(hitl, "enabled", out.human_in_the_loop_enabled);
    }
    read(harness, "confirm_tags", out.confirm_tags);
    read(harness, "tool_timeout", raw.harness_tool_timeout);
    read(harness, "no_tui", out.no_tui);
    read(harness, "no_bell", out.no_bell);
    if (const field* f = harness.get("memory")) {
        const mapping memory(f->value, f->path, "harness.memory", f->line);
        read(memory, "enabled", out.memory.enabled);
        read(memory, "backend", out.memory.backend);
        read(memory, "no_index", out.memory.no_index);
        read_raw_json(memory, "options", out.memory.options_json);
    }
    if (const field* f = harness.get("sessions")) {
        const mapping sessions(f->value, f->path, "harness.sessions", f->line);
        read(sessions, "backend", out.sessions.backend);
        read_raw_json(sessions, "options", out.sessions.options_json);
    }
    if (const field* f = harness.get("knowledge")) {
        const mapping knowledge(f->value, f->path, "harness.knowledge", f->line);
        read(knowledge, "enabled", out.knowledge.enabled);
        read(knowledge, "paths", out.knowledge.paths);
        read(knowledge, "directory", out.knowledge.directory);
        read_int(knowledge, "top_k", out.knowledge.top_k);
        read_int(knowledge, "max_injected_tokens", out.knowledge.max_injected_tokens);
        // Present even when null, as for the expose blocks: the key turns the tier on.
        if (const field* e = knowledge.get("embeddings")) {
            const mapping embeddings(e->value, e->path, "harness.knowledge.embeddings", e->line);
            embeddings_settings& emb = out.knowledge.embeddings.emplace();
            read(embeddings, "base_url", emb.base_url);
            read(embeddings, "model", emb.model);
            read(embeddings, "api_key_env", emb.api_key_env);
            read(embeddings, "query_prefix", emb.query_prefix);
            read(embeddings, "document_prefix", emb.document_prefix);
            std::string& timeout = raw.embeddings_timeout.emplace();
            read(embeddings, "timeout", timeout);
        }
    }
}

void read_llm(const mapping& top, raw_config& raw) {
    const field* llm_field = top.get("llm");
    if (llm_field == nullptr) return;
    const mapping llm(llm_field->value, llm_field->path, "llm", llm_field->line);
    llm_settings& out = raw.cfg.llm;
    read(llm, "model", out.model);
    read(llm, "provider", out.provider);
    read(llm, "base_url", out.base_url);
    read(llm, "api_key_env", out.api_key_env);
    read_int(llm, "max_retries", raw.llm_max_retries);
    read(llm, "insecure_http", out.insecure_http);
    if (const field* f = llm.get("budget")) {
        const mapping budget(f->value, f->path, "llm.budget", f->line);
        read_int(budget, "max_tokens", out.budget.max_tokens);
        read_int(budget, "max_output_tokens", out.budget.max_output_tokens);
        read_int(budget, "max_iterations", out.budget.max_iterations);
        read(budget, "call_timeout", raw.call_timeout);
    }
    if (const field* f = llm.get("thinking")) {
        const mapping thinking(f->value, f->path, "llm.thinking", f->line);
        read(thinking, "enabled", out.thinking_enabled);
    }
    read(llm, "no_prompt_cache", out.no_prompt_cache);
    read(llm, "no_tool_search", out.no_tool_search);
}

}  // namespace

raw_config decode(std::string_view yaml_text) {
    YAML::Node root;
    try {
        root = YAML::Load(std::string(yaml_text));
    } catch (const YAML::DeepRecursion& e) {
        // yaml-cpp's own text for its depth bound is "bad file".
        fail(e.mark.is_null() ? 0 : e.mark.line + 1,
             fmt::format("the document nests deeper than {} levels, the YAML reader's bound; a configuration "
                         "needs a handful",
                         e.depth()));
    } catch (const YAML::Exception& e) {
        fail(e.mark.is_null() ? 0 : e.mark.line + 1, e.msg);
    }

    raw_config raw;
    try {
        const mapping top(root, "", "", line_of(root) > 0 ? line_of(root) : 1);
        config& c = raw.cfg;
        read(top, "identity", c.identity);
        read(top, "application_path", c.application_path);
        read(top, "nats_context", c.nats_context);
        read(top, "system_prompt", c.system_prompt);
        read(top, "include", "include", c.include);
        read(top, "exclude", "exclude", c.exclude);
        read(top, "global_flags", c.global_flags);
        read_list_of_mappings(top, "remote_agents", "remote_agents[]", [&](const mapping& m) {
            remote_agent& agent = c.remote_agents.emplace_back();
            read(m, "name", agent.name);
            read(m, "alias", agent.alias);
        });
        read_list_of_mappings(top, "remote_tools", "remote_tools[]", [&](const mapping& m) {
            remote_host& host = c.remote_tools.emplace_back();
            read(m, "name", host.name);
            read(m, "alias", host.alias);
            read(m, "include", "remote_tools[].include", host.include);
            read(m, "exclude", "remote_tools[].exclude", host.exclude);
        });
        read_list_of_mappings(top, "mcp_servers", "mcp_servers[]", [&](const mapping& m) {
            raw_mcp_server& entry = raw.mcp_servers.emplace_back();
            mcp_server& server = entry.settings;
            read(m, "name", server.name);
            read(m, "command", server.command);
            read(m, "args", server.args);
            read(m, "work_dir", server.work_dir);
            read(m, "env", server.env);
            read(m, "env_passthrough", server.env_passthrough);
            read(m, "url", server.url);
            read(m, "headers_env", server.headers_env);
            read(m, "alias", server.alias);
            read(m, "include", "mcp_servers[].include", server.include);
            read(m, "exclude", "mcp_servers[].exclude", server.exclude);
            read(m, "confirm", server.confirm);
            read(m, "tool_timeout", entry.tool_timeout);
            read(m, "startup_timeout", entry.startup_timeout);
        });
        read_expose(top, raw);
        read_harness(top, raw);
        read_llm(top, raw);
    } catch (const YAML::Exception& e) {
        // Not expected once the document has loaded; kept so no yaml-cpp type escapes.
        fail(e.mark.is_null() ? 0 : e.mark.line + 1, e.msg);
    }
    return raw;
}

}  // namespace fiskai::config::detail
