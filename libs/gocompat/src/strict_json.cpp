#include <fiskai/gocompat/strict_json.hpp>

#include <fiskai/gocompat/json.hpp>
#include <fiskai/gocompat/quote.hpp>

#include <boost/json.hpp>

#include <algorithm>

namespace fiskai::gocompat {

boost::system::result<boost::json::object, std::string> decode_strict_object(
    std::string_view text, const std::vector<std::string_view>& allowed) {
    if (text.find_first_not_of(" \t\r\n") == std::string_view::npos) return boost::json::object();
    boost::system::error_code ec;
    auto value = boost::json::parse(text, ec, {}, go_parse_options());
    if (ec) return ec.message();
    if (value.is_null()) return boost::json::object();
    if (!value.is_object()) return std::string("want a JSON object, got a ") + json_kind_name(value);
    auto& object = value.get_object();
    for (const auto& kv : object) {
        if (std::find(allowed.begin(), allowed.end(), std::string_view(kv.key())) != allowed.end()) continue;
        std::string reason = "json: unknown field " + quote(kv.key()) + " (known: ";
        for (std::size_t i = 0; i < allowed.size(); ++i) {
            if (i > 0) reason += ", ";
            reason += allowed[i];
        }
        reason += ")";
        return reason;
    }
    return std::move(object);
}

}  // namespace fiskai::gocompat
