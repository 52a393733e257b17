#include <fiskai/a2a_nats/error.hpp>

namespace fiskai::a2a_nats {

namespace {

// boost::system::error_category has a protected, non-virtual destructor by design
// (categories are never deleted through a base pointer), which -Wnon-virtual-dtor flags.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wnon-virtual-dtor"
class category final : public boost::system::error_category {
public:
    category() noexcept : boost::system::error_category(0x5e1d2c3b4a596877ULL) {}
    const char* name() const noexcept override { return "fiskai.a2a_nats"; }
    std::string message(int ev) const override {
        switch (static_cast<errc>(ev)) {
            case errc::no_responders: return "no responders available for request";
            case errc::timed_out: return "no reply before the deadline";
            case errc::not_connected: return "no NATS connection";
            case errc::invalid_name: return "invalid NATS name or subject";
            case errc::subscribe_failed: return "NATS subscription failed";
            case errc::publish_failed: return "NATS publish failed";
            case errc::service_stopped: return "micro service stopped";
            case errc::receive_failed: return "receiving the reply failed";
        }
        return "unknown a2a_nats error";
    }
};
#pragma GCC diagnostic pop

const category the_category;

}  // namespace

const boost::system::error_category& a2a_nats_category() noexcept { return the_category; }

boost::system::error_code make_error_code(errc e) noexcept { return {static_cast<int>(e), the_category}; }

}  // namespace fiskai::a2a_nats
