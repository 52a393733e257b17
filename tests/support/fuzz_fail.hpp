#pragma once
// How a fuzz target reports a broken property: the target, what broke and the input (its
// first 2,000 bytes) on stderr, then abort(), which the shared driver and libFuzzer both
// take as a crash (libFuzzer keeps the input as an artifact).

#include <cstdio>
#include <cstdlib>
#include <string_view>

namespace fiskai::fuzz {

[[noreturn]] inline void fail(std::string_view target, std::string_view what, std::string_view input) {
    constexpr std::size_t shown = 2000;
    std::fprintf(stderr, "%.*s: %.*s\ninput (%zu bytes): %.*s\n", static_cast<int>(target.size()), target.data(),
                 static_cast<int>(what.size()), what.data(), input.size(),
                 static_cast<int>(input.size() > shown ? shown : input.size()), input.data());
    std::abort();
}

}  // namespace fiskai::fuzz
