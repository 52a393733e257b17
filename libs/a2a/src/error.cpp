#include <fiskai/a2a/error.hpp>

#include <boost/system/system_error.hpp>
#include <boost/throw_exception.hpp>

#include <string>

namespace fiskai::a2a {

namespace {

// boost::system::error_category has a protected, non-virtual destructor by design
// (categories are never deleted through a base pointer), which -Wnon-virtual-dtor flags.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wnon-virtual-dtor"
class category final : public boost::system::error_category {
public:
    category() noexcept : boost::system::error_category(0x6a7f1c2d3e4b5a69ULL) {}
    const char* name() const noexcept override { return "fiskai.a2a"; }
    std::string message(int ev) const override {
        switch (static_cast<errc>(ev)) {
            case errc::too_large: return "message exceeds 786432 bytes";
            case errc::invalid_json: return "invalid JSON";
            case errc::unknown_protocol: return "unknown protocol";
            case errc::schema_violation: return "schema validation failed";
            case errc::invalid_field: return "invalid field value";
            case errc::protocol_mismatch: return "unexpected message protocol";
            case errc::unknown_block_type: return "unknown block type";
            case errc::invalid_message: return "invalid message";
            case errc::agent_unavailable: return "remote agent unavailable";
            case errc::error_reply: return "remote agent answered with an error";
            case errc::transport_failure: return "transport failure";
        }
        return "unknown a2a error";
    }
};
#pragma GCC diagnostic pop

const category the_category;

}  // namespace

const boost::system::error_category& a2a_category() noexcept { return the_category; }

boost::system::error_code make_error_code(errc e) noexcept { return {static_cast<int>(e), the_category}; }

error make_error(errc e, std::string_view detail) {
    error out{make_error_code(e), the_category.message(static_cast<int>(e))};
    if (!detail.empty()) {
        out.message += ": ";
        out.message += detail;
    }
    return out;
}

error wrap(error e, std::string_view context) {
    e.message.insert(0, std::string(context) + ": ");
    return e;
}

void throw_exception_from_error(const error& e, const boost::source_location& loc) {
    boost::throw_exception(boost::system::system_error(e.code, e.message), loc);
}

}  // namespace fiskai::a2a
