// A separate project using the installed fiskai::toolkit: define a function-backed tool
// and call it.
#include <fiskai/toolkit/function_tool.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/json/parse.hpp>

#include <iostream>

int main() {
    using namespace fiskai::toolkit;
    auto greet = make_function_tool({
        .name = "greet",
        .description = "Greets someone",
        .input_schema =
            boost::json::parse(R"({"type":"object","required":["who"],"properties":{"who":{"type":"string"}}})")
                .as_object(),
        .exposed = exposure{surface::mcp},
        .confirm = confirm_posture::not_required,
        .handler = [](const boost::json::object& args, const call_options&) -> boost::asio::awaitable<outcome> {
            co_return outcome::from_json(
                boost::json::object{{"greeting", "hello, " + std::string(args.at("who").as_string())}});
        },
    });
    boost::asio::io_context ioc;
    auto result = boost::asio::co_spawn(ioc, greet->call(boost::json::parse(R"({"who":"installed world"})"), {}),
                                        boost::asio::use_future);
    ioc.run();
    std::cout << result.get().render() << "\n";
    return 0;
}
