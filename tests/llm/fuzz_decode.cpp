// Fuzz target over what a model server sends back: the Anthropic and OpenAI response
// bodies and error bodies. A provider is a peer on the network (a local model server, a
// proxy, a hostile endpoint): nothing it sends may crash, leak or invoke undefined
// behaviour. And a block Anthropic's decoder accepts goes back to the API on the next
// request (the history), so its encoding must decode to the same block.
//
// Built with the shared driver in tests/support, and under clang's libFuzzer when
// FISKAI_LIBFUZZER_ALL is on (cmake/FiskaiFuzz.cmake).

#include "../support/fuzz_fail.hpp"

#include <fiskai/llm/anthropic_codec.hpp>
#include <fiskai/llm/openai_codec.hpp>

#include <cstdint>
#include <string>
#include <string_view>
#include <variant>

namespace {

[[noreturn]] void fail(std::string_view what, std::string_view body) {
    fiskai::fuzz::fail("llm fuzz_decode", what, body);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace fiskai::llm;
    const std::string_view body(reinterpret_cast<const char*>(data), size);

    (void)anthropic::status_error_text(529, body, std::string_view("req_1"));
    (void)anthropic::status_error_text(400, body, std::nullopt);
    (void)openai::status_error_text(500, body);
    (void)openai::decode_response(body);

    const auto decoded = anthropic::decode_response(body);
    if (!decoded) {
        if (decoded.error().rfind("anthropic: ", 0) != 0) fail("a refusal does not name its provider", body);
        return 0;
    }
    for (const auto& block : decoded->content) {
        // A tool call whose arguments were not an object is sent back as `{}` on purpose
        // (the loop answers it with the error), so it cannot come back equal.
        if (const auto* use = std::get_if<tool_use_block>(&block); use != nullptr && use->input_error) continue;
        const auto wire = anthropic::encode_block(block);
        const auto again = anthropic::decode_block(wire);
        if (!again) fail(("an accepted block's encoding is refused: " + again.error()).c_str(), wire);
        if (*again != block) fail("an accepted block does not survive its own encoding", wire);
    }
    return 0;
}
