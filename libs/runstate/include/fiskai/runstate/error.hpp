#pragma once
// How the session journal reports expected failures: a code to branch on (Go's sentinel
// errors) and the full text to show, worded as the Go original's wrapped errors
// (`run not found: "abc"`, `record seq gap: seq 5 skips ahead of 3`).

#include <boost/system/error_code.hpp>
#include <boost/system/result.hpp>

#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>

namespace fiskai::runstate {

// Each code's own text is Go's sentinel text; a message starts with it.
enum class errc {
    not_found = 1,        // run not found
    exists,               // run already exists
    invalid_id,           // invalid run id
    locked,               // run is already locked (by another process or a concurrent run of the same id)
    seq_gap,              // record seq gap
    corrupt,              // corrupt record sequence (also: a stored record failing its schema)
    no_records,           // no records
    no_meta,              // first record is not meta
    unsupported_version,  // unsupported snapshot version
    // The backing store failed (an I/O error, a broker that did not answer in time); the
    // message names the operation and the system's reason.
    storage,
};

[[nodiscard]] const boost::system::error_category& runstate_category() noexcept;
[[nodiscard]] boost::system::error_code make_error_code(errc e) noexcept;

struct error {
    boost::system::error_code code;
    std::string message;

    friend bool operator==(const error&, const error&) = default;
};

// `<code text>: <detail>`, or the code text alone when detail is empty.
[[nodiscard]] error make_error(errc e, std::string_view detail = {});

// The same error with `context: ` in front of its message; the code is kept.
[[nodiscard]] error wrap(error e, std::string_view context);

// result<T>::value() on an error throws boost::system::system_error(code, message).
[[noreturn]] void throw_exception_from_error(const error& e, const boost::source_location& loc);

template <class T>
using result = boost::system::result<T, error>;

// A store that cannot be built (unknown backend, bad options, unusable directory or
// stream). what() is the full text for the operator.
class startup_error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

}  // namespace fiskai::runstate

template <>
struct boost::system::is_error_code_enum<fiskai::runstate::errc> : std::true_type {};
