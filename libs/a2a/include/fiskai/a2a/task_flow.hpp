#pragma once
// The task flow's rules that need no I/O (serve.md §6.1, §6.4, §6.5): the subjects a task
// uses, the numbering of the worker's replies and of the caller's messages, the size cap
// that trims rather than drops, and the stamping of a reply with the derived session id.

#include <fiskai/a2a/error.hpp>
#include <fiskai/a2a/messages.hpp>

#include <cstdint>
#include <string>
#include <string_view>

namespace fiskai::a2a {

// The task flow's operations. `delegate` and `subscribe` are named only: no subject, no
// binding, and a transport answers them `transport failure: operation not supported`.
enum class task_route { request, cancel, elicit, delegate, subscribe };

[[nodiscard]] std::string_view to_string(task_route r) noexcept;

// `choria.fisk-ai.request.<identity>`, `choria.fisk-ai.cancel.<identity>.<task>`,
// `choria.fisk-ai.elicit.<identity>.<task>`. The identity and the task id become subject
// tokens, so both are checked first (`^[a-zA-Z0-9_-]{1,128}$`, `^[a-zA-Z0-9_-]{1,64}$`):
// no body can shape a subject. `task` is ignored for `request`.
[[nodiscard]] result<std::string> task_subject(task_route r, std::string_view identity, std::string_view task = {});

// The worker's replies to one task are numbered from 1, gap-free: the number advances
// only once a publish has succeeded, so a refused publish is retried with the same one.
class reply_sequencer {
public:
    // The number the next reply carries.
    [[nodiscard]] std::uint64_t next() const noexcept { return next_; }
    // The reply numbered next() went out.
    void published() noexcept { ++next_; }

private:
    std::uint64_t next_ = 1;
};

// The caller's messages to a worker (cancel, answer, keepalive) are numbered from 1 per
// task (the request itself is 0). Core NATS cannot redeliver, so a gap is let through,
// with a warning, and a repeat is ignored.
class inbound_sequencer {
public:
    enum class verdict { accept, duplicate, gap };
    struct arrival {
        verdict kind = verdict::accept;
        std::uint64_t expected = 1;  // what an in-order message would have carried
    };
    [[nodiscard]] arrival receive(std::uint64_t sequence) noexcept;
    [[nodiscard]] std::uint64_t last() const noexcept { return last_; }

private:
    std::uint64_t last_ = 0;
};

// The warning for a gap: `gap in task <R> from <sender>: expected <n>, got <m>`.
[[nodiscard]] std::string gap_text(std::string_view task, std::string_view sender, std::uint64_t expected,
                                   std::uint64_t got);

// The marker put where a text was cut to fit the cap.
inline constexpr std::string_view trim_marker = "\n...[trimmed to fit the 786432-byte message cap]...\n";

// Encodes `m`, and if it is over max_message_size, trims its largest text field (`text`,
// `thinking.text`, `tool_result.output`, `result.text`, `error.error`) to a head and a tail
// around trim_marker, re-encoding until it fits. An event whose block still does not fit
// carries instead a text block `[<type> block of <n> bytes omitted: over the message cap]`.
// Nothing is dropped, so no gap appears in the numbering. Other messages over the cap are
// refused (too_large).
[[nodiscard]] result<std::string> encode_capped(message m);

// Stamps a reply of the task flow: a fresh id; `request` = the task id; `conversation` =
// the derived session id (never the caller's); `sequence` from the sequencer; sender
// `self`; recipient the request's sender name.
void stamp_task_reply(header& h, const header& request, std::string_view self, std::string_view session_id,
                      std::uint64_t sequence);

}  // namespace fiskai::a2a
