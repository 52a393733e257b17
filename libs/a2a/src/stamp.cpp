#include <fiskai/a2a/stamp.hpp>

namespace fiskai::a2a {

void stamp_request(header& h, std::string_view self, std::string_view target, std::string id, timestamp at) {
    h.request = id;
    h.conversation = id;
    h.id = std::move(id);
    h.parent.clear();
    h.sequence = 0;
    h.time = at;
    h.sender = identity{std::string(self), {}};
    if (target.empty()) {
        h.recipient.reset();
    } else {
        h.recipient = identity{std::string(target), {}};
    }
    h.must_understand = false;
}

void stamp_reply(header& h, const header& request, std::string_view self, std::string id, timestamp at) {
    h.id = std::move(id);
    h.request = request.request;
    h.conversation = request.conversation;
    h.parent.clear();
    h.sequence = 0;
    h.time = at;
    h.sender = identity{std::string(self), {}};
    if (request.sender.name.empty()) {
        h.recipient.reset();
    } else {
        h.recipient = identity{request.sender.name, {}};
    }
    h.must_understand = false;
}

}  // namespace fiskai::a2a
