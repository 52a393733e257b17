#pragma once
// The file backend (`file`, the default): one JSON-lines journal `<id>.json` per run
// under a 0700 directory, one write + fdatasync per record, an OFD write lock on the
// journal file itself held for the journal's life, a torn last line repaired under the
// lock on open. See docs/journal.md.

#include <fiskai/runstate/store.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace fiskai::runstate {

// The largest journal file read (1 GiB): a bigger one is refused as a storage error naming
// its path, rather than read into memory whole.
inline constexpr std::uint64_t max_journal_size = std::uint64_t{1} << 30;

// The directory the backend uses for `options.directory` (empty: unset) and a store dir
// (empty: unset): the option (a relative one rebased under store_dir when set), else
// `<store_dir>/runs`, else `$XDG_STATE_HOME/fisk-ai/runs`, else
// `~/.local/state/fisk-ai/runs`. Never the working directory. Throws startup_error when
// no home directory is known.
[[nodiscard]] std::string resolve_file_directory(std::string_view option_directory, std::string_view store_dir);

// A file store over `directory` used verbatim (created 0700 when missing). Throws
// startup_error when it cannot be created.
[[nodiscard]] std::shared_ptr<store> make_file_store(std::string directory, boost::asio::any_io_executor blocking);

}  // namespace fiskai::runstate
