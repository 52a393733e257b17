#pragma once
// JSON Schema validation of call arguments (valijson, draft 7 semantics) behind a pimpl,
// so valijson stays out of every other header.

#include <boost/json/fwd.hpp>

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace fiskai::toolkit {

class schema_validator {
public:
    // Throws std::invalid_argument naming the problem when the schema cannot be compiled.
    explicit schema_validator(const boost::json::object& schema);
    ~schema_validator();
    schema_validator(schema_validator&&) noexcept;
    schema_validator& operator=(schema_validator&&) noexcept;

    // nullopt when valid; otherwise one readable line per violation, each naming the
    // property path (`property "count": ...`).
    [[nodiscard]] std::optional<std::string> validate(const boost::json::value& instance) const;

    // Keywords present in the schema that this validator does not enforce (2019-09/2020-12
    // keywords valijson ignores, unenforced formats, patterns RE2 cannot compile), each as a JSON
    // pointer + keyword.
    [[nodiscard]] const std::vector<std::string>& unenforced_keywords() const noexcept;

private:
    struct impl;
    std::unique_ptr<impl> impl_;
};

}  // namespace fiskai::toolkit
