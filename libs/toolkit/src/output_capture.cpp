#include <fiskai/toolkit/output_capture.hpp>

namespace fiskai::toolkit {

output_capture::output_capture(capture_mode mode, std::size_t cap) : mode_(mode), cap_(cap) {}

void output_capture::write(std::string_view bytes) {
    total_ += bytes.size();
    if (head_.size() < cap_) {
        const auto take = std::min(bytes.size(), cap_ - head_.size());
        head_.append(bytes.substr(0, take));
    }
    if (mode_ != capture_mode::head_and_tail) return;
    // The tail keeps the most recent cap/2 bytes. It is trimmed lazily, at twice its size,
    // so a stream of small writes costs amortised constant time per byte.
    const std::size_t half = cap_ / 2;
    if (bytes.size() >= half) {
        ring_.assign(bytes.substr(bytes.size() - half));
        return;
    }
    ring_.append(bytes);
    if (ring_.size() > 2 * half) ring_.erase(0, ring_.size() - half);
}

std::string output_capture::result() const {
    if (total_ <= cap_ || mode_ == capture_mode::head_only) return head_;
    const std::size_t half = cap_ / 2;
    std::string out;
    out.reserve(cap_ + truncation_marker.size());
    out.append(head_, 0, half);
    out.append(truncation_marker);
    out.append(ring_.size() > half ? std::string_view(ring_).substr(ring_.size() - half) : std::string_view(ring_));
    return out;
}

}  // namespace fiskai::toolkit
