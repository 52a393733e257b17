#pragma once
// Bounded capture of a child's combined output. Memory stays bounded however much the
// child writes; the writer never refuses bytes, so the child never blocks on a full pipe.

#include <fiskai/toolkit/process.hpp>

#include <cstddef>
#include <string>
#include <string_view>

namespace fiskai::toolkit {

inline constexpr std::size_t max_tool_output_bytes = 65536;
inline constexpr std::size_t max_introspect_bytes = 16 * 1024 * 1024;
inline constexpr std::string_view truncation_marker = "\n...[output truncated]...\n";

class output_capture {
public:
    output_capture(capture_mode mode, std::size_t cap);

    void write(std::string_view bytes);

    [[nodiscard]] std::size_t total() const noexcept { return total_; }
    [[nodiscard]] bool exceeded() const noexcept { return total_ > cap_; }
    // head_and_tail: the head verbatim when it fits, else first cap/2 bytes + marker + the
    // last cap/2 bytes. head_only: the first cap bytes.
    [[nodiscard]] std::string result() const;

private:
    capture_mode mode_;
    std::size_t cap_;
    std::size_t total_ = 0;
    std::string head_;
    std::string ring_;  // the most recent bytes: at least cap/2 of them once that many arrived
};

}  // namespace fiskai::toolkit
