#include <fiskai/a2a/transport.hpp>

namespace fiskai::a2a {

std::string_view to_string(route r) noexcept { return r == route::discovery ? "discovery" : "tool"; }

std::string subject(route r, std::string_view identity) {
    std::string out(subject_prefix);
    out.push_back('.');
    out.append(to_string(r));
    out.push_back('.');
    out.append(identity);
    return out;
}

responder& responder::operator=(responder&& other) noexcept {
    if (this != &other) {
        if (send_) {
            try {
                (*this)(reply::refusal(500, "no reply was produced"));
            } catch (...) {  // a binding that cannot send has nobody to tell
            }
        }
        send_ = std::exchange(other.send_, nullptr);
    }
    return *this;
}

responder::~responder() {
    if (!send_) return;
    try {
        (*this)(reply::refusal(500, "no reply was produced"));
    } catch (...) {  // destructors do not throw
    }
}

void responder::operator()(reply r) {
    if (!send_) return;
    auto send = std::exchange(send_, nullptr);
    send(std::move(r));
}

}  // namespace fiskai::a2a
