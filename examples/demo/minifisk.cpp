#include "minifisk.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <limits>
#include <sstream>
#include <string_view>

namespace json = boost::json;

namespace minifisk {

const char* const kLLMExtraInfo =
    "This application supports LLM friendly help output. Pass --help-llm for Markdown formatted "
    "help or set the environment variable LLMFORMAT=1 to switch all help output to LLM friendly "
    "format.";

const char* const kDurationPattern = "^(0|[-+]?(\\d+(\\.\\d+)?(ns|us|\xc2\xb5s|ms|s|m|h))+)$";

namespace {

bool is_bool(Kind k) { return k == Kind::Bool || k == Kind::UnNegatableBool; }

json::array to_array(const std::vector<std::string>& values) {
    json::array out;
    for (const auto& v : values) out.emplace_back(v);
    return out;
}

// --- schema ------------------------------------------------------------------------

// One property of a command schema. Keys are written in sorted order, as Go's
// encoding of map[string]any does: description, enum, items, pattern, type.
json::object property_schema(const std::string& help, Kind kind, bool cumulative,
                             const std::vector<std::string>& options) {
    json::object p;
    p["description"] = help;
    if (cumulative) {
        // List values are generic accumulators in fisk, so their element type is lost
        // (string); Enums keep their choices on the items.
        json::object items;
        if (kind == Kind::Enum) items["enum"] = to_array(options);
        items["type"] = "string";
        p["items"] = std::move(items);
        p["type"] = "array";
        return p;
    }
    switch (kind) {
        case Kind::Bool:
        case Kind::UnNegatableBool: p["type"] = "boolean"; break;
        case Kind::Int: p["type"] = "integer"; break;
        case Kind::Duration:
            p["pattern"] = kDurationPattern;
            p["type"] = "string";
            break;
        case Kind::Enum:
            p["enum"] = to_array(options);
            p["type"] = "string";
            break;
        case Kind::String: p["type"] = "string"; break;
    }
    return p;
}

// --- introspection models ------------------------------------------------------------

json::object flag_model(const FlagClause& f) {
    json::object o;
    o["name"] = f.name;
    o["help"] = f.help;
    if (f.short_name != 0) o["short"] = static_cast<int>(static_cast<unsigned char>(f.short_name));
    if (!f.defaults.empty()) o["default"] = to_array(f.defaults);
    if (!f.envar.empty()) o["envar"] = f.envar;
    if (!f.place_holder.empty()) o["place_holder"] = f.place_holder;
    if (f.required) o["required"] = true;
    if (f.hidden) o["hidden"] = true;
    o["boolean"] = is_bool(f.kind);
    if (f.kind == Kind::Bool) o["negatable"] = true;
    o["cumulative"] = f.cumulative;
    // Explicit hint options replace the built-in ones; otherwise an enum lists its options.
    const auto& completions = !f.completions.empty() ? f.completions : f.options;
    if (!completions.empty()) o["completions"] = to_array(completions);
    return o;
}

json::object arg_model(const ArgClause& a) {
    json::object o;
    o["name"] = a.name;
    o["help"] = a.help;
    if (!a.defaults.empty()) o["default"] = to_array(a.defaults);
    if (!a.envar.empty()) o["envar"] = a.envar;
    if (!a.place_holder.empty()) o["place_holder"] = a.place_holder;
    if (a.required) o["required"] = true;
    if (a.hidden) o["hidden"] = true;
    o["cumulative"] = a.cumulative;
    return o;
}

json::object command_model(const CommandClause& c) {
    json::object o;
    o["name"] = c.name;
    if (!c.aliases.empty()) o["aliases"] = to_array(c.aliases);
    o["help"] = c.help;
    if (!c.help_long.empty()) o["help_long"] = c.help_long;
    if (c.hidden) o["hidden"] = true;
    if (!c.tags.empty()) o["tags"] = to_array(c.tags);
    // The demo uses no bounded integers, URLs, IPs or maps, so the full schema and the
    // Anthropic-restricted one are identical, as in fisk for these value types.
    o["schema"] = command_schema(c);
    o["restricted_schema"] = command_schema(c);
    if (!c.flags.empty()) {
        json::array flags;
        for (const auto& f : c.flags) flags.emplace_back(flag_model(f));
        o["flags"] = std::move(flags);
    }
    if (!c.args.empty()) {
        json::array args;
        for (const auto& a : c.args) args.emplace_back(arg_model(a));
        o["args"] = std::move(args);
    }
    if (!c.commands.empty()) {
        json::array cmds;
        for (const auto& sub : c.commands) cmds.emplace_back(command_model(sub));
        o["commands"] = std::move(cmds);
    }
    return o;
}

// fisk drops these app-level flags from the model.
bool framework_flag(const std::string& name) {
    return name == "help" || name == "version" || name.starts_with("help-") || name.starts_with("completion-") ||
           name.starts_with("fisk-");
}

bool framework_command(const std::string& name) { return name == "help" || name == "cheat" || name == "help_long"; }

// --- Go formatting helpers -------------------------------------------------------------

// Go's %q for the plain strings used in messages.
std::string quote(std::string_view s) {
    std::string out = "\"";
    for (char c : s) {
        switch (c) {
            case '"': out += "\\\""; break;
            case '\\': out += "\\\\"; break;
            case '\n': out += "\\n"; break;
            case '\t': out += "\\t"; break;
            case '\r': out += "\\r"; break;
            default: out += c;
        }
    }
    return out + "\"";
}

// fisk's Int() parses with strconv.ParseFloat and truncates, so "3", "3.0", "1e3" and
// "-2.7" are all accepted. Infinities and NaN are refused here.
std::optional<std::int64_t> parse_int(const std::string& text) {
    if (text.empty()) return std::nullopt;
    std::string_view s = text;
    if (s.front() == '+' && s.size() > 1 && s[1] != '-' && s[1] != '+') s.remove_prefix(1);
    std::int64_t v = 0;
    if (auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v, 10);
        ec == std::errc() && ptr == s.data() + s.size())
        return v;
    double d = 0;
    auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), d, std::chars_format::general);
    if (ec != std::errc() || ptr != s.data() + s.size() || !std::isfinite(d)) return std::nullopt;
    if (d >= 9223372036854775807.0) return std::numeric_limits<std::int64_t>::max();
    if (d <= -9223372036854775808.0) return std::numeric_limits<std::int64_t>::min();
    return static_cast<std::int64_t>(d);
}

// Why `value` is not valid for `kind`, or empty when it is.
std::string check_value(Kind kind, const std::vector<std::string>& options, const std::string& value) {
    switch (kind) {
        case Kind::Bool:
        case Kind::UnNegatableBool:
            if (!parse_bool(value)) return "strconv.ParseBool: parsing " + quote(value) + ": invalid syntax";
            return {};
        case Kind::Int:
            if (!parse_int(value)) return "strconv.ParseFloat: parsing " + quote(value) + ": invalid syntax";
            return {};
        case Kind::Duration:
            if (!parse_duration(value)) return "time: invalid duration " + quote(value);
            return {};
        case Kind::Enum:
            if (std::find(options.begin(), options.end(), value) == options.end()) {
                std::string joined;
                for (const auto& o : options) joined += (joined.empty() ? "" : ",") + o;
                return "enum value must be one of " + joined + ", got '" + value + "'";
            }
            return {};
        case Kind::String: return {};
    }
    return {};
}

}  // namespace

// --- Go duration helpers ---------------------------------------------------------------

std::optional<bool> parse_bool(const std::string& text) {
    if (text == "1" || text == "t" || text == "T" || text == "TRUE" || text == "true" || text == "True") return true;
    if (text == "0" || text == "f" || text == "F" || text == "FALSE" || text == "false" || text == "False")
        return false;
    return std::nullopt;
}

std::optional<std::chrono::nanoseconds> parse_duration(const std::string& text) {
    // [-+]?([0-9]*(\.[0-9]*)?[a-z]+)+ ; a lone "0" is allowed without a unit.
    static const std::vector<std::pair<std::string_view, std::uint64_t>> units = {
        {"ns", 1ULL},           {"us", 1000ULL},      {"\xc2\xb5s", 1000ULL},  // U+00B5 micro sign
        {"\xce\xbcs", 1000ULL},                                                // U+03BC Greek mu
        {"ms", 1000000ULL},     {"s", 1000000000ULL}, {"m", 60ULL * 1000000000ULL}, {"h", 3600ULL * 1000000000ULL},
    };
    constexpr std::uint64_t limit = 1ULL << 63;
    std::string_view s = text;
    bool neg = false;
    if (!s.empty() && (s.front() == '-' || s.front() == '+')) {
        neg = s.front() == '-';
        s.remove_prefix(1);
    }
    if (s == "0") return std::chrono::nanoseconds(0);
    if (s.empty()) return std::nullopt;
    auto is_digit = [](char c) { return c >= '0' && c <= '9'; };
    std::uint64_t total = 0;
    while (!s.empty()) {
        if (!(s.front() == '.' || is_digit(s.front()))) return std::nullopt;
        std::uint64_t v = 0;
        bool pre = false;
        while (!s.empty() && is_digit(s.front())) {
            if (v > (limit - 1) / 10) return std::nullopt;  // overflow
            v = v * 10 + static_cast<std::uint64_t>(s.front() - '0');
            if (v > limit) return std::nullopt;
            s.remove_prefix(1);
            pre = true;
        }
        std::uint64_t frac = 0;
        double scale = 1.0;
        bool post = false;
        if (!s.empty() && s.front() == '.') {
            s.remove_prefix(1);
            bool overflow = false;
            while (!s.empty() && is_digit(s.front())) {
                if (!overflow) {
                    if (frac > (std::numeric_limits<std::uint64_t>::max() >> 1) / 10) {
                        overflow = true;  // drop further digits, as Go does
                    } else {
                        frac = frac * 10 + static_cast<std::uint64_t>(s.front() - '0');
                        scale *= 10;
                    }
                }
                s.remove_prefix(1);
                post = true;
            }
        }
        if (!pre && !post) return std::nullopt;
        std::size_t i = 0;
        while (i < s.size() && s[i] != '.' && !is_digit(s[i])) ++i;
        if (i == 0) return std::nullopt;  // missing unit
        std::string_view unit_text = s.substr(0, i);
        s.remove_prefix(i);
        auto it = std::find_if(units.begin(), units.end(), [&](const auto& u) { return u.first == unit_text; });
        if (it == units.end()) return std::nullopt;  // unknown unit
        const std::uint64_t unit = it->second;
        if (v > limit / unit) return std::nullopt;
        v *= unit;
        if (frac > 0) {
            v += static_cast<std::uint64_t>(static_cast<double>(frac) * (static_cast<double>(unit) / scale));
            if (v > limit) return std::nullopt;
        }
        total += v;
        if (total > limit) return std::nullopt;
    }
    if (neg) {
        if (total == limit) return std::chrono::nanoseconds(std::numeric_limits<std::int64_t>::min());
        return std::chrono::nanoseconds(-static_cast<std::int64_t>(total));
    }
    if (total > limit - 1) return std::nullopt;
    return std::chrono::nanoseconds(static_cast<std::int64_t>(total));
}

std::string format_duration(std::chrono::nanoseconds d) {
    const std::int64_t n = d.count();
    const bool neg = n < 0;
    std::uint64_t u = neg ? 0 - static_cast<std::uint64_t>(n) : static_cast<std::uint64_t>(n);
    // The fraction of v / 10^prec with trailing zeros (and a bare point) dropped.
    auto frac = [](std::uint64_t& v, int prec) {
        std::string digits;
        bool print = false;
        for (int i = 0; i < prec; ++i) {
            const auto digit = static_cast<char>('0' + v % 10);
            print = print || digit != '0';
            if (print) digits.insert(digits.begin(), digit);
            v /= 10;
        }
        return print ? "." + digits : std::string();
    };
    std::string out;
    if (u < 1000000000ULL) {
        if (u == 0) return "0s";
        std::string unit;
        int prec = 0;
        if (u < 1000ULL) {
            unit = "ns";
        } else if (u < 1000000ULL) {
            unit = "\xc2\xb5s";
            prec = 3;
        } else {
            unit = "ms";
            prec = 6;
        }
        const std::string f = frac(u, prec);
        out = std::to_string(u) + f + unit;
    } else {
        const std::string f = frac(u, 9);
        out = std::to_string(u % 60) + f + "s";
        u /= 60;
        if (u > 0) {
            out = std::to_string(u % 60) + "m" + out;
            u /= 60;
            if (u > 0) out = std::to_string(u) + "h" + out;
        }
    }
    return neg ? "-" + out : out;
}

// --- introspection ---------------------------------------------------------------------

json::object command_schema(const CommandClause& cmd) {
    // Args first, then flags; a flag overwrites an arg of the same name. std::map gives
    // the byte-sorted key order of Go's map encoding.
    std::map<std::string, json::object> props;
    json::array required;
    for (const auto& a : cmd.args) {
        if (a.hidden) continue;
        props[a.name] = property_schema(a.help, a.kind, a.cumulative, a.options);
        if (a.required) required.emplace_back(a.name);
    }
    for (const auto& f : cmd.flags) {
        if (f.hidden) continue;
        props[f.name] = property_schema(f.help, f.kind, f.cumulative, f.options);
        if (f.required) required.emplace_back(f.name);
    }
    json::object properties;
    for (auto& [name, p] : props) properties[name] = std::move(p);

    json::object s;
    s["additionalProperties"] = false;
    s["properties"] = std::move(properties);
    if (!required.empty()) s["required"] = std::move(required);
    s["type"] = "object";
    return s;
}

json::object introspect(const Application& app) {
    json::object o;
    o["name"] = app.name;
    o["help"] = app.help;
    if (!app.version.empty()) o["version"] = app.version;
    if (!app.author.empty()) o["author"] = app.author;
    o["cheat_tags"] = json::array{json::value(app.name)};
    o["llm_extra_info"] = kLLMExtraInfo;
    json::array cmds;
    for (const auto& c : app.commands) {
        if (framework_command(c.name)) continue;
        cmds.emplace_back(command_model(c));
    }
    if (!cmds.empty()) o["commands"] = std::move(cmds);
    json::array flags;
    for (const auto& f : app.flags) {
        if (framework_flag(f.name)) continue;
        flags.emplace_back(flag_model(f));
    }
    if (!flags.empty()) o["flags"] = std::move(flags);
    return o;
}

// --- Context -------------------------------------------------------------------------

std::string Context::full_command() const {
    std::string out;
    for (const auto* c : path_) out += (out.empty() ? "" : " ") + c->name;
    return out;
}

const FlagClause& Context::find_flag(const std::string& name) const {
    for (auto it = path_.rbegin(); it != path_.rend(); ++it)
        for (const auto& f : (*it)->flags)
            if (f.name == name) return f;
    for (const auto& f : app_->flags)
        if (f.name == name) return f;
    throw std::logic_error("no flag named " + name + " in scope of \"" + full_command() + "\"");
}

const ArgClause& Context::find_arg(const std::string& name) const {
    if (!path_.empty())
        for (const auto& a : path_.back()->args)
            if (a.name == name) return a;
    throw std::logic_error("no argument named " + name + " on \"" + full_command() + "\"");
}

const std::vector<std::string>& Context::flag_values(const std::string& name) const {
    static const std::vector<std::string> none;
    auto it = flag_values_.find(&find_flag(name));
    return it == flag_values_.end() ? none : it->second;
}

const std::vector<std::string>& Context::arg_values(const std::string& name) const {
    static const std::vector<std::string> none;
    auto it = arg_values_.find(&find_arg(name));
    return it == arg_values_.end() ? none : it->second;
}

bool Context::is_set(const std::string& flag) const {
    auto it = flag_given_.find(&find_flag(flag));
    return it != flag_given_.end() && it->second;
}

bool Context::flag_bool(const std::string& flag) const {
    const auto& v = flag_values(flag);
    return !v.empty() && parse_bool(v.back()).value_or(false);
}

std::string Context::flag_string(const std::string& flag) const {
    const auto& v = flag_values(flag);
    return v.empty() ? std::string() : v.back();
}

std::int64_t Context::flag_int(const std::string& flag) const {
    const auto& v = flag_values(flag);
    return v.empty() ? 0 : parse_int(v.back()).value_or(0);
}

std::chrono::nanoseconds Context::flag_duration(const std::string& flag) const {
    const auto& v = flag_values(flag);
    return v.empty() ? std::chrono::nanoseconds(0) : parse_duration(v.back()).value_or(std::chrono::nanoseconds(0));
}

std::vector<std::string> Context::flag_strings(const std::string& flag) const { return flag_values(flag); }

bool Context::arg_set(const std::string& arg) const { return !arg_values(arg).empty(); }

std::string Context::arg_string(const std::string& arg) const {
    const auto& v = arg_values(arg);
    return v.empty() ? std::string() : v.front();
}

std::chrono::nanoseconds Context::arg_duration(const std::string& arg) const {
    return parse_duration(arg_string(arg)).value_or(std::chrono::nanoseconds(0));
}

std::int64_t Context::arg_int(const std::string& arg) const { return parse_int(arg_string(arg)).value_or(0); }

std::vector<std::string> Context::arg_strings(const std::string& arg) const { return arg_values(arg); }

// --- Parser --------------------------------------------------------------------------

class Parser {
public:
    explicit Parser(const Application& app) : app_(app) { ctx_.app_ = &app; }

    // Pass 1, fisk's parse(): splits the tokens into commands, flags and arguments.
    // Throws UsageError on the first syntax error (unknown flag, missing flag value,
    // unknown command, surplus argument).
    void parse_tokens(const std::vector<std::string>& argv) {
        bool flags_done = false;
        for (std::size_t i = 0; i < argv.size(); ++i) {
            const std::string& tok = argv[i];
            if (!flags_done && tok == "--") {
                flags_done = true;
                continue;
            }
            if (!flags_done && tok.size() > 2 && tok.starts_with("--")) {
                long_flag(argv, i);
                continue;
            }
            if (!flags_done && tok.size() > 1 && tok[0] == '-' && tok[1] != '-') {
                short_flags(argv, i);
                continue;
            }
            positional(tok);
        }
    }

    // Pass 2, fisk's setValues/validateRequired: value checks in command-line order,
    // repeats, subcommand selection, environment variables and defaults, required
    // flags, then required arguments.
    void finish() {
        for (const auto& e : elements_) {
            if (e.flag != nullptr) {
                if (auto why = check_value(e.flag->kind, e.flag->options, e.value); !why.empty())
                    throw UsageError("invalid value " + quote(e.value) + " for flag --" + e.flag->name + ": " + why);
            } else {
                if (auto why = check_value(e.arg->kind, e.arg->options, e.value); !why.empty())
                    throw UsageError("invalid value " + quote(e.value) + " for argument '" + e.arg->name + "': " + why);
            }
        }
        std::map<const FlagClause*, int> seen;
        for (const auto& e : elements_) {
            if (e.flag == nullptr) continue;
            if (++seen[e.flag] > 1 && !e.flag->cumulative)
                throw UsageError("flag '" + e.flag->name + "' cannot be repeated");
        }
        if (!ctx_.path_.empty() && !ctx_.path_.back()->commands.empty())
            throw UsageError("must select a subcommand of '" + ctx_.full_command() + "'");

        for (const auto& e : elements_) {
            if (e.flag != nullptr) {
                auto& values = ctx_.flag_values_[e.flag];
                if (!e.flag->cumulative) values.clear();
                values.push_back(e.value);
                ctx_.flag_given_[e.flag] = true;
            } else {
                ctx_.arg_values_[e.arg].push_back(e.value);
            }
        }

        std::vector<const FlagClause*> scope;
        for (const auto& f : app_.flags) scope.push_back(&f);
        for (const auto* c : ctx_.path_)
            for (const auto& f : c->flags) scope.push_back(&f);

        for (const auto* f : scope) {
            if (given(f) || f->envar.empty()) continue;
            const char* env = std::getenv(f->envar.c_str());
            if (env == nullptr || *env == '\0') continue;
            std::vector<std::string> values;
            if (f->cumulative) {
                std::stringstream lines(env);
                for (std::string line; std::getline(lines, line);) values.push_back(line);
            } else {
                values.emplace_back(env);
            }
            for (const auto& v : values) {
                if (auto why = check_value(f->kind, f->options, v); !why.empty())
                    throw UsageError("invalid value " + quote(v) + " for flag --" + f->name + " (from $" + f->envar +
                                     "): " + why);
            }
            ctx_.flag_values_[f] = values;
            ctx_.flag_given_[f] = true;
        }
        std::vector<std::string> missing;
        for (const auto* f : scope)
            if (f->required && !given(f)) missing.push_back("--" + f->name);
        if (missing.size() == 1) throw UsageError("required flag " + missing.front() + " not provided");
        if (missing.size() > 1) {
            std::string joined;
            for (const auto& m : missing) joined += (joined.empty() ? "" : ", ") + m;
            throw UsageError("required flags " + joined + " not provided");
        }
        for (const auto* f : scope)
            if (!given(f) && !f->defaults.empty()) ctx_.flag_values_[f] = f->defaults;

        if (ctx_.path_.empty()) throw UsageError("command not specified");
        for (const auto& a : ctx_.path_.back()->args) {
            if (ctx_.arg_values_.contains(&a)) continue;
            if (!a.envar.empty()) {
                const char* env = std::getenv(a.envar.c_str());
                if (env != nullptr && *env != '\0') {
                    ctx_.arg_values_[&a] = {env};
                    continue;
                }
            }
            if (a.required) throw UsageError("required argument '" + a.name + "' not provided");
            if (!a.defaults.empty()) ctx_.arg_values_[&a] = a.defaults;
        }
    }

    const Context& context() const { return ctx_; }

private:
    struct Element {
        const FlagClause* flag = nullptr;
        const ArgClause* arg = nullptr;
        std::string value;
    };

    bool given(const FlagClause* f) const {
        auto it = ctx_.flag_given_.find(f);
        return it != ctx_.flag_given_.end() && it->second;
    }

    // The flags valid at this point: those of each selected command, then the app's.
    const FlagClause* lookup(const std::string& name) const {
        for (auto it = ctx_.path_.rbegin(); it != ctx_.path_.rend(); ++it)
            for (const auto& f : (*it)->flags)
                if (f.name == name) return &f;
        for (const auto& f : app_.flags)
            if (f.name == name) return &f;
        return nullptr;
    }

    const FlagClause* lookup_short(char c) const {
        for (auto it = ctx_.path_.rbegin(); it != ctx_.path_.rend(); ++it)
            for (const auto& f : (*it)->flags)
                if (f.short_name == c) return &f;
        for (const auto& f : app_.flags)
            if (f.short_name == c) return &f;
        return nullptr;
    }

    // The value of a non-boolean flag given without `=`: the next token, which must
    // not itself be a flag (fisk: "expected argument for flag").
    static std::string next_value(const std::vector<std::string>& argv, std::size_t& i, const std::string& flag_text) {
        if (i + 1 >= argv.size() || (argv[i + 1].size() > 1 && argv[i + 1][0] == '-'))
            throw UsageError("expected argument for flag '" + flag_text + "'");
        return argv[++i];
    }

    void long_flag(const std::vector<std::string>& argv, std::size_t& i) {
        std::string body = argv[i].substr(2);
        std::optional<std::string> value;
        if (auto eq = body.find('='); eq != std::string::npos) {
            value = body.substr(eq + 1);
            body.resize(eq);
        }
        const FlagClause* f = lookup(body);
        bool invert = false;
        if (f == nullptr && body.starts_with("no-")) {
            f = lookup(body.substr(3));
            if (f != nullptr && f->kind == Kind::Bool) {
                invert = true;
            } else {
                f = nullptr;
            }
        }
        if (f == nullptr) throw UsageError("unknown long flag '--" + body + "'");
        if (is_bool(f->kind)) {
            // `--flag=<bool>` is accepted as a convenience (fisk itself would treat the
            // text after `=` as a positional argument).
            bool v = true;
            if (value) {
                auto b = parse_bool(*value);
                if (!b)
                    throw UsageError("invalid value " + quote(*value) + " for flag --" + f->name +
                                     ": strconv.ParseBool: parsing " + quote(*value) + ": invalid syntax");
                v = *b;
            }
            elements_.push_back({f, nullptr, (v != invert) ? "true" : "false"});
            return;
        }
        elements_.push_back({f, nullptr, value ? *value : next_value(argv, i, "--" + body)});
    }

    void short_flags(const std::vector<std::string>& argv, std::size_t& i) {
        const std::string tok = argv[i];
        for (std::size_t j = 1; j < tok.size(); ++j) {
            const char c = tok[j];
            const FlagClause* f = lookup_short(c);
            if (f == nullptr) throw UsageError(std::string("unknown short flag '-") + c + "'");
            if (is_bool(f->kind)) {
                elements_.push_back({f, nullptr, "true"});
                continue;
            }
            const std::string rest = tok.substr(j + 1);
            elements_.push_back({f, nullptr, !rest.empty() ? rest : next_value(argv, i, std::string("-") + c)});
            return;
        }
    }

    void positional(const std::string& tok) {
        const auto& subs = ctx_.path_.empty() ? app_.commands : ctx_.path_.back()->commands;
        if (!subs.empty()) {
            for (const auto& c : subs) {
                if (c.name == tok || std::find(c.aliases.begin(), c.aliases.end(), tok) != c.aliases.end()) {
                    ctx_.path_.push_back(&c);
                    next_arg_ = 0;
                    return;
                }
            }
            throw UsageError("expected command but got " + quote(tok));
        }
        if (ctx_.path_.empty() || next_arg_ >= ctx_.path_.back()->args.size())
            throw UsageError("unexpected argument " + tok);
        const ArgClause& a = ctx_.path_.back()->args[next_arg_];
        elements_.push_back({nullptr, &a, tok});
        if (!a.cumulative) ++next_arg_;
    }

    const Application& app_;
    Context ctx_;
    std::vector<Element> elements_;
    std::size_t next_arg_ = 0;
};

// --- usage -----------------------------------------------------------------------------

namespace {

std::string flag_usage(const FlagClause& f) {
    std::string s = f.short_name != 0 ? std::string("-") + f.short_name + ", " : std::string("    ");
    if (f.kind == Kind::Bool) {
        s += "--[no-]" + f.name;
    } else if (f.kind == Kind::UnNegatableBool) {
        s += "--" + f.name;
    } else {
        std::string ph = f.place_holder;
        if (ph.empty() && !f.defaults.empty()) ph = f.defaults.front();
        if (ph.empty()) {
            ph = f.name;
            std::transform(ph.begin(), ph.end(), ph.begin(),
                           [](unsigned char c) { return c == '-' ? '_' : static_cast<char>(std::toupper(c)); });
        }
        s += "--" + f.name + "=" + ph;
    }
    if (f.cumulative) s += " ...";
    return s;
}

std::string arg_usage(const ArgClause& a) {
    std::string s = "<" + a.name + ">";
    if (a.cumulative) s += "...";
    return a.required ? s : "[" + s + "]";
}

std::string command_line_usage(const std::vector<const CommandClause*>& path) {
    std::string s;
    for (const auto* c : path) s += (s.empty() ? "" : " ") + c->name;
    const CommandClause& leaf = *path.back();
    if (!leaf.commands.empty()) return s + " <command> [<args> ...]";
    bool any_optional = false;
    std::string required_flags;
    for (const auto& f : leaf.flags) {
        if (f.required) {
            required_flags += " " + flag_usage(f).substr(4);
        } else if (!f.hidden) {
            any_optional = true;
        }
    }
    if (any_optional) s += " [<flags>]";
    s += required_flags;
    for (const auto& a : leaf.args)
        if (!a.hidden) s += " " + arg_usage(a);
    return s;
}

void table(std::ostringstream& out, const std::vector<std::pair<std::string, std::string>>& rows) {
    std::size_t width = 0;
    for (const auto& r : rows) width = std::max(width, r.first.size());
    for (const auto& [left, right] : rows)
        out << "  " << left << std::string(width - left.size() + 2, ' ') << right << "\n";
}

void leaves(const CommandClause& c, std::vector<const CommandClause*>& path,
            std::vector<std::pair<std::string, std::string>>& out) {
    if (c.hidden) return;
    path.push_back(&c);
    if (c.commands.empty()) {
        out.emplace_back(command_line_usage(path), c.help);
    } else {
        for (const auto& sub : c.commands) leaves(sub, path, out);
    }
    path.pop_back();
}

}  // namespace

std::string usage(const Application& app, const std::vector<const CommandClause*>& path) {
    std::ostringstream out;
    if (path.empty()) {
        out << "usage: " << app.name << " [<flags>] <command> [<args> ...]\n\n" << app.help << "\n";
    } else {
        out << "usage: " << app.name << " " << command_line_usage(path) << "\n\n" << path.back()->help << "\n";
        if (!path.back()->help_long.empty()) out << "\n" << path.back()->help_long << "\n";
    }

    std::vector<std::pair<std::string, std::string>> flags = {
        {"    --help", "Show context-sensitive help"},
        {"    --version", "Show application version."},
    };
    auto add_flags = [&](const std::deque<FlagClause>& list) {
        for (const auto& f : list) {
            if (f.hidden) continue;
            std::string help = f.help;
            if (!f.envar.empty()) help += " ($" + f.envar + ")";
            flags.emplace_back(flag_usage(f), help);
        }
    };
    add_flags(app.flags);
    for (const auto* c : path) add_flags(c->flags);
    out << "\nFlags:\n";
    table(out, flags);

    if (!path.empty() && !path.back()->args.empty()) {
        std::vector<std::pair<std::string, std::string>> args;
        for (const auto& a : path.back()->args)
            if (!a.hidden) args.emplace_back(arg_usage(a), a.help);
        out << "\nArgs:\n";
        table(out, args);
    }

    const auto& subs = path.empty() ? app.commands : path.back()->commands;
    if (!subs.empty()) {
        std::vector<std::pair<std::string, std::string>> rows;
        std::vector<const CommandClause*> walk = path;
        for (const auto& c : subs) leaves(c, walk, rows);
        out << (path.empty() ? "\nCommands:\n" : "\nSubcommands:\n");
        table(out, rows);
    }
    return out.str();
}

int fatal(const Application& app, const std::string& message, int code) {
    std::cout.flush();
    std::cerr << app.name << ": error: " << message << "\n";
    std::cerr.flush();
    return code;
}

// --- run ---------------------------------------------------------------------------------

int run(const Application& app, const std::vector<std::string>& argv) {
    // Framework flags, recognised before a `--` terminator and stripped so the parser
    // does not see them. Like fisk, --help and --version write to stderr and
    // --help-long to stdout, all with exit status 0.
    bool help = false;
    bool help_long = false;
    bool version = false;
    std::vector<std::string> tokens;
    bool after_dashes = false;
    for (const auto& a : argv) {
        after_dashes = after_dashes || a == "--";
        if (!after_dashes) {
            if (a == "--help") {
                help = true;
                continue;
            }
            if (a == "--help-long") {
                help_long = true;
                continue;
            }
            if (a == "--version") {
                version = true;
                continue;
            }
            if (a == "--fisk-introspect") continue;
        }
        tokens.push_back(a);
    }
    // `help [<command>...]`, fisk's help command.
    if (!tokens.empty() && tokens.front() == "help") {
        tokens.erase(tokens.begin());
        help = true;
    }
    if (version) {
        std::cerr << app.version << "\n";
        return 0;
    }

    Parser parser(app);
    try {
        parser.parse_tokens(tokens);
        if (help || help_long) {
            (help_long ? std::cout : std::cerr) << usage(app, parser.context().path());
            return 0;
        }
        parser.finish();
    } catch (const UsageError& e) {
        if (std::string_view(e.what()) == "command not specified") std::cerr << usage(app, {}) << "\n";
        return fatal(app, std::string(e.what()) + ", try --help");
    }
    const Context& ctx = parser.context();
    const CommandClause* leaf = ctx.path().back();
    if (!leaf->action) return fatal(app, "command " + quote(ctx.full_command()) + " is not implemented");
    const int rc = leaf->action(ctx);
    std::cout.flush();
    return rc;
}

}  // namespace minifisk
