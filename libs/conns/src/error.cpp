#include <fiskai/conns/error.hpp>

namespace fiskai::conns {

namespace {

// boost::system::error_category has a protected, non-virtual destructor by design
// (categories are never deleted through a base pointer), which -Wnon-virtual-dtor flags.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wnon-virtual-dtor"
class category final : public boost::system::error_category {
public:
    category() noexcept : boost::system::error_category(0x3c0a4e5f6d7b8c91ULL) {}
    const char* name() const noexcept override { return "fiskai.conns"; }
    std::string message(int ev) const override {
        switch (static_cast<errc>(ev)) {
            case errc::invalid_context_name: return "invalid NATS context name";
            case errc::context_not_found: return "unknown NATS context";
            case errc::no_context_directory: return "cannot locate NATS contexts";
            case errc::unreadable_file: return "cannot read a file the NATS context names";
            case errc::malformed_context: return "malformed NATS context";
            case errc::unsupported_setting: return "NATS context setting not supported";
            case errc::connection_refused: return "no NATS server accepted the connection";
            case errc::timed_out: return "NATS connection timed out";
            case errc::not_authorized: return "NATS authorization failed";
            case errc::tls_failed: return "NATS TLS failure";
            case errc::invalid_setting: return "NATS connection setting refused";
            case errc::connect_failed: return "NATS connection failed";
            case errc::broker_not_installed: return "nats-server is not installed";
            case errc::broker_failed: return "the embedded NATS server failed";
        }
        return "unknown conns error";
    }
};
#pragma GCC diagnostic pop

const category the_category;

}  // namespace

const boost::system::error_category& conns_category() noexcept { return the_category; }

boost::system::error_code make_error_code(errc e) noexcept { return {static_cast<int>(e), the_category}; }

}  // namespace fiskai::conns
