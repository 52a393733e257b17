#include <fiskai/a2a/codec.hpp>
#include <fiskai/a2a/protocol.hpp>
#include <fiskai/a2a/stamp.hpp>
#include <fiskai/a2a/task_flow.hpp>
#include <fiskai/a2a/transport.hpp>

#include <fiskai/gocompat/quote.hpp>
#include <fiskai/gocompat/utf8.hpp>

#include <algorithm>

namespace fiskai::a2a {
namespace {

// Cuts `s` to about `keep` bytes: a head and a tail around the marker, never splitting a
// UTF-8 sequence.
void trim_middle(std::string& s, std::size_t keep) {
    const auto head = gocompat::utf8_prefix(s, keep / 2);
    // The tail starts at the first byte that begins a character.
    std::size_t tail_start = s.size() - (keep - keep / 2);
    while (tail_start < s.size() && (static_cast<unsigned char>(s[tail_start]) & 0xC0) == 0x80) ++tail_start;
    s = std::string(head) + std::string(trim_marker) + s.substr(tail_start);
}

// The largest text field of a message that may be trimmed, or null.
std::string* largest_text(message& m) {
    std::string* best = nullptr;
    auto consider = [&](std::string& s) {
        if (best == nullptr || s.size() > best->size()) best = &s;
    };
    if (auto* e = std::get_if<task_event>(&m)) {
        if (auto* b = std::get_if<text_block>(&e->block)) consider(b->text);
        if (auto* b = std::get_if<thinking_block>(&e->block)) consider(b->text);
        if (auto* b = std::get_if<tool_result_block>(&e->block)) consider(b->output);
    } else if (auto* r = std::get_if<task_result>(&m)) {
        consider(r->text);
    } else if (auto* err = std::get_if<task_error>(&m)) {
        consider(err->error);
    }
    return best;
}

}  // namespace

std::string_view to_string(task_route r) noexcept {
    switch (r) {
        case task_route::request: return "request";
        case task_route::cancel: return "cancel";
        case task_route::elicit: return "elicit";
        case task_route::delegate: return "delegate";
        case task_route::subscribe: return "subscribe";
    }
    return "unknown";
}

result<std::string> task_subject(task_route r, std::string_view identity, std::string_view task) {
    if (r == task_route::delegate || r == task_route::subscribe) {
        return make_error(errc::transport_failure, "operation not supported");
    }
    if (!is_valid_identity(identity)) {
        return make_error(errc::transport_failure,
                          gocompat::quote(identity) + " is not an identity: it must match ^[a-zA-Z0-9_-]{1,128}$");
    }
    std::string out = std::string(subject_prefix) + "." + std::string(to_string(r)) + "." + std::string(identity);
    if (r == task_route::request) return out;
    if (!is_valid_request_id(task)) {
        return make_error(errc::transport_failure,
                          gocompat::quote(task) + " is not a task id: it must match ^[a-zA-Z0-9_-]{1,64}$");
    }
    return out + "." + std::string(task);
}

inbound_sequencer::arrival inbound_sequencer::receive(std::uint64_t sequence) noexcept {
    const std::uint64_t expected = last_ + 1;
    if (sequence < expected) return {verdict::duplicate, expected};
    last_ = sequence;
    return {sequence == expected ? verdict::accept : verdict::gap, expected};
}

std::string gap_text(std::string_view task, std::string_view sender, std::uint64_t expected, std::uint64_t got) {
    return "gap in task " + std::string(task) + " from " + std::string(sender) + ": expected " +
           std::to_string(expected) + ", got " + std::to_string(got);
}

result<std::string> encode_capped(message m) {
    auto text = encode(m);
    // Each round cuts at least the excess out of the largest field; a field whose escapes
    // make it larger encoded than raw shrinks faster than that. Bounded all the same.
    for (int round = 0; text && text->size() > max_message_size && round < 8; ++round) {
        std::string* field = largest_text(m);
        if (field == nullptr || field->size() <= trim_marker.size()) break;
        const std::size_t excess = text->size() - max_message_size;
        const std::size_t cut = excess + trim_marker.size() + 64;
        trim_middle(*field, field->size() > cut ? field->size() - cut : 0);
        text = encode(m);
    }
    if (!text || text->size() <= max_message_size) return text;
    if (auto* e = std::get_if<task_event>(&m)) {
        const auto encoded = encode(e->block);
        const std::size_t bytes = encoded ? encoded->size() : 0;
        e->block = text_block{"[" + std::string(block_type(e->block)) + " block of " + std::to_string(bytes) +
                              " bytes omitted: over the message cap]"};
        return encode(m);
    }
    return make_error(errc::too_large, std::to_string(text->size()) + " bytes after trimming");
}

void stamp_task_reply(header& h, const header& request, std::string_view self, std::string_view session_id,
                      std::uint64_t sequence) {
    stamp_reply(h, request, self);
    h.conversation = std::string(session_id);
    h.sequence = sequence;
}

}  // namespace fiskai::a2a
