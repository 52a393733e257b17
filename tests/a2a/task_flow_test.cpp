// The task flow's I/O-free rules: subjects built only from checked tokens, reply and
// inbound numbering, the size cap that trims rather than drops, reply stamping.

#include <fiskai/a2a/codec.hpp>
#include <fiskai/a2a/protocol.hpp>
#include <fiskai/a2a/task_flow.hpp>
#include <fiskai/a2a/validator.hpp>

#include "support.hpp"

#include <catch2/catch.hpp>

using namespace fiskai::a2a;

TEST_CASE("a2a.task_flow: subjects are built from checked identity and task tokens", "[a2a][task_flow]") {
    CHECK(task_subject(task_route::request, "svc").value() == "choria.fisk-ai.request.svc");
    CHECK(task_subject(task_route::cancel, "svc", "2wJ4J0aTg5").value() == "choria.fisk-ai.cancel.svc.2wJ4J0aTg5");
    CHECK(task_subject(task_route::elicit, "svc", "t_1-x").value() == "choria.fisk-ai.elicit.svc.t_1-x");
    for (const std::string& bad : std::vector<std::string>{"a.b", "*", ">", "a b", "", std::string(65, 'x')}) {
        CAPTURE(bad);
        const auto r = task_subject(task_route::cancel, "svc", bad);
        REQUIRE_FALSE(r);
        CHECK(r.error().code == errc::transport_failure);
        CHECK_THAT(r.error().message, Catch::Contains("is not a task id: it must match ^[a-zA-Z0-9_-]{1,64}$"));
    }
    CHECK(task_subject(task_route::cancel, "svc", std::string(64, 'x')));
    const auto bad_identity = task_subject(task_route::request, "svc.>");
    REQUIRE_FALSE(bad_identity);
    CHECK_THAT(bad_identity.error().message, Catch::Contains("is not an identity"));
    for (auto r : {task_route::delegate, task_route::subscribe}) {
        const auto s = task_subject(r, "svc", "t");
        REQUIRE_FALSE(s);
        CHECK(s.error().message == "transport failure: operation not supported");
    }
}

TEST_CASE("a2a.task_flow: replies are numbered from 1 and a refused publish keeps its number", "[a2a][task_flow]") {
    reply_sequencer seq;
    CHECK(seq.next() == 1);
    seq.published();
    CHECK(seq.next() == 2);
    // A publish that failed: nothing called, the next try carries 2 again.
    CHECK(seq.next() == 2);
    seq.published();
    CHECK(seq.next() == 3);
}

TEST_CASE("a2a.task_flow: inbound numbering ignores repeats and lets gaps through", "[a2a][task_flow]") {
    inbound_sequencer in;
    using v = inbound_sequencer::verdict;
    CHECK(in.receive(1).kind == v::accept);
    CHECK(in.receive(1).kind == v::duplicate);
    const auto gap = in.receive(4);
    CHECK(gap.kind == v::gap);
    CHECK(gap.expected == 2);
    CHECK(in.receive(3).kind == v::duplicate);
    CHECK(in.receive(5).kind == v::accept);
    CHECK(in.last() == 5);
    CHECK(gap_text("R1", "caller", 2, 4) == "gap in task R1 from caller: expected 2, got 4");
}

namespace {

task_result result_with_text(std::size_t n, char fill = 'a') {
    task_result r;
    r.id = "2wJ4K9";
    r.request = "2wJ4J0aTg5jUe8Hk3XmC7vRnBs1";
    r.conversation = "s1";
    r.sender.name = "svc";
    r.stop_reason = "end_turn";
    r.text = std::string(n, fill);
    return r;
}

}  // namespace

TEST_CASE("a2a.task_flow: the cap trims the largest text to a head and a tail, at 786,432 / 786,433 bytes",
          "[a2a][task_flow]") {
    const std::size_t overhead = encode(result_with_text(1)).value().size() - 1;  // an empty text is omitted
    const auto exact = result_with_text(max_message_size - overhead);
    const auto fits = encode_capped(exact).value();
    CHECK(fits.size() == max_message_size);
    CHECK(fits == encode(exact).value());

    auto over = result_with_text(max_message_size - overhead + 1);
    over.text.front() = 'H';
    over.text.back() = 'T';
    const auto trimmed = encode_capped(over).value();
    CHECK(trimmed.size() <= max_message_size);
    const auto back = std::get<task_result>(default_validator().check(trimmed).value());
    CHECK(back.text.find(trim_marker) != std::string::npos);
    CHECK(back.text.front() == 'H');
    CHECK(back.text.back() == 'T');
    CHECK(back.stop_reason == "end_turn");
}

TEST_CASE("a2a.task_flow: trimming never splits a UTF-8 sequence, and escapes are accounted for", "[a2a][task_flow]") {
    task_result r = result_with_text(0);
    for (int i = 0; i < 200'000; ++i) r.text += "\xC3\xA9<";  // é and a character Go escapes as \u003c
    const auto text = encode_capped(r).value();
    CHECK(text.size() <= max_message_size);
    const auto back = default_validator().check(text);  // valid UTF-8 and JSON, or it would fail here
    REQUIRE(back);
    CHECK(std::get<task_result>(*back).text.find(trim_marker) != std::string::npos);
}

TEST_CASE("a2a.task_flow: an event block that cannot be trimmed is replaced, never dropped", "[a2a][task_flow]") {
    task_event e;
    e.id = "2wJ4KA";
    e.request = "2wJ4J0aTg5jUe8Hk3XmC7vRnBs1";
    e.conversation = "s1";
    e.sender.name = "svc";
    e.sequence = 3;
    tool_call_block call;
    call.id = "toolu_1";
    call.name = "big";
    call.input = raw_json::parse("{\"x\":\"" + std::string(800'000, 'y') + "\"}").value();
    e.block = call;
    const auto text = encode_capped(e).value();
    CHECK(text.size() <= max_message_size);
    const auto back = std::get<task_event>(default_validator().check(text).value());
    const auto& note = std::get<text_block>(back.block);
    CHECK_THAT(note.text,
               Catch::StartsWith("[tool_call block of ") && Catch::EndsWith(" bytes omitted: over the message cap]"));
    CHECK(back.sequence == 3);

    task_event small = e;
    small.block = tool_result_block{"toolu_1", false, std::string(900'000, 'o'), std::nullopt};
    const auto out = encode_capped(small).value();
    CHECK(out.size() <= max_message_size);
    CHECK(std::get<tool_result_block>(std::get<task_event>(default_validator().check(out).value()).block)
              .output.find(trim_marker) != std::string::npos);
}

TEST_CASE("a2a.task_flow: a reply carries the task id, the derived session id and its number", "[a2a][task_flow]") {
    task_request request;
    request.id = "2wJ4J0aTg5jUe8Hk3XmC7vRnBs1";
    request.request = request.id;
    request.conversation = "the caller's own, never used";
    request.sender.name = "caller";
    task_ack ack;
    ack.accepted = true;
    stamp_task_reply(ack, request, "svc", "s_derived", 1);
    CHECK(ack.request == request.id);
    CHECK(ack.conversation == "s_derived");
    CHECK(ack.sequence == 1);
    CHECK(ack.sender.name == "svc");
    CHECK(ack.recipient->name == "caller");
    CHECK(ack.id != request.id);
    CHECK(default_validator().check(encode(message(ack)).value()));
}
