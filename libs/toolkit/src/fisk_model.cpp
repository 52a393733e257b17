#include <fiskai/toolkit/fisk_model.hpp>
#include <fiskai/gocompat/json.hpp>

#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>

#include <fmt/format.h>

#include <stdexcept>
#include <strings.h>

namespace fiskai::toolkit {
namespace {

namespace json = boost::json;

// Go's decoder matches keys case-insensitively and the last match wins; an exact match
// is preferred here, then the first case-insensitive one, which agrees on every document
// a real fisk binary writes.
const json::value* field(const json::object& o, std::string_view key) {
    if (auto it = o.find(key); it != o.end()) return &it->value();
    for (const auto& kv : o) {
        if (kv.key().size() == key.size() && ::strncasecmp(kv.key().data(), key.data(), key.size()) == 0) {
            return &kv.value();
        }
    }
    return nullptr;
}

[[noreturn]] void wrong_type(std::string_view where, std::string_view want, const json::value& got) {
    throw std::runtime_error(fmt::format("{}: expected {}, got {}", where, want, gocompat::json_kind_name(got)));
}

std::string get_string(const json::object& o, std::string_view key, std::string_view where) {
    const auto* v = field(o, key);
    if (v == nullptr || v->is_null()) return {};
    if (!v->is_string()) wrong_type(fmt::format("{}.{}", where, key), "string", *v);
    return std::string(v->get_string());
}

bool get_bool(const json::object& o, std::string_view key, std::string_view where) {
    const auto* v = field(o, key);
    if (v == nullptr || v->is_null()) return false;
    if (!v->is_bool()) wrong_type(fmt::format("{}.{}", where, key), "boolean", *v);
    return v->get_bool();
}

std::vector<std::string> get_strings(const json::object& o, std::string_view key, std::string_view where) {
    std::vector<std::string> out;
    const auto* v = field(o, key);
    if (v == nullptr || v->is_null()) return out;
    if (!v->is_array()) wrong_type(fmt::format("{}.{}", where, key), "array of strings", *v);
    for (const auto& e : v->get_array()) {
        if (!e.is_string()) wrong_type(fmt::format("{}.{}[]", where, key), "string", e);
        out.emplace_back(e.get_string());
    }
    return out;
}

const json::array* get_array(const json::object& o, std::string_view key, std::string_view where) {
    const auto* v = field(o, key);
    if (v == nullptr || v->is_null()) return nullptr;
    if (!v->is_array()) wrong_type(fmt::format("{}.{}", where, key), "array", *v);
    return &v->get_array();
}

const json::object& as_object(const json::value& v, std::string_view where) {
    if (!v.is_object()) wrong_type(where, "object", v);
    return v.get_object();
}

fisk_flag parse_flag(const json::object& o, const std::string& where) {
    fisk_flag f;
    f.name = get_string(o, "name", where);
    f.help = get_string(o, "help", where);
    f.defaults = get_strings(o, "default", where);
    f.envar = get_string(o, "envar", where);
    f.required = get_bool(o, "required", where);
    f.hidden = get_bool(o, "hidden", where);
    f.boolean = get_bool(o, "boolean", where);
    f.negatable = get_bool(o, "negatable", where);
    f.cumulative = get_bool(o, "cumulative", where);
    f.completions = get_strings(o, "completions", where);
    return f;
}

fisk_arg parse_arg(const json::object& o, const std::string& where) {
    fisk_arg a;
    a.name = get_string(o, "name", where);
    a.help = get_string(o, "help", where);
    a.defaults = get_strings(o, "default", where);
    a.required = get_bool(o, "required", where);
    a.hidden = get_bool(o, "hidden", where);
    a.cumulative = get_bool(o, "cumulative", where);
    return a;
}

std::vector<fisk_flag> parse_flags(const json::object& o, const std::string& where) {
    std::vector<fisk_flag> out;
    if (const auto* arr = get_array(o, "flags", where)) {
        for (const auto& e : *arr) out.push_back(parse_flag(as_object(e, where + ".flags[]"), where + ".flags[]"));
    }
    return out;
}

fisk_command parse_command(const json::object& o, const std::string& parent, int depth) {
    // A real command tree is a few levels deep; a hostile one must not exhaust the stack.
    if (depth > 64) throw std::runtime_error("command tree is nested more than 64 levels deep");
    fisk_command c;
    c.name = get_string(o, "name", parent);
    const std::string where = parent.empty() ? c.name : parent + " " + c.name;
    c.help = get_string(o, "help", where);
    c.help_long = get_string(o, "help_long", where);
    c.hidden = get_bool(o, "hidden", where);
    c.tags = get_strings(o, "tags", where);
    if (const auto* rs = field(o, "restricted_schema"); rs != nullptr && !rs->is_null()) {
        c.restricted_schema = as_object(*rs, where + ".restricted_schema");
    }
    c.flags = parse_flags(o, where);
    if (const auto* arr = get_array(o, "args", where)) {
        for (const auto& e : *arr) c.args.push_back(parse_arg(as_object(e, where + ".args[]"), where + ".args[]"));
    }
    if (const auto* arr = get_array(o, "commands", where)) {
        for (const auto& e : *arr) c.commands.push_back(parse_command(as_object(e, where), where, depth + 1));
    }
    return c;
}

}  // namespace

fisk_application parse_fisk_model(std::string_view json_text) {
    boost::system::error_code ec;
    json::parse_options opts;
    opts.max_depth = 256;
    json::value doc = json::parse(json_text, ec, {}, opts);
    if (ec) throw std::runtime_error(ec.message());
    const auto& root = as_object(doc, "document");
    fisk_application app;
    app.name = get_string(root, "name", "application");
    app.help = get_string(root, "help", "application");
    app.version = get_string(root, "version", "application");
    if (const auto* arr = get_array(root, "commands", "application")) {
        for (const auto& e : *arr) app.commands.push_back(parse_command(as_object(e, "commands[]"), "", 0));
    }
    app.flags = parse_flags(root, "application");
    return app;
}

}  // namespace fiskai::toolkit
