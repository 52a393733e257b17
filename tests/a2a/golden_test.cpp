// Bodies in the exact shape the Go original emits (the reference note's captured examples,
// and the task-flow messages built by its rules) decode, validate and re-encode byte-equal.

#include <fiskai/a2a/codec.hpp>
#include <fiskai/a2a/validator.hpp>

#include "support.hpp"

#include <catch2/catch.hpp>

using namespace fiskai::a2a;

TEST_CASE("a2a.golden: golden bodies re-encode byte for byte", "[a2a][golden]") {
    const auto files = a2a_test::golden_files();
    REQUIRE(files.size() >= 20);
    for (const auto& path : files) {
        CAPTURE(path.filename().string());
        const auto text = a2a_test::read_file(path);
        REQUIRE_FALSE(text.empty());
        REQUIRE(text.back() == '}');  // Go writes no trailing newline

        const auto checked = default_validator().check(text);
        REQUIRE(checked);
        const auto decoded = decode(text);
        REQUIRE(decoded);
        CHECK(*decoded == *checked);
        const auto again = encode(*decoded);
        REQUIRE(again);
        CHECK(*again == text);
    }
}

TEST_CASE("a2a.golden: golden: discovery (16.1, 16.2)", "[a2a][golden]") {
    const auto request = decode(a2a_test::read_file(a2a_test::golden_dir() / "discovery.request.json")).value();
    const auto& req = std::get<discovery_request>(request);
    CHECK(req.id == "2wJ4H0sTQqS7xYvEo1Rm9LkPbZd");
    CHECK(req.request == req.id);
    CHECK(req.conversation == req.id);
    CHECK(req.sender.name == "caller");
    CHECK(req.recipient->name == "svc");

    const auto reply = decode(a2a_test::read_file(a2a_test::golden_dir() / "discovery.reply.json")).value();
    const auto& card = std::get<discovery_reply>(reply);
    CHECK(card.request == req.id);
    CHECK(card.name == "svc");
    CHECK(card.version == "v1");
    CHECK(card.protocols == std::vector<std::string>{"io.choria.fisk-ai.v1"});
    REQUIRE(card.tools.size() == 1);
    CHECK(card.tools[0].name == "ping");
    CHECK(card.tools[0].description == "a command");
    CHECK(card.tools[0].input_schema->text() == R"({"additionalProperties":false,"properties":{},"type":"object"})");
}

TEST_CASE("a2a.golden: golden: tool calls and replies (16.3 to 16.8)", "[a2a][golden]") {
    auto load = [](const char* name) { return decode(a2a_test::read_file(a2a_test::golden_dir() / name)).value(); };

    CHECK_FALSE(std::get<tool_request>(load("tool.request.json")).input);
    CHECK(std::get<tool_request>(load("tool.request.input.json")).input->text() == R"({"stream":"ORDERS"})");

    const auto ok = std::get<tool_reply>(load("tool.reply.exit0.json"));
    CHECK_FALSE(ok.is_error);
    CHECK(ok.output == "pong\n");
    CHECK(ok.exec == exec_result{"ping", 0, false});

    const auto three = std::get<tool_reply>(load("tool.reply.exit3.json"));
    CHECK_FALSE(three.is_error);
    CHECK(three.exec->exit_code == 3);

    const auto unknown = std::get<tool_reply>(load("tool.reply.unknown.json"));
    CHECK(unknown.is_error);
    CHECK(unknown.output == R"(tool "missing" is not available)");
    CHECK_FALSE(unknown.exec);

    const auto timeout = std::get<tool_reply>(load("tool.reply.timeout.json"));
    CHECK(timeout.is_error);
    CHECK(timeout.time.to_string() == "2026-05-04T09:15:57.511000093Z");
}

TEST_CASE("a2a.golden: golden: the task flow", "[a2a][golden]") {
    auto load = [](const char* name) { return decode(a2a_test::read_file(a2a_test::golden_dir() / name)).value(); };

    const auto task = std::get<task_request>(load("request.json"));
    CHECK(task.prompt == "list the <streams> & consumers");
    CHECK(task.budget == budget{1000, 5, "60s"});
    CHECK_FALSE(task.wants_stream());
    CHECK(task.must_understand);
    CHECK(task.sender.instance == "a1");

    const auto status = std::get<task_event>(load("event.status.json"));
    CHECK(std::get<status_block>(status.block) == status_block{2, "calling-llm", usage{10, 20}});

    const auto call = std::get<task_event>(load("event.tool_call.json"));
    CHECK(std::get<tool_call_block>(call.block).input->text() == R"({"a":1,"b":[1.50,2e3,-0],"c":"\u003cx\u003e"})");

    const auto unknown = std::get<task_event>(load("event.unknown.json"));
    CHECK(std::get<unknown_block>(unknown.block).type() == "image");

    CHECK(std::get<task_result>(load("result.unknown-stop.json")).stop_reason == "tea_break");
    CHECK(std::get<task_result>(load("result.json")).time.offset() == std::chrono::minutes(120));
    CHECK(std::get<task_error>(load("error.json")).error == "the model refused");
    CHECK_FALSE(std::get<task_ack>(load("ack.json")).accepted);
}
