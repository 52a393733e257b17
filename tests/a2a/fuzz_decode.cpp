// Fuzz target over the arrival pipeline: the size cap, JSON, the protocol id, the schema,
// the typed decode (and the schema-less decode). Nothing may crash, leak or invoke
// undefined behaviour, and whatever is accepted must re-encode into a body that is
// accepted again and re-encodes to the same bytes: the canonical form is a fixed point.
//
// Built twice (cmake/FiskaiFuzz.cmake): with the shared driver in tests/support, and under
// clang's libFuzzer.

#include "../support/fuzz_fail.hpp"

#include <fiskai/a2a/codec.hpp>
#include <fiskai/a2a/validator.hpp>

#include <cstdint>
#include <string>
#include <string_view>

namespace {

[[noreturn]] void fail(std::string_view what, std::string_view body) {
    fiskai::fuzz::fail("a2a fuzz_decode", what, body);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace fiskai::a2a;
    const std::string_view body(reinterpret_cast<const char*>(data), size);

    (void)decode(body);
    const auto m = default_validator().check(body);
    if (!m) return 0;

    const auto text = encode(*m);
    if (!text) fail("an accepted message does not encode", body);
    const auto again = default_validator().check(*text);
    if (!again) fail(("its canonical form is refused: " + again.error().message).c_str(), *text);
    const auto text2 = encode(*again);
    if (!text2 || *text2 != *text) fail("the canonical form is not a fixed point", *text);
    return 0;
}
