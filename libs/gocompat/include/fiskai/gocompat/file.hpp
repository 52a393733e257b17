#pragma once
// Reading a whole file, as Go's os.ReadFile does, with the bounds a store needs against files
// it did not write: only a regular file (a FIFO would block the read for good, a link to
// /dev/zero never end it), of at most a given size, also when it grows while it is read.
// The stores (journal, memory, knowledge) keep their own texts around the outcome.

#include <cstdint>
#include <string>

namespace fiskai::gocompat {

enum class file_check { ok, not_regular, too_large, failed };

struct file_outcome {
    file_check status = file_check::ok;
    int error = 0;           // errno, when failed
    std::uint64_t size = 0;  // the size seen (when too_large, the size past the bound)
};

// What `fd` holds: ok with its size when it is a regular file of at most `max_bytes`.
[[nodiscard]] file_outcome check_regular_file(int fd, std::uint64_t max_bytes);

// The whole of the regular file open at `fd`, from offset 0 (pread: the descriptor's offset
// is left alone), into `out`; checked as check_regular_file does, and again for growth.
[[nodiscard]] file_outcome read_regular_file(int fd, std::uint64_t max_bytes, std::string& out);

}  // namespace fiskai::gocompat
