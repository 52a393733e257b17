#include <fiskai/toolkit/function_tool.hpp>
#include <fiskai/gocompat/name.hpp>
#include <fiskai/gocompat/quote.hpp>
#include <fiskai/toolkit/schema_validator.hpp>

#include <boost/json/value.hpp>

#include <fmt/format.h>

#include <stdexcept>

namespace fiskai::toolkit {
namespace {

class function_tool final : public tool {
public:
    function_tool(function_tool_spec spec, schema_validator validator)
        : spec_(std::move(spec)), validator_(std::move(validator)) {}

    [[nodiscard]] const std::string& name() const override { return spec_.name; }
    [[nodiscard]] const std::string& title() const override { return spec_.title; }
    [[nodiscard]] const std::string& description() const override { return spec_.description; }
    // Go's function tools show the model their description as written: no `Tags:` line
    // (only command tools get one). The text feeds the fingerprint's tools hash, so a
    // line Go does not add would make C++ and Go sessions refuse each other's resume.
    [[nodiscard]] const std::string& model_description() const override { return spec_.description; }
    [[nodiscard]] const boost::json::object& input_schema() const override { return spec_.input_schema; }
    [[nodiscard]] const std::vector<std::string>& tags() const override { return spec_.tags; }
    [[nodiscard]] exposure exposed() const override { return *spec_.exposed; }
    [[nodiscard]] confirm_requirement confirm() const override {
        if (*spec_.confirm == confirm_posture::required) return {confirm_posture::required, "ai:confirm"};
        return {*spec_.confirm, {}};
    }
    [[nodiscard]] tool_kind kind() const override { return spec_.kind; }

    [[nodiscard]] std::optional<std::string> check_arguments(const boost::json::value& arguments) const override {
        if (!arguments.is_object() && !arguments.is_null()) {
            return fmt::format("invalid arguments for tool {}: expected an object", gocompat::quote(spec_.name));
        }
        if (auto problem =
                validator_.validate(arguments.is_null() ? boost::json::value(boost::json::object{}) : arguments)) {
            return fmt::format("invalid arguments for tool {}: {}", gocompat::quote(spec_.name), *problem);
        }
        return std::nullopt;
    }

    [[nodiscard]] std::string describe_call(const boost::json::value& arguments) const override {
        if (!spec_.describe) return spec_.name;
        auto text = spec_.describe(arguments);
        return text.empty() ? spec_.name : text;
    }

    boost::asio::awaitable<outcome> call(boost::json::value arguments, call_options options) override {
        if (auto problem = check_arguments(arguments)) co_return outcome::failure(std::move(*problem));
        boost::json::object input;
        if (arguments.is_object()) input = std::move(arguments.get_object());
        try {
            co_return co_await spec_.handler(input, options);
        } catch (const std::exception& e) {
            co_return outcome::failure(e.what());
        }
    }

private:
    function_tool_spec spec_;
    schema_validator validator_;
};

}  // namespace

tool_ptr make_function_tool(function_tool_spec spec) {
    if (!gocompat::is_valid_name(spec.name)) {
        throw std::invalid_argument(
            fmt::format("function tool name {} is invalid: it must contain only letters, "
                        "digits, '-' or '_'",
                        gocompat::quote(spec.name)));
    }
    if (!spec.handler)
        throw std::invalid_argument(fmt::format("function tool {} has no handler", gocompat::quote(spec.name)));
    if (!spec.exposed) {
        throw std::invalid_argument(fmt::format(
            "function tool {} has not declared where it may be served; set exposed (exposure::none() to serve it "
            "nowhere)",
            gocompat::quote(spec.name)));
    }
    if (!spec.confirm) {
        throw std::invalid_argument(fmt::format(
            "function tool {} has not declared whether it needs approval; set confirm", gocompat::quote(spec.name)));
    }
    if (spec.kind == tool_kind::remote && *spec.confirm == confirm_posture::required) {
        // The serving agent gates its own tools (and never serves a gated one); a local
        // gate on top would make the two ends disagree about who decides.
        throw std::invalid_argument(
            fmt::format("tool {} is remote and cannot be confirm-gated; a remote tool is gated by its serving agent",
                        gocompat::quote(spec.name)));
    }
    if (spec.title.empty()) spec.title = spec.name;
    if (spec.input_schema.empty()) spec.input_schema["type"] = "object";
    schema_validator validator(spec.input_schema);
    return std::make_shared<function_tool>(std::move(spec), std::move(validator));
}

}  // namespace fiskai::toolkit
