// Fuzz target over what a configured MCP server sends us: one message, as a stdio line or an
// HTTP body. It is classified (response, server request, notification, not JSON-RPC), and a
// response is read as each answer the client waits for: initialize, a tools/list page, a
// tools/call result rendered for the model. A server is a peer we do not control: nothing
// it sends may crash, leak or invoke undefined behaviour, and a server request is always
// answered with an error reply carrying its id.
//
// Built with the shared driver in tests/support, and under clang's libFuzzer when
// FISKAI_LIBFUZZER_ALL is on (cmake/FiskaiFuzz.cmake).

#include "../support/fuzz_fail.hpp"

#include <fiskai/mcpclient/protocol.hpp>

#include <boost/json.hpp>

#include <cstdint>
#include <string>
#include <string_view>

namespace {

[[noreturn]] void fail(std::string_view what, std::string_view text) {
    fiskai::fuzz::fail("mcpclient fuzz_peer", what, text);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace fiskai::mcpclient;
    namespace json = boost::json;
    const std::string_view text(reinterpret_cast<const char*>(data), size);

    const auto in = classify(text);
    switch (in.what) {
        case incoming::kind::invalid:
            if (in.problem.empty()) fail("a dropped message has no reason", text);
            return 0;
        case incoming::kind::request: {
            const auto* error = in.reply.if_contains("error");
            const auto* version = in.reply.if_contains("jsonrpc");
            if (error == nullptr || !error->is_object() || version == nullptr || *version != "2.0") {
                fail("a server request is not answered with a JSON-RPC error", text);
            }
            boost::system::error_code ec;
            const auto request = json::parse(text, ec);
            if (ec || !request.is_object()) fail("a message that is not a JSON object was taken for a request", text);
            const auto* id = request.as_object().if_contains("id");
            const auto* reply_id = in.reply.if_contains("id");
            if (id == nullptr || reply_id == nullptr || *reply_id != *id)
                fail("the error reply lost the request's id", text);
            return 0;
        }
        case incoming::kind::notification: return 0;
        case incoming::kind::response: break;
    }

    if (const auto identity = read_initialize_response("srv", in.message); identity) {
        if (!accepted_protocol_version(identity->protocol_version)) fail("an unsupported revision was accepted", text);
    }
    if (const auto page = read_tools_page("srv", in.message); page) {
        for (const auto& tool : page->tools) {
            (void)local_tool_name("srv", tool.name);
            (void)skipping_tool_text("srv", tool.name);
            (void)json::serialize(tool.input_schema);
        }
    }
    const auto outcome = call_outcome("srv", "tool", in.message);
    (void)outcome.render();
    (void)describe_call("srv", "tool", in.message);
    return 0;
}
