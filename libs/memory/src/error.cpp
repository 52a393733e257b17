#include <fiskai/memory/store.hpp>

#include <boost/system/system_error.hpp>
#include <boost/throw_exception.hpp>

namespace fiskai::memory {

namespace {

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wnon-virtual-dtor"
class category final : public boost::system::error_category {
public:
    category() noexcept : boost::system::error_category(0x4d656d6f72795374ULL) {}
    const char* name() const noexcept override { return "fiskai.memory"; }
    std::string message(int ev) const override {
        switch (static_cast<errc>(ev)) {
            case errc::exists: return "memory key already exists";
            case errc::not_exist: return "memory key does not exist";
            case errc::stale: return "memory changed since it was read";
            case errc::invalid_key: return "invalid memory key";
            case errc::invalid_write: return "invalid memory write";
            case errc::full: return "memory is full";
            case errc::storage: return "memory store failure";
        }
        return "unknown memory error";
    }
};
#pragma GCC diagnostic pop

const category the_category;

}  // namespace

const boost::system::error_category& memory_category() noexcept { return the_category; }

boost::system::error_code make_error_code(errc e) noexcept { return {static_cast<int>(e), the_category}; }

error make_error(errc e, std::string message) { return error{make_error_code(e), std::move(message)}; }

error make_error(errc e) { return error{make_error_code(e), the_category.message(static_cast<int>(e))}; }

void throw_exception_from_error(const error& e, const boost::source_location& loc) {
    boost::throw_exception(boost::system::system_error(e.code, e.message), loc);
}

}  // namespace fiskai::memory
