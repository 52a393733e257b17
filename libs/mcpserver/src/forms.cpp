#include <fiskai/mcpserver/protocol.hpp>
#include <fiskai/toolkit/schema_validator.hpp>

#include <boost/json/array.hpp>

namespace fiskai::mcpserver {
namespace {

namespace json = boost::json;

json::object field(std::string_view type, std::string description) {
    json::object p{{"type", type}};
    if (!description.empty()) p["description"] = std::move(description);
    return p;
}

json::array titled(const std::vector<elicitation_form::option>& options) {
    json::array out;
    for (const auto& o : options) out.push_back(json::object{{"const", o.value}, {"title", o.title}});
    return out;
}

}  // namespace

elicitation_form& elicitation_form::add(std::string name, json::object property, bool required) {
    if (required) required_.push_back(name);
    properties_[name] = std::move(property);
    return *this;
}

elicitation_form& elicitation_form::text(std::string name, std::string description, bool required,
                                         std::optional<std::string> default_value, std::string format) {
    auto p = field("string", std::move(description));
    if (!format.empty()) p["format"] = std::move(format);
    if (default_value) p["default"] = *default_value;
    return add(std::move(name), std::move(p), required);
}

elicitation_form& elicitation_form::integer(std::string name, std::string description, bool required,
                                            std::optional<std::int64_t> default_value) {
    auto p = field("integer", std::move(description));
    if (default_value) p["default"] = *default_value;
    return add(std::move(name), std::move(p), required);
}

elicitation_form& elicitation_form::number(std::string name, std::string description, bool required,
                                           std::optional<double> default_value) {
    auto p = field("number", std::move(description));
    if (default_value) p["default"] = *default_value;
    return add(std::move(name), std::move(p), required);
}

elicitation_form& elicitation_form::boolean(std::string name, std::string description, bool required,
                                            std::optional<bool> default_value) {
    auto p = field("boolean", std::move(description));
    if (default_value) p["default"] = *default_value;
    return add(std::move(name), std::move(p), required);
}

elicitation_form& elicitation_form::choice(std::string name, std::string description, std::vector<std::string> values,
                                           bool required, std::optional<std::string> default_value) {
    auto p = field("string", std::move(description));
    json::array e;
    for (auto& v : values) e.emplace_back(v);
    p["enum"] = std::move(e);
    if (default_value) p["default"] = *default_value;
    return add(std::move(name), std::move(p), required);
}

elicitation_form& elicitation_form::titled_choice(std::string name, std::string description,
                                                  std::vector<option> options, bool required) {
    auto p = field("string", std::move(description));
    p["oneOf"] = titled(options);
    return add(std::move(name), std::move(p), required);
}

elicitation_form& elicitation_form::legacy_titled_choice(std::string name, std::string description,
                                                         std::vector<option> options, bool required) {
    auto p = field("string", std::move(description));
    json::array values, names;
    for (const auto& o : options) {
        values.emplace_back(o.value);
        names.emplace_back(o.title);
    }
    p["enum"] = std::move(values);
    p["enumNames"] = std::move(names);
    return add(std::move(name), std::move(p), required);
}

elicitation_form& elicitation_form::multi_choice(std::string name, std::string description,
                                                 std::vector<std::string> values, bool required) {
    auto p = field("array", std::move(description));
    json::array e;
    for (auto& v : values) e.emplace_back(v);
    p["items"] = json::object{{"type", "string"}, {"enum", std::move(e)}};
    return add(std::move(name), std::move(p), required);
}

elicitation_form& elicitation_form::titled_multi_choice(std::string name, std::string description,
                                                        std::vector<option> options, bool required) {
    auto p = field("array", std::move(description));
    p["items"] = json::object{{"anyOf", titled(options)}};
    return add(std::move(name), std::move(p), required);
}

json::object elicitation_form::schema() const {
    json::object s{{"type", "object"}, {"properties", properties_}};
    if (!required_.empty()) {
        json::array r;
        for (const auto& n : required_) r.emplace_back(n);
        s["required"] = std::move(r);
    }
    return s;
}

json::object form_elicitation(std::string message, const elicitation_form& form) {
    return json::object{{"mode", "form"}, {"message", std::move(message)}, {"requestedSchema", form.schema()}};
}

std::optional<std::string> check_elicitation_result(const json::object& requested_schema, const json::value& result) {
    if (!result.is_object()) return "the answer is not an object";
    const auto& r = result.get_object();
    const auto* action = r.if_contains("action");
    if (!action || !action->is_string()) return "the answer has no action";
    const std::string_view a = action->get_string();
    if (a == "decline" || a == "cancel") return std::nullopt;
    if (a != "accept") return "unknown action \"" + std::string(a) + "\"";
    const auto* content = r.if_contains("content");
    if (!content || !content->is_object()) return "an accepted answer carries no content object";
    // The schema is ours, so it compiles; what the client sent is what is checked.
    toolkit::schema_validator validator(requested_schema);
    if (auto problem = validator.validate(*content)) return "the content does not match the form: " + *problem;
    return std::nullopt;
}

}  // namespace fiskai::mcpserver
