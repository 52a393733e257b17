// Fuzz target over a session journal as it is read back: a file another process wrote, a
// disk that tore a line, a JetStream message somebody else published. Each line is decoded
// (JSON, protocol, schema, typed decode) and the records that decode are folded into a run
// state, as a resume does. Nothing may crash, leak or invoke undefined behaviour; and a
// record that decodes must encode to bytes that decode to the same record and encode to the
// same bytes again, since a resumed run writes what it read.
//
// Built with the shared driver in tests/support, and under clang's libFuzzer when
// FISKAI_LIBFUZZER_ALL is on (cmake/FiskaiFuzz.cmake).

#include "../support/fuzz_fail.hpp"

#include <fiskai/runstate/records.hpp>
#include <fiskai/runstate/state.hpp>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace {

[[noreturn]] void fail(std::string_view what, std::string_view text) {
    fiskai::fuzz::fail("runstate fuzz_journal", what, text);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace fiskai::runstate;
    const std::string_view text(reinterpret_cast<const char*>(data), size);

    std::vector<record> records;
    std::size_t pos = 0;
    while (pos <= text.size()) {
        const auto nl = text.find('\n', pos);
        const auto end = nl == std::string_view::npos ? text.size() : nl;
        const auto line = text.substr(pos, end - pos);
        pos = end + 1;
        auto rec = decode_record(line);
        if (!rec) {
            if (rec.error().message.empty()) fail("a refused record has no error text", line);
            continue;
        }
        const auto wire = encode_record(*rec);
        auto again = decode_record(wire);
        if (!again) fail(("a decoded record's encoding is refused: " + again.error().message).c_str(), wire);
        if (!(*again == *rec)) fail("a decoded record does not survive its own encoding", wire);
        if (encode_record(*again) != wire) fail("a record's encoding is not a fixed point", wire);
        records.push_back(std::move(*rec));
    }
    // The fold judges the sequence (order, gaps, versions); it may refuse, never crash.
    (void)fold(records);
    return 0;
}
