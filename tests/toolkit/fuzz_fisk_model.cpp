// Fuzz target over fisk introspection: arbitrary bytes -> parse_fisk_model -> derive_tools.
// The document comes from a child process the server does not control, so whatever it
// prints must end in parse_fisk_model's runtime_error or a derive_error, never a crash,
// another exception type or undefined behaviour; and the tools derived from what is
// accepted must be well formed (unique names that match their command paths).
//
// Built twice: with clang's libFuzzer (-fsanitize=fuzzer) and, for g++, with the driver in
// tests/support/fuzz_driver.cpp.

#include "../support/fuzz_fail.hpp"

#include <fiskai/toolkit/derive.hpp>
#include <fiskai/toolkit/fisk_model.hpp>

#include <cstdint>
#include <exception>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace {

using namespace fiskai::toolkit;

[[noreturn]] void fail(std::string_view what, std::string_view text) {
    fiskai::fuzz::fail("fuzz_fisk_model", what, text);
}

std::string join(const std::vector<std::string>& words, char separator) {
    std::string out;
    for (std::size_t i = 0; i < words.size(); ++i) {
        if (i > 0) out += separator;
        out += words[i];
    }
    return out;
}

void check_derivation(const derivation& d, std::string_view text) {
    std::set<std::string> names;
    for (const auto& spec : d.tools) {
        if (spec.path.empty()) fail("a tool without a command path", text);
        if (spec.name != join(spec.path, '_')) fail("tool name " + spec.name + " does not match its path", text);
        if (spec.title != join(spec.path, ' ')) fail("tool title " + spec.title + " does not match its path", text);
        if (!names.insert(spec.name).second) fail("two tools named " + spec.name, text);
    }
}

void derive_and_check(const fisk_application& app, const derive_options& options, std::string_view text) {
    try {
        check_derivation(derive_tools(app, options), text);
    } catch (const derive_error& e) {
        if (std::string_view(e.what()).empty()) fail("a derive_error without a message", text);
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    try {
        fisk_application app;
        try {
            app = parse_fisk_model(text);
        } catch (const std::runtime_error& e) {
            if (std::string_view(e.what()).empty()) fail("a parse error without a message", text);
            return 0;
        }
        derive_and_check(app, {}, text);

        // Every global flag the application offers, the demo's confirm tag and a filter
        // pass: the paths that merge flags into schemas and match tags.
        derive_options options;
        for (const auto& flag : exposable_global_flags(app)) options.global_flags.push_back(flag.name);
        for (const auto& flag : app.flags) options.global_flags.push_back(flag.name);
        options.confirm_tags = {"change:config", ""};
        options.include.tags = {"", "scope:read"};
        options.serve_exclude.tools = {"_rm$"};
        derive_and_check(app, options, text);
    } catch (const std::exception& e) {
        fail(std::string("an unexpected exception escaped: ") + e.what(), text);
    }
    return 0;
}
