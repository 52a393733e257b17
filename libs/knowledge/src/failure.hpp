#pragma once
// The exception the store's blocking code throws; every public entry point turns it into
// a knowledge::error.

#include <fiskai/knowledge/store.hpp>

#include <stdexcept>
#include <string>

namespace fiskai::knowledge::detail {

class knowledge_failure : public std::runtime_error {
public:
    knowledge_failure(errc code, const std::string& message) : std::runtime_error(message), code_(code) {}
    [[nodiscard]] errc code() const noexcept { return code_; }

private:
    errc code_;
};

}  // namespace fiskai::knowledge::detail
