#include <fiskai/a2a/validator.hpp>

#include "body.hpp"
#include "embedded_schemas.hpp"
#include "json_text.hpp"

#include <fiskai/valijson_re2.hpp>
#include <fiskai/gocompat/quote.hpp>

#include <valijson/adapters/boost_json_adapter.hpp>
#include <valijson/schema.hpp>
#include <valijson/schema_parser.hpp>
#include <valijson/validation_results.hpp>

#include <boost/json/parse.hpp>

#include <array>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>

namespace fiskai::a2a {

namespace {

namespace json = boost::json;

constexpr std::size_t message_count = protocols::all.size();
constexpr std::size_t file_count = std::tuple_size_v<std::remove_cvref_t<decltype(detail::embedded_schema_files)>>;
static_assert(file_count == message_count + 1, "common.json and one schema per protocol id");

// The first (innermost) failure, as one line. A property whose schema is `false` is a
// payload field of another message type, refused by name.
std::string describe(valijson::ValidationResults& results, std::string_view file) {
    valijson::ValidationResults::Error e;
    if (!results.popError(e)) return std::string(file);
    // Property names keep valijson's quotes (`/"sender"/"name"`): these texts are fixed.
    std::string where = schema_support::context_pointer(e.context, schema_support::property_quotes::keep);
    std::string what = e.description;
    constexpr std::string_view wrapper = "Failed to validate against schema associated with property name '";
    if (what.rfind(wrapper, 0) == 0) {
        const auto name = what.substr(wrapper.size(), what.size() - wrapper.size() - 2);
        where = (where == "/" ? "" : where) + "/" + name;
        what = "property not allowed here: it belongs to another message type";
    }
    if (!what.empty() && what.back() == '.') what.pop_back();
    return std::string(file) + ": " + where + ": " + what;
}

}  // namespace

struct validator::impl {
    std::array<valijson::Schema, message_count> schemas;

    result<std::size_t> validate(const json::value& doc) const {
        auto index = detail::protocol_index(doc);
        if (!index) return index.error();
        const valijson::adapters::BoostJsonAdapter target(doc);
        const auto& schema = schemas[*index];
        auto& v = schema_support::thread_validator();
        try {
            // The quick pass stops at the first failure; only a failed body pays for the
            // second pass that collects a description.
            if (v.validate(schema, target, nullptr)) return index;
            valijson::ValidationResults results;
            v.validate(schema, target, &results);
            return make_error(errc::schema_violation,
                              describe(results, detail::embedded_schema_files[*index + 1].name));
        } catch (const std::exception& ex) {
            return make_error(errc::schema_violation, ex.what());
        }
    }
};

validator::validator() : impl_(std::make_unique<impl>()) {
    const auto& files = detail::embedded_schema_files;
    const json::value common = json::parse(files[0].text);
    const std::string common_url = std::string(schema_base_url) + "/" + std::string(files[0].name);
    // Message schemas refer to `common.json#/definitions/...`; valijson does not honour
    // `$id`, so the relative reference reaches this callback and gets common.json.
    const auto fetch = [&](const std::string& uri) -> const json::value* {
        if (uri == files[0].name || uri == common_url) return new json::value(common);
        throw std::runtime_error("a2a schema refers to an unknown document: " + uri);
    };
    const auto free_doc = [](const json::value* doc) { delete doc; };
    for (std::size_t i = 0; i < message_count; ++i) {
        const json::value doc = json::parse(files[i + 1].text);
        const auto* constant = doc.at("properties").at("protocol").as_object().if_contains("const");
        if (constant == nullptr || !constant->is_string() ||
            std::string_view(constant->get_string().data(), constant->get_string().size()) != protocols::all[i]) {
            throw std::runtime_error("a2a schema " + std::string(files[i + 1].name) + " does not pin protocol " +
                                     std::string(protocols::all[i]));
        }
        valijson::SchemaParser parser(valijson::SchemaParser::kDraft7);
        parser.populateSchema(valijson::adapters::BoostJsonAdapter(doc), impl_->schemas[i], fetch, free_doc);
    }
}

validator::~validator() = default;
validator::validator(validator&&) noexcept = default;
validator& validator::operator=(validator&&) noexcept = default;

result<void> validator::validate(std::string_view body) const {
    detail::parsed_body parsed;
    if (auto r = detail::parse_body(body, parsed); !r) return r.error();
    if (auto r = impl_->validate(parsed.doc); !r) return r.error();
    return {};
}

result<message> validator::check(std::string_view body) const {
    detail::parsed_body parsed;
    if (auto r = detail::parse_body(body, parsed); !r) return r.error();
    auto index = impl_->validate(parsed.doc);
    if (!index) return index.error();
    return detail::decode_document(parsed.doc.get_object(), body, *index);
}

result<message> validator::check(std::string_view body, std::string_view expected_protocol) const {
    auto m = check(body);
    if (!m) return m;
    if (const auto got = protocol_of(*m); got != expected_protocol) {
        return make_error(errc::protocol_mismatch,
                          "got " + gocompat::quote(got) + ", want " + gocompat::quote(expected_protocol));
    }
    return m;
}

const validator& default_validator() {
    static const validator instance;
    return instance;
}

std::span<const schema_file> schema_files() noexcept {
    static const auto files = [] {
        std::array<schema_file, file_count> out{};
        for (std::size_t i = 0; i < out.size(); ++i) {
            out[i] = {detail::embedded_schema_files[i].name, detail::embedded_schema_files[i].text};
        }
        return out;
    }();
    return files;
}

std::string_view schema_file_name(std::string_view protocol_id) noexcept {
    for (std::size_t i = 0; i < message_count; ++i) {
        if (protocols::all[i] == protocol_id) return detail::embedded_schema_files[i + 1].name;
    }
    return {};
}

}  // namespace fiskai::a2a
