// The server-sent events parser, free of I/O, against the WHATWG interpretation rules.

#include <fiskai/net/sse.hpp>

#include <catch2/catch.hpp>

#include <vector>

using fiskai::net::sse_event;
using fiskai::net::sse_parser;

namespace {

std::vector<sse_event> parse_all(sse_parser& parser, std::string_view bytes) {
    REQUIRE(parser.feed(bytes));
    std::vector<sse_event> out;
    while (auto event = parser.next()) out.push_back(std::move(*event));
    return out;
}

std::vector<sse_event> parse_all(std::string_view bytes) {
    sse_parser parser;
    return parse_all(parser, bytes);
}

}  // namespace

TEST_CASE("sse: fields, multi-line data, default type, comments", "[sse]") {
    auto events = parse_all(
        ": a comment the server sends to keep the line open\n"
        "data: first\n\n"
        "event: message\nid: 7\ndata: line one\ndata: line two\nretry: 1500\n\n"
        "event: endpoint\ndata:/mcp?session=1\n\n");
    REQUIRE(events.size() == 3);
    CHECK(events[0].event == "message");
    CHECK(events[0].data == "first");
    CHECK(events[0].id.empty());
    CHECK_FALSE(events[0].retry.has_value());
    CHECK(events[1].data == "line one\nline two");
    CHECK(events[1].id == "7");
    CHECK(events[1].retry == std::chrono::milliseconds(1500));
    CHECK(events[2].event == "endpoint");
    CHECK(events[2].data == "/mcp?session=1");
    CHECK(events[2].id == "7");  // the last event id persists
}

TEST_CASE("sse: CRLF, CR and LF line ends, split anywhere", "[sse]") {
    const std::string stream = "data: a\r\n\r\ndata: b\r\rdata: c\n\n";
    for (std::size_t cut = 0; cut <= stream.size(); ++cut) {
        sse_parser parser;
        REQUIRE(parser.feed(stream.substr(0, cut)));
        REQUIRE(parser.feed(stream.substr(cut)));
        std::vector<std::string> data;
        while (auto event = parser.next()) data.push_back(event->data);
        INFO("cut at " << cut);
        CHECK(data == std::vector<std::string>{"a", "b", "c"});
    }
}

TEST_CASE("sse: the standard's edge cases", "[sse]") {
    // One space after the colon is dropped, no more; a field without a colon has an empty value.
    auto spaced = parse_all("data:  two spaces\ndata\n\n");
    REQUIRE(spaced.size() == 1);
    CHECK(spaced[0].data == " two spaces\n");

    // A block without data dispatches nothing and forgets its event type.
    auto no_data = parse_all("event: ping\n\ndata: x\n\n");
    REQUIRE(no_data.size() == 1);
    CHECK(no_data[0].event == "message");

    // `data:` with an empty value is an event with empty data.
    auto empty = parse_all("data:\n\n");
    REQUIRE(empty.size() == 1);
    CHECK(empty[0].data.empty());

    // Unknown fields and a non-numeric retry are ignored; an id with NUL is ignored.
    sse_parser parser;
    auto ignored = parse_all(parser, std::string("foo: bar\nretry: 10s\nid: a\0b\ndata: y\n\n", 38));
    REQUIRE(ignored.size() == 1);
    CHECK(ignored[0].data == "y");
    CHECK(ignored[0].id.empty());
    CHECK_FALSE(ignored[0].retry.has_value());

    // A retry in a block without data still sets the reconnection time.
    sse_parser retry_only;
    CHECK(parse_all(retry_only, "retry: 250\n\n").empty());
    CHECK(retry_only.reconnection_time() == std::chrono::milliseconds(250));

    // An unfinished last block is not an event.
    CHECK(parse_all("data: complete\n\ndata: cut off").size() == 1);
}

TEST_CASE("sse: a leading byte order mark is dropped, even split", "[sse]") {
    sse_parser parser;
    REQUIRE(parser.feed("\xEF"));
    REQUIRE(
        parser.feed("\xBB\xBF"
                    "data: x\n\n"));
    auto event = parser.next();
    REQUIRE(event.has_value());
    CHECK(event->data == "x");
}

TEST_CASE("sse: an event over the limit fails the stream", "[sse]") {
    sse_parser parser(16);
    CHECK(parser.feed("data: 0123456789\n\n"));  // 10 bytes of data: fits
    CHECK(parser.next().has_value());
    CHECK_FALSE(parser.feed("data: 0123456789\ndata: 0123456789\n\n"));
    CHECK(parser.over_limit());
    CHECK_FALSE(parser.feed("data: more\n\n"));
}
