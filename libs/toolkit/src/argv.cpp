#include <fiskai/toolkit/argv.hpp>
#include <fiskai/gocompat/json.hpp>
#include <fiskai/gocompat/quote.hpp>

#include <boost/json/value.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <map>

namespace fiskai::toolkit {
namespace {

namespace json = boost::json;

// Go's strconv.ParseBool true spellings.
bool parses_true(std::string_view s) {
    return s == "1" || s == "t" || s == "T" || s == "TRUE" || s == "true" || s == "True";
}

// Scalar to command-line text. Integers keep their exact digits; a fractional number is
// written in its shortest round-trip form (never an exponent-only form like 1E0).
std::string scalar_text(const json::value& v) {
    switch (v.kind()) {
        case json::kind::string: {
            // exec takes C strings: a NUL would silently cut the argument short, while
            // the approval prompt and the reported command showed all of it.
            if (v.get_string().find('\0') != json::string::npos) {
                throw argv_error("the value contains a NUL character, which no command-line argument can carry");
            }
            return std::string(v.get_string());
        }
        case json::kind::int64: return std::to_string(v.get_int64());
        case json::kind::uint64: return std::to_string(v.get_uint64());
        case json::kind::double_: {
            char buf[64];
            auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v.get_double());
            return ec == std::errc{} ? std::string(buf, end) : std::string("0");
        }
        case json::kind::bool_: return v.get_bool() ? "true" : "false";
        case json::kind::null: return {};
        default: throw argv_error(fmt::format("unsupported value type {}", gocompat::json_kind_name(v)));
    }
}

// The parts of a command the renderer needs; globals are rendered through the same code
// against a synthetic command that has only flags.
struct render_target {
    const std::vector<fisk_flag>& flags;
    const std::vector<fisk_arg>* args;  // null for the global-flag pseudo command
};

void render_flag(const fisk_flag& f, const json::value& v, std::vector<std::string>& out) {
    if (f.boolean) {
        if (!v.is_bool())
            throw argv_error(
                fmt::format("flag {}: expected boolean, got {}", gocompat::quote(f.name), gocompat::json_kind_name(v)));
        if (v.get_bool()) {
            out.push_back("--" + f.name);
        } else if (f.negatable) {
            out.push_back("--no-" + f.name);
        } else if (std::any_of(f.defaults.begin(), f.defaults.end(), parses_true)) {
            throw argv_error(
                fmt::format("flag {}: cannot be set to false: the flag has no negation and defaults to true",
                            gocompat::quote(f.name)));
        }
        return;
    }
    try {
        if (v.is_array()) {
            for (const auto& item : v.get_array()) out.push_back("--" + f.name + "=" + scalar_text(item));
        } else if (v.is_object()) {
            std::vector<std::pair<std::string, const json::value*>> entries;
            for (const auto& kv : v.get_object()) entries.emplace_back(std::string(kv.key()), &kv.value());
            std::sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
            for (const auto& [k, val] : entries) out.push_back("--" + f.name + "=" + k + "=" + scalar_text(*val));
        } else {
            out.push_back("--" + f.name + "=" + scalar_text(v));
        }
    } catch (const argv_error& e) {
        throw argv_error(fmt::format("flag {}: {}", gocompat::quote(f.name), e.what()));
    }
}

std::vector<std::string> render(const render_target& target, const json::object& input) {
    // Every key must name a flag or argument, hidden ones included. Keys are checked in
    // sorted order so the reported one does not depend on the client's key order.
    std::vector<std::string> keys;
    for (const auto& kv : input) keys.emplace_back(kv.key());
    std::sort(keys.begin(), keys.end());
    for (const auto& key : keys) {
        const bool known =
            std::any_of(target.flags.begin(), target.flags.end(), [&](const fisk_flag& f) { return f.name == key; }) ||
            (target.args &&
             std::any_of(target.args->begin(), target.args->end(), [&](const fisk_arg& a) { return a.name == key; }));
        if (!known) throw argv_error(fmt::format("unknown property {}", gocompat::quote(key)));
    }

    std::vector<std::string> out;
    for (const auto& f : target.flags) {
        if (const auto* v = input.if_contains(f.name)) render_flag(f, *v, out);
    }
    if (!target.args || target.args->empty()) return out;

    const auto& args = *target.args;
    for (std::size_t i = 0; i + 1 < args.size(); ++i) {
        if (args[i].cumulative) {
            throw argv_error(
                fmt::format("argument {} is cumulative but is not the last argument", gocompat::quote(args[i].name)));
        }
    }
    std::ptrdiff_t last = -1;
    for (std::size_t i = 0; i < args.size(); ++i) {
        if (input.contains(args[i].name)) last = static_cast<std::ptrdiff_t>(i);
    }
    std::vector<std::string> positionals;
    for (std::ptrdiff_t i = 0; i <= last; ++i) {
        const auto& a = args[static_cast<std::size_t>(i)];
        const auto* v = input.if_contains(a.name);
        if (v == nullptr) {
            if (a.defaults.empty()) {
                throw argv_error(
                    fmt::format("argument {} must be set because a later argument is set", gocompat::quote(a.name)));
            }
            positionals.insert(positionals.end(), a.defaults.begin(), a.defaults.end());
            continue;
        }
        try {
            if (v->is_array()) {
                for (const auto& item : v->get_array()) positionals.push_back(scalar_text(item));
            } else {
                positionals.push_back(scalar_text(*v));
            }
        } catch (const argv_error& e) {
            throw argv_error(fmt::format("argument {}: {}", gocompat::quote(a.name), e.what()));
        }
    }
    if (!positionals.empty()) {
        out.emplace_back("--");
        out.insert(out.end(), positionals.begin(), positionals.end());
    }
    return out;
}

}  // namespace

std::vector<std::string> render_argv(const command_spec& spec, const json::value& arguments) {
    static const json::object empty;
    const json::object* input = &empty;
    if (arguments.is_object()) {
        input = &arguments.get_object();
    } else if (!arguments.is_null()) {
        throw argv_error(fmt::format("building command line for {}: invalid JSON arguments: expected an object, got {}",
                                     gocompat::quote(spec.title), gocompat::json_kind_name(arguments)));
    }

    json::object global_input;
    json::object local_input;
    for (const auto& kv : *input) {
        const bool is_global = std::any_of(spec.global_flags.begin(), spec.global_flags.end(),
                                           [&](const fisk_flag& g) { return g.name == kv.key(); });
        (is_global ? global_input : local_input)[kv.key()] = kv.value();
    }

    std::vector<std::string> argv = spec.path;
    if (!global_input.empty()) {
        try {
            auto tokens = render(render_target{spec.global_flags, nullptr}, global_input);
            argv.insert(argv.end(), tokens.begin(), tokens.end());
        } catch (const argv_error& e) {
            throw argv_error(fmt::format("building global flags for {}: {}", gocompat::quote(spec.title), e.what()));
        }
    }
    try {
        auto tokens = render(render_target{spec.flags, &spec.args}, local_input);
        argv.insert(argv.end(), tokens.begin(), tokens.end());
    } catch (const argv_error& e) {
        throw argv_error(fmt::format("building command line for {}: {}", gocompat::quote(spec.title), e.what()));
    }
    return argv;
}

std::string command_line(const std::vector<std::string>& argv) {
    std::string out;
    for (std::size_t i = 0; i < argv.size(); ++i) {
        if (i) out += ' ';
        out += argv[i];
    }
    return out;
}

std::string display_command_line(const std::vector<std::string>& argv) {
    // Plain: printable ASCII that a shell would not split or treat specially.
    const auto plain = [](std::string_view arg) {
        return !arg.empty() && std::all_of(arg.begin(), arg.end(), [](char c) {
            return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                   std::string_view("_-./:=,@%+").find(c) != std::string_view::npos;
        });
    };
    std::string out;
    for (std::size_t i = 0; i < argv.size(); ++i) {
        if (i) out += ' ';
        out += plain(argv[i]) ? argv[i] : gocompat::quote(argv[i]);
    }
    return out;
}

}  // namespace fiskai::toolkit
