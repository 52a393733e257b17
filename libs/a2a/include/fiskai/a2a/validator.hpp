#pragma once
// The arrival pipeline. Every body, on both sides and in both directions, goes through the
// same steps in the same order: the size cap (before anything is parsed), JSON, the
// protocol id (an unknown one is refused outright), the schema that id selects, the typed
// decode, and, on a path that carries one message type, the protocol check.
//
// The schemas are this library's own (schemas/ in the source tree), embedded at build
// time and validated with valijson (JSON Schema draft 7). Each names its own required
// fields and refuses its siblings' payload fields by name; unknown properties are
// accepted (and discarded by the decoder).

#include <fiskai/a2a/error.hpp>
#include <fiskai/a2a/messages.hpp>

#include <memory>
#include <span>
#include <string_view>
#include <utility>
#include <variant>

namespace fiskai::a2a {

class validator {
public:
    // Compiles the embedded schemas. Throws std::runtime_error if they do not compile
    // (they are tested; this is a build defect, never an input error).
    validator();
    ~validator();
    validator(validator&&) noexcept;
    validator& operator=(validator&&) noexcept;

    // Cap, JSON, protocol, schema. Errors: too_large, invalid_json, unknown_protocol,
    // schema_violation.
    [[nodiscard]] result<void> validate(std::string_view body) const;

    // validate(), then the typed decode (invalid_field on a bad time or an integer that is
    // not an in-range integer literal).
    [[nodiscard]] result<message> check(std::string_view body) const;

    // check(), then the protocol this path carries: a valid message of another type is
    // refused with protocol_mismatch (`got "<id>", want "<id>"`), not re-routed.
    [[nodiscard]] result<message> check(std::string_view body, std::string_view expected_protocol) const;

    template <class M>
    requires is_message_v<M>
    [[nodiscard]] result<M> check_as(std::string_view body) const {
        auto m = check(body, M::protocol);
        if (!m) return m.error();
        return std::get<M>(std::move(*m));
    }

    // Safe to share between threads: validation keeps no state in the validator.
private:
    struct impl;
    std::unique_ptr<impl> impl_;
};

// One validator for the process, built on first use.
[[nodiscard]] const validator& default_validator();

// The embedded schema documents, `common.json` first, each with its file name.
struct schema_file {
    std::string_view name;  // e.g. `tool.request.json`; its `$id` is schema_base_url + "/" + name
    std::string_view text;
};
[[nodiscard]] std::span<const schema_file> schema_files() noexcept;

// The schema file a protocol id selects (`tool.request.json`); empty for an unknown id.
[[nodiscard]] std::string_view schema_file_name(std::string_view protocol_id) noexcept;

}  // namespace fiskai::a2a
