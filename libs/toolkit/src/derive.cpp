#include <fiskai/toolkit/derive.hpp>
#include <fiskai/gocompat/quote.hpp>

#include <boost/json/array.hpp>
#include <boost/json/value.hpp>

#include <fmt/format.h>
#include <re2/re2.h>

#include <algorithm>
#include <map>
#include <memory>
#include <set>

namespace fiskai::toolkit {
namespace {

namespace json = boost::json;

constexpr std::string_view tag_deny = "ai:deny";
constexpr std::string_view tag_confirm = "ai:confirm";

// Flags the fisk framework itself defines; they can never be handed to a model.
const std::set<std::string, std::less<>> framework_global_flags = {"help",
                                                                   "help-long",
                                                                   "help-man",
                                                                   "help-llm",
                                                                   "help-compact",
                                                                   "completion-bash",
                                                                   "completion-script-bash",
                                                                   "completion-script-zsh",
                                                                   "fisk-introspect",
                                                                   "version"};

std::string join(const std::vector<std::string>& parts, std::string_view sep) {
    std::string out;
    for (std::size_t i = 0; i < parts.size(); ++i) {
        if (i) out += sep;
        out += parts[i];
    }
    return out;
}

bool contains(const std::vector<std::string>& v, std::string_view s) {
    return std::find(v.begin(), v.end(), s) != v.end();
}

// A compiled filter: RE2 searches (unanchored, as Go's regexp.MatchString) plus exact tags.
class compiled_filter {
public:
    explicit compiled_filter(const tool_filter& f) : tags_(f.tags) {
        for (const auto& pattern : f.tools) {
            auto re = std::make_unique<re2::RE2>(pattern, re2::RE2::Quiet);
            if (!re->ok()) {
                throw derive_error(
                    fmt::format("invalid tool filter pattern {}: {}", gocompat::quote(pattern), re->error()));
            }
            patterns_.push_back(std::move(re));
        }
    }

    [[nodiscard]] bool matches(const command_spec& t) const {
        for (const auto& re : patterns_) {
            if (re2::RE2::PartialMatch(t.name, *re)) return true;
        }
        for (const auto& tag : tags_) {
            if (tag.empty() ? t.tags.empty() : contains(t.tags, tag)) return true;
        }
        return false;
    }

private:
    std::vector<std::unique_ptr<re2::RE2>> patterns_;
    std::vector<std::string> tags_;
};

// Applies one filter pass in place, recording why each removed tool went.
void filter_pass(std::vector<command_spec>& tools, std::vector<dropped_command>& dropped, const tool_filter& f,
                 bool include, std::string_view where) {
    if (f.empty()) return;
    const compiled_filter cf(f);
    std::vector<command_spec> kept;
    for (auto& t : tools) {
        const bool match = cf.matches(t);
        if (match == include) {
            kept.push_back(std::move(t));
        } else {
            dropped.push_back(
                {t.title, include ? fmt::format("not selected by {}", where) : fmt::format("removed by {}", where)});
        }
    }
    tools = std::move(kept);
}

// The schema of a global flag, built from the flag model alone (its real type is not in
// the document): boolean or string, wrapped in an array when repeatable. Richer types
// degrade to string, which is fine because the binary re-parses the value.
json::object global_flag_schema(const fisk_flag& f) {
    json::object prop;
    prop["description"] = f.help.empty() ? std::string("Global flag") : "Global flag: " + f.help;
    const char* type = f.boolean ? "boolean" : "string";
    if (!f.boolean && !f.completions.empty() && !f.cumulative) {
        json::array options;
        for (const auto& c : f.completions) options.emplace_back(c);
        prop["enum"] = std::move(options);
    }
    if (f.cumulative) {
        json::object items;
        items["type"] = type;
        prop["items"] = std::move(items);
        prop["type"] = "array";
    } else {
        prop["type"] = type;
    }
    return prop;
}

json::object merge_globals(const json::object& schema, const std::vector<fisk_flag>& globals) {
    if (globals.empty()) return schema;
    json::object merged = schema;
    json::object props;
    if (auto it = merged.find("properties"); it != merged.end() && it->value().is_object())
        props = it->value().get_object();
    json::array required;
    if (auto it = merged.find("required"); it != merged.end() && it->value().is_array())
        required = it->value().get_array();
    for (const auto& g : globals) {
        if (props.contains(g.name)) continue;
        props[g.name] = global_flag_schema(g);
        if (g.required && g.defaults.empty()) required.emplace_back(g.name);
    }
    // fisk writes schema keys sorted; keep the merged properties sorted too so the schema
    // a client sees does not depend on merge order.
    std::vector<std::pair<std::string, json::value>> sorted;
    for (auto& kv : props) sorted.emplace_back(std::string(kv.key()), kv.value());
    std::sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    json::object sorted_props;
    for (auto& [k, v] : sorted) sorted_props[k] = std::move(v);
    merged["properties"] = std::move(sorted_props);
    if (!required.empty()) {
        merged["required"] = std::move(required);
    } else {
        merged.erase("required");
    }
    return merged;
}

std::vector<fisk_flag> resolve_global_flags(const fisk_application& app, const std::vector<std::string>& allowlist) {
    std::vector<fisk_flag> exposed;
    std::set<std::string> seen;
    for (const auto& name : allowlist) {
        auto it = std::find_if(app.flags.begin(), app.flags.end(), [&](const fisk_flag& f) { return f.name == name; });
        if (it == app.flags.end()) {
            throw derive_error(fmt::format(
                "global_flags entry {} matches no global flag of application {}; run `fisk-ai-mcp info` to list the "
                "exposable global flags",
                gocompat::quote(name), gocompat::quote(app.name)));
        }
        if (it->hidden || framework_global_flags.contains(name)) {
            throw derive_error(
                fmt::format("global_flags entry {} is a hidden or framework flag and cannot be exposed "
                            "to the model; only application-defined global flags can be exposed",
                            gocompat::quote(name)));
        }
        if (seen.insert(name).second) exposed.push_back(*it);
    }
    // A required global must be supplied on every call, so it is always exposed.
    for (const auto& f : app.flags) {
        if (f.required && !framework_global_flags.contains(f.name) && seen.insert(f.name).second) exposed.push_back(f);
    }
    return exposed;
}

confirm_requirement confirm_for(const std::vector<std::string>& tags, const std::vector<std::string>& confirm_tags) {
    if (contains(tags, tag_confirm)) return {confirm_posture::required, std::string(tag_confirm)};
    for (const auto& t : tags) {
        if (contains(confirm_tags, t)) return {confirm_posture::required, t};
    }
    return {confirm_posture::not_required, {}};
}

struct walker {
    const derive_options& options;
    const std::vector<fisk_flag>& globals;
    derivation& out;

    void walk(const fisk_command& c, std::vector<std::string>& path) {
        path.push_back(c.name);
        if (c.hidden) {
            out.dropped.push_back({join(path, " "), "hidden"});
        } else if (!c.is_leaf()) {
            for (const auto& sub : c.commands) walk(sub, path);
        } else {
            leaf(c, path);
        }
        path.pop_back();
    }

    void leaf(const fisk_command& c, const std::vector<std::string>& path) {
        command_spec t;
        t.path = path;
        t.name = join(path, "_");
        t.title = join(path, " ");
        if (!c.restricted_schema) {
            throw derive_error(
                fmt::format("command {} has no precomputed schema; introspect the application with a current fisk",
                            gocompat::quote(t.title)));
        }
        t.description = c.help.empty() ? c.help_long : c.help;
        t.model_description = model_description(c.help, c.help_long, c.tags);
        t.tags = c.tags;
        t.flags = c.flags;
        t.args = c.args;
        // The command's own flag or argument wins over a global of the same name, so a
        // call is never ambiguous.
        for (const auto& g : globals) {
            const bool shadowed =
                std::any_of(c.flags.begin(), c.flags.end(), [&](const fisk_flag& f) { return f.name == g.name; }) ||
                std::any_of(c.args.begin(), c.args.end(), [&](const fisk_arg& a) { return a.name == g.name; });
            if (!shadowed) t.global_flags.push_back(g);
        }
        t.input_schema = merge_globals(*c.restricted_schema, t.global_flags);
        t.confirm = confirm_for(c.tags, options.confirm_tags);
        out.tools.push_back(std::move(t));
    }
};

}  // namespace

std::string model_description(const std::string& help, const std::string& help_long,
                              const std::vector<std::string>& tags) {
    std::string text;
    if (help.empty()) {
        text = help_long;
    } else if (help_long.empty()) {
        text = help;
    } else if (help_long.find(help) != std::string::npos) {
        text = help_long;
    } else if (help.find(help_long) != std::string::npos) {
        text = help;
    } else {
        text = help + "\n\n" + help_long;
    }
    if (!tags.empty()) {
        if (!text.empty()) text += "\n\n";
        text += "Tags: " + join(tags, ", ");
    }
    return text;
}

std::vector<fisk_flag> exposable_global_flags(const fisk_application& app) {
    std::vector<fisk_flag> out;
    for (const auto& f : app.flags) {
        if (!f.hidden && !framework_global_flags.contains(f.name)) out.push_back(f);
    }
    return out;
}

derivation derive_tools(const fisk_application& app, const derive_options& options) {
    // Globals are resolved before the walk so a bad entry is reported even for an
    // application without commands.
    const auto globals = resolve_global_flags(app, options.global_flags);

    derivation out;
    walker w{options, globals, out};
    std::vector<std::string> path;
    for (const auto& c : app.commands) w.walk(c, path);

    // ai:deny is removed by every pass and can never be re-included.
    std::vector<command_spec> kept;
    for (auto& t : out.tools) {
        if (contains(t.tags, tag_deny)) {
            out.dropped.push_back({t.title, "tagged ai:deny"});
        } else {
            kept.push_back(std::move(t));
        }
    }
    out.tools = std::move(kept);

    filter_pass(out.tools, out.dropped, options.include, true, "include");
    filter_pass(out.tools, out.dropped, options.exclude, false, "exclude");
    filter_pass(out.tools, out.dropped, options.serve_include, true, "expose.agent.tools.include");
    filter_pass(out.tools, out.dropped, options.serve_exclude, false, "expose.agent.tools.exclude");

    // The original silently keeps the last of two commands that flatten to one name; a
    // model could then never reach the other, so refuse instead.
    std::map<std::string, std::string> owner;
    for (const auto& t : out.tools) {
        auto [it, inserted] = owner.emplace(t.name, t.title);
        if (!inserted) {
            throw derive_error(fmt::format(
                "commands {} and {} both map to the tool name {}; exclude one of them with an exclude filter",
                gocompat::quote(it->second), gocompat::quote(t.title), gocompat::quote(t.name)));
        }
    }
    return out;
}

}  // namespace fiskai::toolkit
