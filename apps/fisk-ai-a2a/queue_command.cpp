// fisk-ai-a2a enqueue AGENT [PROMPT...] [--context N] [--id TASK] [--context-file F] [budget flags]
//                     [--wait D] [--bucket FISK_TASKS] [--json]
// fisk-ai-a2a answer AGENT TASK [--context N] [--bucket FISK_TASKS] [--wait D] [--json]
// fisk-ai-a2a dead-letters AGENT [--retry TASK] [--stream FISK_DEAD] [--context N] [--json]
//
// The queue's producer (serve.md §7.4, §9.3): a job is a task request published with
// JetStream to `choria.fisk-ai.work.<AGENT>` with `Nats-Msg-Id: <task>` (the stream's
// duplicate window absorbs a retry); its answer is the task's terminal message, which a
// worker stores in the task-store bucket under `<AGENT>.<task>`. Nothing is created here.
//
// Exit codes: 0 a result, 1 an error answer or refused input, 2 transport, 6 no answer yet
// (Amendment 17: `answer` never returns 4).

#include "nats_commands.hpp"

#include <fiskai/a2a/codec.hpp>
#include <fiskai/a2a/ids.hpp>
#include <fiskai/a2a/stamp.hpp>
#include <fiskai/a2a/validator.hpp>
#include <fiskai/gocompat/duration.hpp>
#include <fiskai/gocompat/quote.hpp>
#include <fiskai/jetstream/context.hpp>
#include <fiskai/serve/queue_rules.hpp>

#include <boost/json/object.hpp>
#include <boost/json/serialize.hpp>

#include <boost/asio/this_coro.hpp>
#include <boost/asio/thread_pool.hpp>

#include <fmt/format.h>

#include <fstream>
#include <iostream>
#include <iterator>
#include <memory>
#include <optional>
#include <regex>
#include <sstream>
#include <unistd.h>

namespace fiskai::a2a::app {

namespace asio = boost::asio;
namespace js = jetstream;

namespace {

inline constexpr int exit_transport = 2;
inline constexpr int exit_no_answer = 6;
inline constexpr std::string_view producer_identity = "fisk-ai-cli";

// A failure of the transport or the storage: exit 2.
struct transport_failure : std::runtime_error {
    using std::runtime_error::runtime_error;
};
// Input refused: exit 1.
struct refused : std::runtime_error {
    using std::runtime_error::runtime_error;
};

bool token_ok(const std::string& s, std::size_t max) {
    static const std::regex re("^[a-zA-Z0-9_-]+$");
    return !s.empty() && s.size() <= max && std::regex_match(s, re);
}

struct answer_options {
    std::string agent;
    std::string task;
    std::string context;
    std::string bucket = "FISK_TASKS";
    std::string wait;  // a Go duration; empty: do not wait
    bool json = false;
};

struct enqueue_options {
    answer_options answer;
    std::vector<std::string> prompt;
    std::string id;
    std::string context_file;
    std::int64_t max_tokens = 0;
    std::int64_t max_iterations = 0;
    std::string call_timeout;
    std::string stream = "FISK_WORK";  // only names the stream in the size text
};

std::chrono::nanoseconds parse_wait(const std::string& flag, const std::string& value) {
    if (value.empty()) return std::chrono::nanoseconds(0);
    try {
        auto d = gocompat::parse_duration(value);
        if (d.count() < 0)
            throw refused(fmt::format("invalid {} {}: it must not be negative", flag, gocompat::quote(value)));
        return d;
    } catch (const gocompat::duration_error& e) {
        throw refused(fmt::format("invalid {} {}: {}", flag, gocompat::quote(value), e.what()));
    }
}

// JetStream on one connection, with the blocking pool its calls need.
struct queue_client {
    conns::provider nats;
    asio::thread_pool pool{1};
    std::unique_ptr<js::context> jsctx;

    queue_client(const std::string& context, asio::any_io_executor ex)
        : nats(conns::provider::dial(context, producer_identity, connection_options(producer_identity, ex))) {
        jsctx = std::make_unique<js::context>(*nats.nats(), pool.get_executor());
    }
    ~queue_client() {
        jsctx.reset();
        pool.join();
    }
};

// Prints a stored answer and returns its exit code.
int print_answer(const std::string& stored, bool json) {
    auto m = default_validator().check(stored);
    if (!m) throw transport_failure(fmt::format("the stored answer is not a valid message: {}", m.error().message));
    if (json) {
        fmt::print("{}\n", stored);
        std::fflush(stdout);
        if (std::holds_alternative<task_error>(*m)) return exit_refused;
        return exit_ok;
    }
    if (auto* r = std::get_if<task_result>(&*m)) {
        fmt::print("{}\n", r->text);
        return exit_ok;
    }
    if (auto* e = std::get_if<task_error>(&*m)) {
        fmt::print(stderr, "{}: {}\n", e->code.empty() ? e->stop_reason : e->code, e->error);
        return exit_refused;
    }
    throw transport_failure(
        fmt::format("the stored answer is a {} message, not a result or an error", std::string(protocol_of(*m))));
}

asio::awaitable<int> await_answer(queue_client& client, const answer_options& o) {
    const auto wait = parse_wait("--wait", o.wait);
    auto bucket = co_await client.jsctx->bind_kv(o.bucket);
    if (!bucket) {
        if (bucket.error().code == js::errc::not_found)
            throw transport_failure(
                fmt::format("task store KV bucket {} does not exist; create it first (see fisk-ai-serve check)",
                            gocompat::quote(o.bucket)));
        if (bucket.error().code == js::errc::no_responders) throw transport_failure(client.jsctx->not_enabled_text());
        throw transport_failure(
            fmt::format("reading KV bucket {}: {}", gocompat::quote(o.bucket), bucket.error().message));
    }
    const auto key = fmt::format("{}.{}", o.agent, o.task);
    auto got = co_await bucket->get(key);
    if (got) co_return print_answer(got->value, o.json);
    if (got.error().code != js::errc::not_found)
        throw transport_failure(fmt::format("reading {}: {}", key, got.error().message));
    if (wait.count() > 0) {
        js::watch_options wo{true, false, false};
        auto watcher = co_await bucket->watch(key, wo);
        if (!watcher) throw transport_failure(fmt::format("watching {}: {}", key, watcher.error().message));
        const auto end = std::chrono::steady_clock::now() + wait;
        for (;;) {
            const auto left =
                std::chrono::duration_cast<std::chrono::milliseconds>(end - std::chrono::steady_clock::now());
            if (left.count() <= 0) break;
            auto ev = co_await watcher->next(left);
            if (!ev) {
                if (ev.error().code == js::errc::timed_out) break;
                throw transport_failure(fmt::format("watching {}: {}", key, ev.error().message));
            }
            if (ev->entry && ev->entry->operation == js::kv_operation::put) {
                watcher->stop();
                co_return print_answer(ev->entry->value, o.json);
            }
        }
        watcher->stop();
    }
    fmt::print(stderr, "no answer for {} yet\n", o.task);
    co_return exit_no_answer;
}

std::string read_prompt(const std::vector<std::string>& words) {
    if (!words.empty()) {
        std::string p;
        for (const auto& w : words) p += (p.empty() ? "" : " ") + w;
        return p;
    }
    if (::isatty(STDIN_FILENO)) throw refused("no prompt: give it as arguments or on stdin");
    std::string p((std::istreambuf_iterator<char>(std::cin)), std::istreambuf_iterator<char>());
    while (!p.empty() && (p.back() == '\n' || p.back() == '\r')) p.pop_back();
    if (p.empty()) throw refused("no prompt: stdin was empty");
    return p;
}

asio::awaitable<int> guarded(asio::awaitable<int> body) {
    try {
        co_return co_await std::move(body);
    } catch (const refused& e) {
        fmt::print(stderr, "fisk-ai-a2a: error: {}\n", e.what());
        co_return exit_refused;
    } catch (const transport_failure& e) {
        fmt::print(stderr, "fisk-ai-a2a: error: {}\n", e.what());
        co_return exit_transport;
    } catch (const conns::connect_error& e) {
        fmt::print(stderr, "fisk-ai-a2a: error: {}\n", e.what());
        co_return exit_transport;
    }
}

asio::awaitable<int> run_answer(answer_options o) {
    if (!token_ok(o.agent, 128))
        throw refused(
            fmt::format("invalid agent {}: it must match ^[a-zA-Z0-9_-]{{1,128}}$", gocompat::quote(o.agent)));
    if (!token_ok(o.task, 64))
        throw refused(fmt::format("invalid task {}: it must match ^[a-zA-Z0-9_-]{{1,64}}$", gocompat::quote(o.task)));
    parse_wait("--wait", o.wait);
    auto ex = co_await asio::this_coro::executor;
    queue_client client(o.context, ex);
    co_return co_await await_answer(client, o);
}

asio::awaitable<int> run_enqueue(enqueue_options o) {
    auto& a = o.answer;
    if (!token_ok(a.agent, 128))
        throw refused(
            fmt::format("invalid agent {}: it must match ^[a-zA-Z0-9_-]{{1,128}}$", gocompat::quote(a.agent)));
    if (!o.id.empty() && !token_ok(o.id, 64))
        throw refused(fmt::format("invalid --id {}: it must match ^[a-zA-Z0-9_-]{{1,64}}$", gocompat::quote(o.id)));
    parse_wait("--wait", a.wait);
    if (!o.call_timeout.empty()) parse_wait("--call-timeout", o.call_timeout);
    if (o.max_tokens < 0) throw refused(fmt::format("invalid --max-tokens {}: it must not be negative", o.max_tokens));
    if (o.max_iterations < 0)
        throw refused(fmt::format("invalid --max-iterations {}: it must not be negative", o.max_iterations));

    task_request r;
    stamp_request(r, producer_identity, a.agent, o.id.empty() ? new_id() : o.id);
    r.prompt = read_prompt(o.prompt);
    if (!o.context_file.empty()) {
        std::ifstream in(o.context_file, std::ios::binary);
        if (!in) throw refused(fmt::format("cannot read --context-file {}", gocompat::quote(o.context_file)));
        std::ostringstream ss;
        ss << in.rdbuf();
        r.context = ss.str();
    }
    if (o.max_tokens || o.max_iterations || !o.call_timeout.empty())
        r.budget = budget{o.max_tokens, o.max_iterations, o.call_timeout};
    auto body = encode(r);
    if (!body) throw refused(fmt::format("the job cannot be encoded: {}", body.error().message));
    if (auto v = default_validator().check(*body, task_request::protocol); !v)
        throw refused(fmt::format("the job is not a valid request: {}", v.error().message));

    auto ex = co_await asio::this_coro::executor;
    queue_client client(a.context, ex);
    const auto subject = fmt::format("choria.fisk-ai.work.{}", a.agent);
    js::publish_options po;
    po.msg_id = r.request;
    js::headers no_headers;
    auto ack = co_await client.jsctx->publish(subject, *body, no_headers, po);
    if (!ack) {
        const auto& e = ack.error();
        if (e.code == js::errc::no_responders) {
            // Nothing answered the publish: no stream binds the subject, or the server runs
            // without JetStream. Asking the JetStream API tells the two apart.
            auto probed = co_await client.jsctx->get_stream_info(o.stream);
            if (!probed && probed.error().code == js::errc::no_responders)
                throw transport_failure(client.jsctx->not_enabled_text());
        }
        if (e.code == js::errc::no_responders || e.err_code == js::api_stream_not_found)
            throw transport_failure(
                fmt::format("no JetStream stream takes {}; create the work queue stream (see fisk-ai-serve check)",
                            gocompat::quote(subject)));
        if (e.err_code == js::api_message_exceeds_maximum)
            throw refused(fmt::format("job of {} bytes is over the stream {} max message size", body->size(),
                                      gocompat::quote(o.stream)));
        throw transport_failure(fmt::format("publishing the job: {}", e.message));
    }
    fmt::print("{}\n", r.request);
    std::fflush(stdout);
    fmt::print(stderr, "queued {} (stream {} seq {}){}\n", r.request, ack->stream, ack->sequence,
               ack->duplicate ? " (a duplicate: the stream already had it)" : "");
    if (a.wait.empty()) co_return exit_ok;
    a.task = r.request;
    co_return co_await await_answer(client, a);
}

struct dead_letter_options {
    std::string agent;
    std::string stream = "FISK_DEAD";
    std::string retry;
    std::string context;
    bool json = false;
};

asio::awaitable<int> run_dead_letters(dead_letter_options o) {
    namespace rules = serve::queue_rules;
    if (!token_ok(o.agent, 128))
        throw refused(
            fmt::format("invalid agent {}: it must match ^[a-zA-Z0-9_-]{{1,128}}$", gocompat::quote(o.agent)));
    if (!o.retry.empty() && !token_ok(o.retry, 64))
        throw refused(
            fmt::format("invalid --retry {}: it must match ^[a-zA-Z0-9_-]{{1,64}}$", gocompat::quote(o.retry)));
    auto ex = co_await asio::this_coro::executor;
    queue_client client(o.context, ex);
    const auto subject = rules::dead_letter_subject(o.agent);
    auto info = co_await client.jsctx->get_stream_info(o.stream, subject);
    if (!info) {
        if (info.error().code == js::errc::not_found)
            throw transport_failure(
                fmt::format("dead-letter stream {} does not exist (see docs/queue.md)", gocompat::quote(o.stream)));
        if (info.error().code == js::errc::no_responders) throw transport_failure(client.jsctx->not_enabled_text());
        throw transport_failure(fmt::format("reading stream {}: {}", gocompat::quote(o.stream), info.error().message));
    }
    const auto held = info->state.subjects.contains(subject) ? info->state.subjects.at(subject) : 0;
    std::vector<js::message> records;
    if (held > 0) {
        auto read = co_await client.jsctx->ordered_read(o.stream, subject, held, std::chrono::milliseconds(5000));
        if (!read)
            throw transport_failure(
                fmt::format("reading stream {}: {}", gocompat::quote(o.stream), read.error().message));
        records = std::move(*read);
    }

    if (o.retry.empty()) {
        if (records.empty()) fmt::print(stderr, "no dead letters for {}\n", o.agent);
        for (const auto& m : records) {
            auto d = rules::read_dead_letter(m.headers);
            if (!d) continue;
            if (o.json) {
                boost::json::object line{{"task", d->task},
                                         {"stream_seq", d->stream_seq},
                                         {"deliveries", d->deliveries},
                                         {"error", d->error},
                                         {"dead_letter_seq", m.sequence}};
                fmt::print("{}\n", boost::json::serialize(line));
            } else {
                fmt::print("{}  seq {}  deliveries {}  {}\n", d->task.empty() ? "-" : d->task, d->stream_seq,
                           d->deliveries, d->error);
            }
        }
        co_return exit_ok;
    }

    // The newest record of that task: its job goes back on the work queue as it was.
    const js::message* found = nullptr;
    for (const auto& m : records) {
        auto d = rules::read_dead_letter(m.headers);
        if (d && d->task == o.retry) found = &m;
    }
    if (!found) throw refused(fmt::format("no dead letter for task {} on {}", o.retry, o.agent));
    js::publish_options po;
    // A fresh id: the duplicate window may still hold the original one.
    po.msg_id = fmt::format("{}-retry-{}", o.retry, found->sequence);
    js::headers no_headers;
    const auto work = fmt::format("choria.fisk-ai.work.{}", o.agent);
    auto ack = co_await client.jsctx->publish(work, found->data, no_headers, po);
    if (!ack) throw transport_failure(fmt::format("re-enqueueing {}: {}", o.retry, ack.error().message));
    auto removed = co_await client.jsctx->delete_message(o.stream, found->sequence);
    if (!removed)
        fmt::print(stderr, "requeued, but the dead letter could not be removed: {}\n", removed.error().message);
    fmt::print("{}\n", o.retry);
    std::fflush(stdout);
    fmt::print(stderr, "requeued {} (stream {} seq {})\n", o.retry, ack->stream, ack->sequence);
    co_return exit_ok;
}

}  // namespace

subcommand add_dead_letters_command(CLI::App& parent) {
    auto o = std::make_shared<dead_letter_options>();
    auto* cmd = parent.add_subcommand("dead-letters", "List an agent's dead-letter jobs, or re-enqueue one");
    cmd->add_option("agent", o->agent, "The agent's identity")->required();
    cmd->add_option("--retry", o->retry, "Re-enqueue the job of this task id and remove its dead letter");
    cmd->add_option("--stream", o->stream, "The dead-letter stream")->capture_default_str();
    cmd->add_option("--context", o->context, "NATS context (default: the selected one)");
    cmd->add_flag("--json", o->json, "One JSON record per line");
    return {cmd, [o](fiskai::app::runtime&) { return guarded(run_dead_letters(*o)); }};
}

subcommand add_enqueue_command(CLI::App& parent) {
    auto o = std::make_shared<enqueue_options>();
    auto* cmd = parent.add_subcommand("enqueue", "Put a task on an agent's work queue and print its task id");
    cmd->add_option("agent", o->answer.agent, "The agent's identity")->required();
    cmd->add_option("prompt", o->prompt, "The prompt (else read from stdin)");
    cmd->add_option("--context", o->answer.context, "NATS context (default: the selected one)");
    cmd->add_option("--id", o->id, "The task id (default: a fresh KSUID)");
    cmd->add_option("--context-file", o->context_file, "A file whose text becomes the request's context");
    cmd->add_option("--max-tokens", o->max_tokens, "Lower the agent's token budget");
    cmd->add_option("--max-iterations", o->max_iterations, "Lower the agent's iteration limit");
    cmd->add_option("--call-timeout", o->call_timeout, "Lower the agent's LLM call timeout (a Go duration)");
    cmd->add_option("--wait", o->answer.wait, "Then wait this long for the answer (a Go duration)");
    cmd->add_option("--bucket", o->answer.bucket, "The task store KV bucket")->capture_default_str();
    cmd->add_option("--stream", o->stream, "The work queue stream (names it in errors)")->capture_default_str();
    cmd->add_flag("--json", o->answer.json, "With --wait: print the stored answer message");
    return {cmd, [o](fiskai::app::runtime&) { return guarded(run_enqueue(*o)); }};
}

subcommand add_answer_command(CLI::App& parent) {
    auto o = std::make_shared<answer_options>();
    auto* cmd = parent.add_subcommand("answer", "Print the answer a queue worker stored for a task");
    cmd->add_option("agent", o->agent, "The agent's identity")->required();
    cmd->add_option("task", o->task, "The task id enqueue printed")->required();
    cmd->add_option("--context", o->context, "NATS context (default: the selected one)");
    cmd->add_option("--bucket", o->bucket, "The task store KV bucket")->capture_default_str();
    cmd->add_option("--wait", o->wait, "Wait this long for the answer to appear (a Go duration)");
    cmd->add_flag("--json", o->json, "Print the stored answer message");
    return {cmd, [o](fiskai::app::runtime&) { return guarded(run_answer(*o)); }};
}

}  // namespace fiskai::a2a::app
