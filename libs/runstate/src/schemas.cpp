// The draft-07 ports of Go's session schemas, compiled once and enforced on every record
// read (Go had the schemas but never used them).
#include "embedded_schemas.hpp"
#include "internal.hpp"

#include <fiskai/runstate/records.hpp>
#include <fiskai/gocompat/json.hpp>
#include <fiskai/gocompat/quote.hpp>
#include <fiskai/valijson_re2.hpp>

#include <valijson/adapters/boost_json_adapter.hpp>
#include <valijson/schema.hpp>
#include <valijson/schema_parser.hpp>
#include <valijson/validation_results.hpp>

#include <boost/json.hpp>

#include <fmt/format.h>

#include <array>
#include <memory>
#include <stdexcept>
#include <string>

namespace fiskai::runstate::detail {

namespace {

namespace json = boost::json;

constexpr std::array<std::string_view, 5> protocols{protocol::meta, protocol::assistant, protocol::user,
                                                    protocol::tool_result, protocol::terminal};

struct compiled {
    std::array<valijson::Schema, 5> schemas;

    compiled() {
        const auto& files = embedded_schema_files;
        const json::value common = json::parse(files[0].text);
        const std::string common_url = "https://choria.io/schemas/io.choria.fisk-ai.v1/" + std::string(files[0].name);
        const auto fetch = [&](const std::string& uri) -> const json::value* {
            if (uri == files[0].name || uri == common_url) return new json::value(common);
            throw std::runtime_error("session schema refers to an unknown document: " + uri);
        };
        const auto free_doc = [](const json::value* doc) { delete doc; };
        for (std::size_t i = 0; i < protocols.size(); ++i) {
            const json::value doc = json::parse(files[i + 1].text);
            valijson::SchemaParser parser(valijson::SchemaParser::kDraft7);
            parser.populateSchema(valijson::adapters::BoostJsonAdapter(doc), schemas[i], fetch, free_doc);
        }
    }
};

const compiled& schemas() {
    static const compiled instance;
    return instance;
}

}  // namespace

result<std::size_t> validate_record(const json::value& doc) {
    if (!doc.is_object()) {
        return make_error(errc::corrupt,
                          fmt::format("a record is a {}, want an object", gocompat::json_kind_name(doc)));
    }
    const auto* p = doc.get_object().if_contains("protocol");
    if (p == nullptr || !p->is_string()) return make_error(errc::corrupt, "a record has no \"protocol\" string");
    const std::string_view id(p->get_string());
    std::size_t index = protocols.size();
    for (std::size_t i = 0; i < protocols.size(); ++i) {
        if (protocols[i] == id) index = i;
    }
    if (index == protocols.size()) {
        return make_error(errc::corrupt, fmt::format("unknown record protocol {}", gocompat::quote(id)));
    }
    const auto& schema = schemas().schemas[index];
    const valijson::adapters::BoostJsonAdapter target(doc);
    auto& v = schema_support::thread_validator();
    try {
        if (v.validate(schema, target, nullptr)) return index;
        valijson::ValidationResults results;
        v.validate(schema, target, &results);
        valijson::ValidationResults::Error e;
        std::string what = "invalid";
        std::string where = "/";
        if (results.popError(e)) {
            what = e.description;
            where = schema_support::context_pointer(e.context);
            if (!what.empty() && what.back() == '.') what.pop_back();
        }
        return make_error(errc::corrupt, fmt::format("{}: {}: {}", embedded_schema_files[index + 1].name, where, what));
    } catch (const std::exception& ex) {
        return make_error(errc::corrupt, ex.what());
    }
}

}  // namespace fiskai::runstate::detail
