// fisk-ai-conformance-server: libmcpserver with the fixtures the official MCP conformance
// suite (@modelcontextprotocol/conformance) drives: tools of every content kind, logging
// and progress from inside a tool, sampling and elicitation requests, resources and
// templates, prompts, completion and a resumable stream. Everything here is ordinary
// library API (function tools, add_resource, add_prompt, ...): what the suite checks is
// what any embedder gets.
//
//   fisk-ai-conformance-server [--port N]      listens on 127.0.0.1:N/mcp (0: a free port)

#include <fiskai/mcpserver/listener.hpp>
#include <fiskai/mcpserver/protocol.hpp>
#include <fiskai/mcpserver/server.hpp>
#include <fiskai/toolkit/function_tool.hpp>
#include <fiskai/gocompat/json.hpp>
#include <fiskai/gocompat/log.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

namespace asio = boost::asio;
namespace json = boost::json;
using namespace fiskai;
using toolkit::outcome;

namespace {

// A 1x1 red PNG and a tiny silent WAV, base64.
constexpr const char* red_pixel_png =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";
constexpr const char* silent_wav = "UklGRiQAAABXQVZFZm10IBAAAAABAAEAQB8AAIA+AAACABAAZGF0YQAAAAA=";

asio::awaitable<void> pause(std::chrono::milliseconds d) {
    asio::steady_timer t(co_await asio::this_coro::executor, d);
    co_await t.async_wait(asio::use_awaitable);
}

json::object text_block(std::string text) { return json::object{{"type", "text"}, {"text", std::move(text)}}; }
json::object image_block() {
    return json::object{{"type", "image"}, {"data", red_pixel_png}, {"mimeType", "image/png"}};
}
json::object resource_block(std::string uri, std::string mime, std::string text) {
    return json::object{
        {"type", "resource"},
        {"resource", json::object{{"uri", std::move(uri)}, {"mimeType", std::move(mime)}, {"text", std::move(text)}}}};
}
outcome content(std::initializer_list<json::value> blocks) {
    json::array a;
    for (const auto& b : blocks) a.push_back(b);
    return outcome::from_content(std::move(a));
}

using handler = toolkit::function_handler;

toolkit::tool_ptr fixture(std::string name, std::string description, handler h, json::object schema = {}) {
    if (schema.empty()) schema = json::object{{"type", "object"}, {"properties", json::object{}}};
    return toolkit::make_function_tool({.name = std::move(name),
                                        .description = std::move(description),
                                        .input_schema = std::move(schema),
                                        .exposed = toolkit::exposure{toolkit::surface::mcp},
                                        .confirm = toolkit::confirm_posture::not_required,
                                        .handler = std::move(h)});
}

json::object string_args(std::initializer_list<std::string_view> names) {
    json::object props;
    json::array required;
    for (auto n : names) {
        props[n] = json::object{{"type", "string"}};
        required.emplace_back(n);
    }
    return json::object{{"type", "object"}, {"properties", std::move(props)}, {"required", std::move(required)}};
}

// Asks the client, or says plainly why it could not.
asio::awaitable<json::object> ask(const toolkit::call_options& o, std::string method, json::object params) {
    const auto* client = mcpserver::client_channel_of(o);
    if (client == nullptr) throw std::runtime_error("this surface cannot reach the client");
    co_return co_await client->request(std::move(method), std::move(params));
}

toolkit::tool_list fixture_tools() {
    toolkit::tool_list tools;
    tools.push_back(fixture("test_simple_text", "Returns a simple text response",
                            [](const json::object&, const toolkit::call_options&) -> asio::awaitable<outcome> {
                                co_return content({text_block("This is a simple text response for testing.")});
                            }));
    tools.push_back(fixture("test_image_content", "Returns an image",
                            [](const json::object&, const toolkit::call_options&) -> asio::awaitable<outcome> {
                                co_return content({image_block()});
                            }));
    tools.push_back(fixture(
        "test_audio_content", "Returns audio",
        [](const json::object&, const toolkit::call_options&) -> asio::awaitable<outcome> {
            co_return content({json::object{{"type", "audio"}, {"data", silent_wav}, {"mimeType", "audio/wav"}}});
        }));
    tools.push_back(fixture("test_embedded_resource", "Returns an embedded resource",
                            [](const json::object&, const toolkit::call_options&) -> asio::awaitable<outcome> {
                                co_return content({resource_block("test://embedded-resource", "text/plain",
                                                                  "This is an embedded resource content.")});
                            }));
    tools.push_back(fixture("test_multiple_content_types", "Returns text, an image and a resource",
                            [](const json::object&, const toolkit::call_options&) -> asio::awaitable<outcome> {
                                co_return content({text_block("Multiple content types test:"), image_block(),
                                                   resource_block("test://mixed-content-resource", "application/json",
                                                                  R"({"test":"data","value":123})")});
                            }));
    tools.push_back(fixture("test_tool_with_logging", "Logs three messages while it runs",
                            [](const json::object&, const toolkit::call_options& o) -> asio::awaitable<outcome> {
                                o.on_log("info", "Tool execution started");
                                co_await pause(std::chrono::milliseconds(50));
                                o.on_log("info", "Tool processing data");
                                co_await pause(std::chrono::milliseconds(50));
                                o.on_log("info", "Tool execution completed");
                                co_return content({text_block("Tool with logging executed successfully")});
                            }));
    tools.push_back(fixture("test_error_handling", "Always fails",
                            [](const json::object&, const toolkit::call_options&) -> asio::awaitable<outcome> {
                                co_return outcome::failure("This tool intentionally returns an error for testing");
                            }));
    tools.push_back(fixture("test_tool_with_progress", "Reports progress 0, 50 and 100 of 100",
                            [](const json::object&, const toolkit::call_options& o) -> asio::awaitable<outcome> {
                                for (double p : {0.0, 50.0, 100.0}) {
                                    if (o.on_progress) o.on_progress({p, 100.0, {}});
                                    if (p < 100) co_await pause(std::chrono::milliseconds(50));
                                }
                                co_return content({text_block("Tool with progress executed successfully")});
                            }));
    tools.push_back(fixture(
        "test_sampling", "Asks the client's model to answer a prompt",
        [](const json::object& args, const toolkit::call_options& o) -> asio::awaitable<outcome> {
            json::object message{{"role", "user"}, {"content", text_block(std::string(args.at("prompt").as_string()))}};
            json::object params{{"messages", json::array{std::move(message)}}, {"maxTokens", 100}};
            auto answer = co_await ask(o, "sampling/createMessage", std::move(params));
            std::string reply = gocompat::to_json(answer);
            if (const auto* c = answer.if_contains("content"); c && c->is_object()) {
                if (const auto* t = c->get_object().if_contains("text"); t && t->is_string()) reply = t->get_string();
            }
            co_return content({text_block("LLM response: " + reply)});
        },
        string_args({"prompt"})));
    tools.push_back(fixture(
        "test_elicitation", "Asks the user for a name and an email address",
        [](const json::object& args, const toolkit::call_options& o) -> asio::awaitable<outcome> {
            mcpserver::elicitation_form form;
            form.text("username", "User's response", true).text("email", "User's email address", true);
            auto params = mcpserver::form_elicitation(std::string(args.at("message").as_string()), form);
            auto answer = co_await ask(o, "elicitation/create", params);
            if (auto problem = mcpserver::check_elicitation_result(form.schema(), answer)) {
                co_return outcome::failure("the answer was refused: " + *problem);
            }
            co_return content({text_block("User response: " + gocompat::to_json(answer))});
        },
        string_args({"message"})));
    tools.push_back(fixture("test_elicitation_sep1034_defaults", "Asks with a form whose fields have defaults",
                            [](const json::object&, const toolkit::call_options& o) -> asio::awaitable<outcome> {
                                mcpserver::elicitation_form form;
                                form.text("name", "User name", false, "John Doe")
                                    .integer("age", "User age", false, 30)
                                    .number("score", "User score", false, 95.5)
                                    .choice("status", "User status", {"active", "inactive", "pending"}, false, "active")
                                    .boolean("verified", "Verification status", false, true);
                                auto answer =
                                    co_await ask(o, "elicitation/create",
                                                 mcpserver::form_elicitation(
                                                     "Please review and update the form fields with defaults", form));
                                co_return content({text_block("Elicitation completed: " + gocompat::to_json(answer))});
                            }));
    tools.push_back(fixture(
        "test_elicitation_sep1330_enums", "Asks with every kind of enum field",
        [](const json::object&, const toolkit::call_options& o) -> asio::awaitable<outcome> {
            mcpserver::elicitation_form form;
            form.choice("untitledSingle", "Untitled single choice", {"option1", "option2", "option3"})
                .titled_choice("titledSingle", "Titled single choice",
                               {{"value1", "First Option"}, {"value2", "Second Option"}, {"value3", "Third Option"}})
                .legacy_titled_choice("legacyEnum", "Legacy titled choice",
                                      {{"opt1", "Option One"}, {"opt2", "Option Two"}, {"opt3", "Option Three"}})
                .multi_choice("untitledMulti", "Untitled multiple choice", {"option1", "option2", "option3"})
                .titled_multi_choice(
                    "titledMulti", "Titled multiple choice",
                    {{"value1", "First Choice"}, {"value2", "Second Choice"}, {"value3", "Third Choice"}});
            auto answer =
                co_await ask(o, "elicitation/create", mcpserver::form_elicitation("Choose your options", form));
            if (auto problem = mcpserver::check_elicitation_result(form.schema(), answer)) {
                co_return outcome::failure("the answer was refused: " + *problem);
            }
            co_return content({text_block("Elicitation completed: " + gocompat::to_json(answer))});
        }));
    tools.push_back(fixture(
        "json_schema_2020_12_tool", "Tool with JSON Schema 2020-12 features",
        [](const json::object& args, const toolkit::call_options&) -> asio::awaitable<outcome> {
            co_return content({text_block("Received: " + gocompat::to_json(args))});
        },
        json::parse(R"({"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object",
            "$defs":{"address":{"type":"object","properties":{"street":{"type":"string"},"city":{"type":"string"}}}},
            "properties":{"name":{"type":"string"},"address":{"$ref":"#/$defs/address"}},
            "additionalProperties":false})")
            .as_object()));
    tools.push_back(fixture("test_reconnection", "Drops its event stream mid-call; the client resumes it",
                            [](const json::object&, const toolkit::call_options& o) -> asio::awaitable<outcome> {
                                if (const auto* client = mcpserver::client_channel_of(o)) client->interrupt_stream();
                                co_await pause(std::chrono::milliseconds(100));
                                co_return content({text_block("Reconnection test completed successfully")});
                            }));
    return tools;
}

void add_fixtures(mcpserver::server& srv) {
    srv.add_resource({.uri = "test://static-text",
                      .name = "Static text",
                      .description = "A static text resource",
                      .mime_type = "text/plain",
                      .read = [](std::string uri) -> asio::awaitable<json::array> {
                          co_return json::array{
                              json::object{{"uri", uri},
                                           {"mimeType", "text/plain"},
                                           {"text", "This is the content of the static text resource."}}};
                      }});
    srv.add_resource(
        {.uri = "test://static-binary",
         .name = "Static binary",
         .description = "A static binary resource (a PNG)",
         .mime_type = "image/png",
         .read = [](std::string uri) -> asio::awaitable<json::array> {
             co_return json::array{json::object{{"uri", uri}, {"mimeType", "image/png"}, {"blob", red_pixel_png}}};
         }});
    srv.add_resource(
        {.uri = "test://watched-resource",
         .name = "Watched",
         .description = "A resource clients can subscribe to",
         .mime_type = "text/plain",
         .read = [](std::string uri) -> asio::awaitable<json::array> {
             co_return json::array{json::object{{"uri", uri}, {"mimeType", "text/plain"}, {"text", "watched"}}};
         }});
    srv.add_resource_template(
        {.uri_template = "test://template/{id}/data",
         .name = "Template data",
         .description = "Data for an id",
         .mime_type = "application/json",
         .read = [](std::string uri, json::object vars) -> asio::awaitable<json::array> {
             const std::string id(vars.at("id").as_string());
             json::object data{{"id", id}, {"templateTest", true}, {"data", "Data for ID: " + id}};
             co_return json::array{
                 json::object{{"uri", uri}, {"mimeType", "application/json"}, {"text", json::serialize(data)}}};
         }});
    auto message = [](json::object block) { return json::object{{"role", "user"}, {"content", std::move(block)}}; };
    srv.add_prompt({.name = "test_simple_prompt",
                    .description = "A simple prompt without arguments",
                    .get = [message](json::object) -> asio::awaitable<json::object> {
                        co_return json::object{
                            {"messages", json::array{message(text_block("This is a simple prompt for testing."))}}};
                    }});
    srv.add_prompt({.name = "test_prompt_with_arguments",
                    .description = "A prompt with two arguments",
                    .arguments = {{"arg1", "First test argument", true}, {"arg2", "Second test argument", true}},
                    .get = [message](json::object args) -> asio::awaitable<json::object> {
                        const auto text = fmt::format("Prompt with arguments: arg1='{}', arg2='{}'",
                                                      std::string(args.at("arg1").as_string()),
                                                      std::string(args.at("arg2").as_string()));
                        co_return json::object{{"messages", json::array{message(text_block(text))}}};
                    }});
    srv.add_prompt(
        {.name = "test_prompt_with_embedded_resource",
         .description = "A prompt embedding a resource",
         .arguments = {{"resourceUri", "URI of the resource to embed", true}},
         .get = [message](json::object args) -> asio::awaitable<json::object> {
             co_return json::object{
                 {"messages",
                  json::array{message(resource_block(std::string(args.at("resourceUri").as_string()), "text/plain",
                                                     "Embedded resource content for testing.")),
                              message(text_block("Please process the embedded resource above."))}}};
         }});
    srv.add_prompt({.name = "test_prompt_with_image",
                    .description = "A prompt with an image",
                    .get = [message](json::object) -> asio::awaitable<json::object> {
                        co_return json::object{
                            {"messages", json::array{message(image_block()),
                                                     message(text_block("Please analyze the image above."))}}};
                    }});
    srv.set_completion_handler([](json::object, json::object argument, json::object) -> asio::awaitable<json::object> {
        static const std::vector<std::string> words = {"paris", "park", "party", "test", "testing", "tested"};
        const auto* v = argument.if_contains("value");
        const std::string prefix = v && v->is_string() ? std::string(v->get_string()) : "";
        json::array values;
        for (const auto& w : words) {
            if (w.starts_with(prefix)) values.emplace_back(w);
        }
        const auto total = values.size();
        co_return json::object{{"values", std::move(values)}, {"total", total}, {"hasMore", false}};
    });
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App cli{"fisk-ai-conformance-server: libmcpserver with the MCP conformance suite's fixtures"};
    int port = 0;
    cli.add_option("--port", port, "TCP port on 127.0.0.1 (0 picks a free port)");
    CLI11_PARSE(cli, argc, argv);

    asio::io_context ioc;
    mcpserver::server_options options;
    options.name = "fisk-ai-conformance-server";
    options.log = gocompat::stream_logger();
    mcpserver::server srv(ioc.get_executor(), options, fixture_tools());
    add_fixtures(srv);
    for (const auto& w : srv.registered().warnings) fmt::print(stderr, "warning: {}\n", w);
    mcpserver::listener lst(srv, {asio::ip::make_address("127.0.0.1"), static_cast<unsigned short>(port)});
    asio::signal_set signals(ioc, SIGINT, SIGTERM);
    signals.async_wait([&](auto, int) { lst.stop(); });
    fmt::print(stderr, "listening on http://127.0.0.1:{}/mcp\n", lst.local_endpoint().port());
    std::fflush(stderr);
    asio::co_spawn(ioc, lst.run(), [&](std::exception_ptr) { signals.cancel(); });
    ioc.run();
    return 0;
}
