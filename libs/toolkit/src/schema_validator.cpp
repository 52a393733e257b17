#include <fiskai/toolkit/schema_validator.hpp>

#include <boost/json/value.hpp>
#include <fiskai/valijson_re2.hpp>

#include <valijson/adapters/boost_json_adapter.hpp>
#include <valijson/schema.hpp>
#include <valijson/schema_parser.hpp>
#include <valijson/validation_results.hpp>

#include <fmt/format.h>

#include <set>
#include <stdexcept>

namespace fiskai::toolkit {
namespace {

namespace json = boost::json;

// Keywords of JSON Schema 2019-09/2020-12 that valijson (draft 7) silently ignores.
const std::set<std::string, std::less<>> ignored_keywords = {
    "unevaluatedProperties", "unevaluatedItems", "prefixItems", "dependentRequired",
    "dependentSchemas",      "$anchor",          "$dynamicRef", "$dynamicAnchor",
    "$recursiveRef",         "$recursiveAnchor", "minContains", "maxContains"};
// The formats valijson checks; any other format is accepted unchecked.
const std::set<std::string, std::less<>> enforced_formats = {"date", "time", "date-time", "ipv4"};

// Keywords whose value is a map of name -> subschema.
const std::set<std::string, std::less<>> schema_maps = {"properties", "patternProperties", "$defs", "definitions",
                                                        "dependentSchemas"};

// Patterns are RE2 (Go's syntax). One RE2 cannot compile (lookaround, backreferences)
// matches nothing, so every value is refused: said here, at registration.
void check_pattern(const std::string& pattern, const std::string& pointer, std::vector<std::string>& out) {
    const schema_support::re2_engine engine(pattern);
    if (!engine.ok()) {
        out.push_back(fmt::format("{} (pattern \"{}\" is not valid RE2 syntax: {}; every value will be refused)",
                                  pointer, pattern, engine.error()));
    }
}

void scan(const json::value& v, const std::string& pointer, std::vector<std::string>& out) {
    if (v.is_array()) {
        std::size_t i = 0;
        for (const auto& e : v.get_array()) scan(e, pointer + "/" + std::to_string(i++), out);
        return;
    }
    if (!v.is_object()) return;
    for (const auto& kv : v.get_object()) {
        const std::string key(kv.key());
        const std::string here = pointer + "/" + key;
        if (ignored_keywords.contains(key)) out.push_back(fmt::format("{} ({} is not enforced)", here, key));
        if (key == "format" && kv.value().is_string() && !enforced_formats.contains(kv.value().get_string())) {
            out.push_back(
                fmt::format("{} (format \"{}\" is not enforced)", here, std::string(kv.value().get_string())));
        }
        if (key == "pattern" && kv.value().is_string()) check_pattern(std::string(kv.value().get_string()), here, out);
        if (key == "patternProperties" && kv.value().is_object()) {
            for (const auto& sub : kv.value().get_object()) check_pattern(std::string(sub.key()), here, out);
        }
        if (schema_maps.contains(key) && kv.value().is_object()) {
            for (const auto& sub : kv.value().get_object()) scan(sub.value(), here + "/" + std::string(sub.key()), out);
        } else if (kv.value().is_object() || kv.value().is_array()) {
            // enum/const/default/examples hold data, not subschemas
            if (key != "enum" && key != "const" && key != "default" && key != "examples") scan(kv.value(), here, out);
        }
    }
}

std::string context_path(const std::vector<std::string>& context) {
    // valijson writes a context like {"<root>", "[count]", "[0]"}.
    std::string path;
    for (const auto& c : context) {
        if (c == "<root>") continue;
        std::string part = c;
        if (part.size() >= 2 && part.front() == '[' && part.back() == ']') part = part.substr(1, part.size() - 2);
        if (part.size() >= 2 && part.front() == '"' && part.back() == '"') part = part.substr(1, part.size() - 2);
        if (!path.empty()) path += '.';
        path += part;
    }
    return path;
}

}  // namespace

struct schema_validator::impl {
    json::value document;  // valijson's schema keeps references into the adapter's document
    valijson::Schema schema;
    std::vector<std::string> unenforced;
};

schema_validator::schema_validator(const json::object& schema) : impl_(std::make_unique<impl>()) {
    impl_->document = schema;
    try {
        valijson::SchemaParser parser(valijson::SchemaParser::kDraft7);
        valijson::adapters::BoostJsonAdapter adapter(impl_->document);
        parser.populateSchema(adapter, impl_->schema);
    } catch (const std::exception& e) {
        throw std::invalid_argument(fmt::format("the input schema cannot be compiled: {}", e.what()));
    }
    scan(impl_->document, "", impl_->unenforced);
}

schema_validator::~schema_validator() = default;
schema_validator::schema_validator(schema_validator&&) noexcept = default;
schema_validator& schema_validator::operator=(schema_validator&&) noexcept = default;

std::optional<std::string> schema_validator::validate(const json::value& instance) const {
    schema_support::validator validator;
    valijson::ValidationResults results;
    valijson::adapters::BoostJsonAdapter adapter(instance);
    try {
        if (validator.validate(impl_->schema, adapter, &results)) return std::nullopt;
    } catch (const std::exception& e) {
        // Boost.Regex (format checks) gives up on a match that grows too costly.
        return fmt::format("the arguments could not be checked against the input schema: {}", e.what());
    }

    // valijson reports each failure and then every enclosing schema that failed because
    // of it; only the innermost lines say something a caller can act on.
    std::vector<std::string> lines;
    std::set<std::string> seen;
    valijson::ValidationResults::Error error;
    while (results.popError(error)) {
        const auto& d = error.description;
        if (d.rfind("Failed to validate against schema associated with", 0) == 0 ||
            d.rfind("Failed to validate item", 0) == 0) {
            continue;
        }
        const auto path = context_path(error.context);
        std::string line = path.empty() ? d : fmt::format("property \"{}\": {}", path, d);
        if (seen.insert(line).second) lines.push_back(std::move(line));
    }
    if (lines.empty()) lines.emplace_back("the arguments do not match the input schema");
    std::string text;
    for (const auto& l : lines) {
        if (!text.empty()) text += "; ";
        text += l;
    }
    return text;
}

const std::vector<std::string>& schema_validator::unenforced_keywords() const noexcept { return impl_->unenforced; }

}  // namespace fiskai::toolkit
