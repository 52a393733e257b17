// A small declarative stand-in for the Go fisk CLI framework.
//
// A table of commands, flags and positional arguments drives two things:
//   * the `--fisk-introspect` document, byte-shaped like fisk's ApplicationModel
//     (key order, omitempty rules, per-command `schema` / `restricted_schema`);
//   * a kingpin-style argv parser (`--name=value`, `--name value`, `--[no-]flag`,
//     short flags, repeatable flags, `--`, app-level flags at any position) whose
//     usage errors look like kingpin's (`<app>: error: <message>, try --help`, exit 1).
//
// Only the value kinds the demo needs are modelled.
#pragma once

#include <boost/json.hpp>

#include <chrono>
#include <deque>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace minifisk {

// The value kind of a flag or argument. It decides parsing and the schema type.
enum class Kind {
    Bool,             // fisk Bool(): boolean, accepts --no-<name>
    UnNegatableBool,  // fisk UnNegatableBool(): boolean, no --no-<name>
    Int,              // fisk Int(): integer
    Duration,         // fisk Duration(): Go duration text
    Enum,             // fisk Enum(options...): one of `options`
    String,           // fisk String(): any text
};

// A flag, declared fisk-style: cmd.Flag("count", "Number of messages").Int().Default("1").
struct FlagClause {
    std::string name;
    std::string help;
    Kind kind = Kind::String;
    char short_name = 0;      // 0: none
    bool cumulative = false;  // repeatable (fisk Strings(), Enums(), ...)
    std::vector<std::string> defaults;
    std::string envar;
    std::string place_holder;
    bool required = false;
    bool hidden = false;
    std::vector<std::string> options;      // Kind::Enum choices
    std::vector<std::string> completions;  // explicit hint options (replace enum options)

    FlagClause& Bool() {
        kind = Kind::Bool;
        return *this;
    }
    FlagClause& UnNegatableBool() {
        kind = Kind::UnNegatableBool;
        return *this;
    }
    FlagClause& Int() {
        kind = Kind::Int;
        return *this;
    }
    FlagClause& Duration() {
        kind = Kind::Duration;
        return *this;
    }
    FlagClause& String() {
        kind = Kind::String;
        return *this;
    }
    FlagClause& Strings() {
        kind = Kind::String;
        cumulative = true;
        return *this;
    }
    FlagClause& Enum(std::vector<std::string> choices) {
        kind = Kind::Enum;
        options = std::move(choices);
        return *this;
    }
    FlagClause& Short(char c) {
        short_name = c;
        return *this;
    }
    FlagClause& Default(std::string v) {
        defaults.push_back(std::move(v));
        return *this;
    }
    FlagClause& Envar(std::string v) {
        envar = std::move(v);
        return *this;
    }
    FlagClause& PlaceHolder(std::string v) {
        place_holder = std::move(v);
        return *this;
    }
    FlagClause& Required() {
        required = true;
        return *this;
    }
    FlagClause& Hidden() {
        hidden = true;
        return *this;
    }
    FlagClause& HintOptions(std::vector<std::string> v) {
        completions = std::move(v);
        return *this;
    }
};

// A positional argument, declared fisk-style: cmd.Arg("subject", "Subject").Required().
struct ArgClause {
    std::string name;
    std::string help;
    Kind kind = Kind::String;
    bool cumulative = false;  // takes all remaining positionals; must be the last arg
    std::vector<std::string> defaults;
    std::string envar;
    std::string place_holder;
    bool required = false;
    bool hidden = false;
    std::vector<std::string> options;  // Kind::Enum choices

    ArgClause& Int() {
        kind = Kind::Int;
        return *this;
    }
    ArgClause& Duration() {
        kind = Kind::Duration;
        return *this;
    }
    ArgClause& String() {
        kind = Kind::String;
        return *this;
    }
    ArgClause& Strings() {
        kind = Kind::String;
        cumulative = true;
        return *this;
    }
    ArgClause& Enum(std::vector<std::string> choices) {
        kind = Kind::Enum;
        options = std::move(choices);
        return *this;
    }
    ArgClause& Default(std::string v) {
        defaults.push_back(std::move(v));
        return *this;
    }
    ArgClause& Envar(std::string v) {
        envar = std::move(v);
        return *this;
    }
    ArgClause& PlaceHolder(std::string v) {
        place_holder = std::move(v);
        return *this;
    }
    ArgClause& Required() {
        required = true;
        return *this;
    }
    ArgClause& Hidden() {
        hidden = true;
        return *this;
    }
};

class Context;
using Action = std::function<int(const Context&)>;

// A command. Containers are deques so that references returned by the builders stay
// valid while the tree grows.
struct CommandClause {
    std::string name;
    std::string help;
    std::string help_long;
    std::vector<std::string> aliases;
    std::vector<std::string> tags;
    bool hidden = false;
    std::deque<FlagClause> flags;
    std::deque<ArgClause> args;
    std::deque<CommandClause> commands;
    minifisk::Action action;  // leaves only

    CommandClause& Command(std::string n, std::string h) {
        auto& c = commands.emplace_back();
        c.name = std::move(n);
        c.help = std::move(h);
        return c;
    }
    FlagClause& Flag(std::string n, std::string h) {
        auto& f = flags.emplace_back();
        f.name = std::move(n);
        f.help = std::move(h);
        return f;
    }
    ArgClause& Arg(std::string n, std::string h) {
        auto& a = args.emplace_back();
        a.name = std::move(n);
        a.help = std::move(h);
        return a;
    }
    CommandClause& Alias(std::string a) {
        aliases.push_back(std::move(a));
        return *this;
    }
    CommandClause& Tags(std::vector<std::string> t) {
        tags = std::move(t);
        return *this;
    }
    CommandClause& HelpLong(std::string h) {
        help_long = std::move(h);
        return *this;
    }
    CommandClause& Hidden() {
        hidden = true;
        return *this;
    }
    CommandClause& Action(minifisk::Action a) {
        action = std::move(a);
        return *this;
    }
};

struct Application {
    std::string name;
    std::string help;
    std::string version;
    std::string author;
    std::deque<FlagClause> flags;  // app-level (global) flags, framework flags excluded
    std::deque<CommandClause> commands;

    CommandClause& Command(std::string n, std::string h) {
        auto& c = commands.emplace_back();
        c.name = std::move(n);
        c.help = std::move(h);
        return c;
    }
    FlagClause& Flag(std::string n, std::string h) {
        auto& f = flags.emplace_back();
        f.name = std::move(n);
        f.help = std::move(h);
        return f;
    }
};

// A usage error: reported as `<app>: error: <what>, try --help` and exit status 1.
class UsageError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// The outcome of parsing argv: the selected command path and every value seen,
// with defaults and environment variables already applied and all values validated.
class Context {
public:
    const Application& app() const { return *app_; }
    const std::vector<const CommandClause*>& path() const { return path_; }
    std::string full_command() const;  // path words joined with spaces

    // Flag lookups search the selected command, then its parents, then the app.
    bool is_set(const std::string& flag) const;  // given on argv or via envar
    bool flag_bool(const std::string& flag) const;
    std::string flag_string(const std::string& flag) const;
    std::int64_t flag_int(const std::string& flag) const;
    std::chrono::nanoseconds flag_duration(const std::string& flag) const;
    std::vector<std::string> flag_strings(const std::string& flag) const;

    // Argument lookups use the selected (leaf) command.
    bool arg_set(const std::string& arg) const;
    std::string arg_string(const std::string& arg) const;
    std::chrono::nanoseconds arg_duration(const std::string& arg) const;
    std::int64_t arg_int(const std::string& arg) const;
    std::vector<std::string> arg_strings(const std::string& arg) const;

private:
    friend class Parser;
    const FlagClause& find_flag(const std::string& name) const;
    const ArgClause& find_arg(const std::string& name) const;
    const std::vector<std::string>& flag_values(const std::string& name) const;
    const std::vector<std::string>& arg_values(const std::string& name) const;

    const Application* app_ = nullptr;
    std::vector<const CommandClause*> path_;
    std::map<const FlagClause*, std::vector<std::string>> flag_values_;
    std::map<const FlagClause*, bool> flag_given_;
    std::map<const ArgClause*, std::vector<std::string>> arg_values_;
};

// --- introspection --------------------------------------------------------------

// fisk's default ApplicationModel.llm_extra_info text.
extern const char* const kLLMExtraInfo;
// The JSON-schema pattern fisk puts on Duration values.
extern const char* const kDurationPattern;

// The full ApplicationModel, schemas filled in, keys in fisk's order.
boost::json::object introspect(const Application& app);
// The schema fisk computes for one command (its own non-hidden args and flags).
boost::json::object command_schema(const CommandClause& cmd);

// --- running ------------------------------------------------------------------------

// Parses argv (without argv[0]) and runs the selected command's action. Handles
// --help, --version, `help [command...]` and usage errors. Returns the exit status.
int run(const Application& app, const std::vector<std::string>& argv);

// The usage text of `path` (empty: the application).
std::string usage(const Application& app, const std::vector<const CommandClause*>& path);

// --- Go duration helpers -------------------------------------------------------------

// Parses Go's time.ParseDuration grammar. nullopt on a syntax error or overflow.
std::optional<std::chrono::nanoseconds> parse_duration(const std::string& text);
// Formats like Go's time.Duration.String(): 0s, 250ms, 1.5s, 1m30s, 1h0m0s.
std::string format_duration(std::chrono::nanoseconds d);
// Go's strconv.ParseBool: 1 t T TRUE true True / 0 f F FALSE false False.
std::optional<bool> parse_bool(const std::string& text);

// Reports a runtime (non-usage) failure the kingpin way: `<app>: error: <message>`.
int fatal(const Application& app, const std::string& message, int code = 1);

}  // namespace minifisk
