#include <fiskai/runstate/error.hpp>

#include <boost/system/system_error.hpp>
#include <boost/throw_exception.hpp>

#include <string>

namespace fiskai::runstate {

namespace {

// boost::system::error_category has a protected, non-virtual destructor by design.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wnon-virtual-dtor"
class category final : public boost::system::error_category {
public:
    category() noexcept : boost::system::error_category(0x52756e5374617465ULL) {}
    const char* name() const noexcept override { return "fiskai.runstate"; }
    std::string message(int ev) const override {
        // Go's sentinel texts, verbatim.
        switch (static_cast<errc>(ev)) {
            case errc::not_found: return "run not found";
            case errc::exists: return "run already exists";
            case errc::invalid_id: return "invalid run id";
            case errc::locked: return "run is already locked (by another process or a concurrent run of the same id)";
            case errc::seq_gap: return "record seq gap";
            case errc::corrupt: return "corrupt record sequence";
            case errc::no_records: return "no records";
            case errc::no_meta: return "first record is not meta";
            case errc::unsupported_version: return "unsupported snapshot version";
            case errc::storage: return "session store failure";
        }
        return "unknown runstate error";
    }
};
#pragma GCC diagnostic pop

const category the_category;

}  // namespace

const boost::system::error_category& runstate_category() noexcept { return the_category; }

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

}  // namespace fiskai::runstate
