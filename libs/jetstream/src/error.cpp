#include <fiskai/jetstream/error.hpp>

#include <boost/system/system_error.hpp>
#include <boost/throw_exception.hpp>

namespace fiskai::jetstream {

namespace {

// error_category's destructor is protected and non-virtual by design (categories are never
// deleted through a base pointer), which -Wnon-virtual-dtor flags.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wnon-virtual-dtor"
class category final : public boost::system::error_category {
public:
    category() noexcept : boost::system::error_category(0x4a5e7b1c9d3f2a61ULL) {}
    const char* name() const noexcept override { return "fiskai.jetstream"; }
    std::string message(int ev) const override {
        switch (static_cast<errc>(ev)) {
            case errc::not_found: return "not found";
            case errc::api_error: return "JetStream API error";
            case errc::timed_out: return "timed out";
            case errc::no_responders: return "JetStream is not available (no responders)";
            case errc::connection_closed: return "connection closed";
            case errc::invalid_argument: return "invalid argument";
            case errc::cancelled: return "cancelled";
            case errc::failed: return "failed";
        }
        return "unknown jetstream error";
    }
};
#pragma GCC diagnostic pop

}  // namespace

const boost::system::error_category& jetstream_category() noexcept {
    static const category instance;
    return instance;
}

boost::system::error_code make_error_code(errc e) noexcept { return {static_cast<int>(e), jetstream_category()}; }

void throw_exception_from_error(const error& e, const boost::source_location& loc) {
    boost::throw_exception(boost::system::system_error(make_error_code(e.code), e.message), loc);
}

}  // namespace fiskai::jetstream
