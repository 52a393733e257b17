#pragma once

#include <fiskai/memory/store.hpp>

namespace fiskai::memory::detail {

// The registry's factory for the file backend: options {directory}.
[[nodiscard]] std::shared_ptr<store> file_store_factory(std::string_view options_json, const context& ctx);

// The directory for `options.directory` (empty: `memory/<identity>`): relative ones under
// store_dir when set, else under the working directory; absolute verbatim.
[[nodiscard]] std::string resolve_directory(std::string_view option_directory, std::string_view identity,
                                            std::string_view store_dir);

}  // namespace fiskai::memory::detail
