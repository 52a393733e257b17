#include <fiskai/net/sse.hpp>

#include <algorithm>

namespace fiskai::net {

bool sse_parser::feed(std::string_view bytes) {
    if (over_limit_) return false;
    if (at_start_ && !bytes.empty()) {
        // The BOM may arrive split across feeds; wait until three bytes are known.
        constexpr std::string_view bom = "\xEF\xBB\xBF";
        line_.append(bytes);
        if (line_.size() < bom.size() && bom.substr(0, line_.size()) == line_) return true;
        at_start_ = false;
        std::string pending = std::move(line_);
        line_.clear();
        std::string_view rest(pending);
        if (rest.substr(0, bom.size()) == bom) rest.remove_prefix(bom.size());
        return feed(rest);
    }
    for (char c : bytes) {
        if (after_cr_) {
            after_cr_ = false;
            if (c == '\n') continue;
        }
        if (c == '\r' || c == '\n') {
            after_cr_ = c == '\r';
            take_line(line_);
            line_.clear();
            continue;
        }
        line_.push_back(c);
        if (line_.size() + data_.size() > event_limit_) {
            over_limit_ = true;
            return false;
        }
    }
    return !over_limit_;
}

std::optional<sse_event> sse_parser::next() {
    if (ready_.empty()) return std::nullopt;
    sse_event event = std::move(ready_.front());
    ready_.pop_front();
    return event;
}

void sse_parser::take_line(std::string_view line) {
    if (line.empty()) {
        dispatch();
        return;
    }
    if (line.front() == ':') return;  // a comment (servers send them as keepalives)
    std::string_view field = line;
    std::string_view value;
    if (const auto colon = line.find(':'); colon != std::string_view::npos) {
        field = line.substr(0, colon);
        value = line.substr(colon + 1);
        if (!value.empty() && value.front() == ' ') value.remove_prefix(1);
    }
    if (field == "event") {
        event_type_ = value;
    } else if (field == "data") {
        data_.append(value);
        data_.push_back('\n');
        if (data_.size() > event_limit_) over_limit_ = true;
    } else if (field == "id") {
        if (value.find('\0') == std::string_view::npos) last_id_ = value;
    } else if (field == "retry") {
        const bool digits =
            !value.empty() && std::all_of(value.begin(), value.end(), [](char c) { return c >= '0' && c <= '9'; });
        // More digits than a 64-bit count holds is not a usable delay: ignored like a non-number.
        if (digits && value.size() <= 18) {
            retry_ = std::chrono::milliseconds(std::stoll(std::string(value)));
            reconnection_time_ = retry_;
        }
    }
    // Any other field is ignored, as the standard says.
}

void sse_parser::dispatch() {
    // A block without data is no event; its event type is forgotten (the id and retry stay).
    if (data_.empty()) {
        event_type_.clear();
        retry_.reset();
        return;
    }
    data_.pop_back();  // the \n after the last data line
    sse_event event;
    if (!event_type_.empty()) event.event = std::move(event_type_);
    event.data = std::move(data_);
    event.id = last_id_;
    event.retry = retry_;
    ready_.push_back(std::move(event));
    data_.clear();
    event_type_.clear();
    retry_.reset();
}

}  // namespace fiskai::net
