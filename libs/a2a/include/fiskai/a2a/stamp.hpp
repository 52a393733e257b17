#pragma once
// Stamping fills the header of an outgoing message. It is header population, not
// signing: there is no signature or MAC, and nothing in a body (sender, recipient) is
// ever used for authorisation. A reply goes to the inbox the transport supplied, never to
// an address taken from a body.

#include <fiskai/a2a/ids.hpp>
#include <fiskai/a2a/messages.hpp>

#include <string>
#include <string_view>

namespace fiskai::a2a {

// A direct request is its own task and session: one fresh id as `id`, `request` and
// `conversation`; sequence 0; sender `{name: self}`; recipient `{name: target}` unless
// target is empty. `parent` and `must_understand` are cleared.
void stamp_request(header& h, std::string_view self, std::string_view target, std::string id = new_id(),
                   timestamp at = timestamp::now());

// A reply: a fresh id; `request` and `conversation` echoed from the request; sequence 0;
// sender `{name: self}`; recipient the request's sender name (its instance dropped),
// unless that is empty. `parent` is not copied.
void stamp_reply(header& h, const header& request, std::string_view self, std::string id = new_id(),
                 timestamp at = timestamp::now());

}  // namespace fiskai::a2a
