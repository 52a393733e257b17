// Both providers against the real fiskai-fake-llm over loopback HTTP and TLS: headers,
// bodies, retries and their delays, no retry on 400, the deadline, refused certificates,
// and the configuration texts.

#include "temp_dir.hpp"
#include "fake_llm_process.hpp"
#include "tls_fixture.hpp"

#include <fiskai/llm/anthropic_codec.hpp>
#include <fiskai/llm/provider.hpp>
#include <fiskai/net/http_client.hpp>

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/json.hpp>

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

using namespace fiskai;
using namespace std::chrono_literals;
namespace asio = boost::asio;
namespace json = boost::json;

namespace {

const std::string fake_binary = FISKAI_FAKE_LLM;

using fiskai::test::temp_dir;

// The environment a provider reads, cleared so the runner's own settings cannot leak in.
void clear_llm_env() {
    for (const char* name : {"ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL", "OPENAI_API_KEY",
                             "OPENAI_BASE_URL", "FISKAI_TEST_KEY"}) {
        ::unsetenv(name);
    }
}

struct fake_server {
    temp_dir dir;
    test::fake_llm_process process;
    fake_server(const std::string& script, std::vector<std::string> extra = {})
        : process(fake_binary, args(dir.write("script.json", script), std::move(extra))) {}
    static std::vector<std::string> args(const std::string& script, std::vector<std::string> extra) {
        const auto log = std::filesystem::path(script).parent_path() / "log.jsonl";
        std::vector<std::string> out{"--script", script, "--port", "0", "--exit-with-parent", "--log", log.string()};
        out.insert(out.end(), extra.begin(), extra.end());
        return out;
    }
    [[nodiscard]] std::string url(const std::string& scheme = "http", const std::string& host = "127.0.0.1") const {
        return fmt::format("{}://{}:{}", scheme, host, process.port());
    }
};

// Runs a coroutine on `ioc` (the one the client and provider are bound to) to completion,
// failing the test if it has not finished by the deadline.
template <class T>
T run_on(asio::io_context& ioc, asio::awaitable<T> work, std::chrono::steady_clock::duration deadline) {
    auto future = asio::co_spawn(ioc, std::move(work), asio::use_future);
    // The client's idle pool keeps the context busy, so run until the result is in.
    const auto end = std::chrono::steady_clock::now() + deadline;
    while (future.wait_for(0s) != std::future_status::ready && std::chrono::steady_clock::now() < end) {
        ioc.run_one_for(50ms);
    }
    if (future.wait_for(0s) != std::future_status::ready) {
        throw std::runtime_error("coroutine did not finish within the test deadline");
    }
    return future.get();
}

// The fake's request log, one parsed JSON line per request.
std::vector<json::object> request_log(const fake_server& fake) {
    asio::io_context ioc;
    net::http_client client(ioc.get_executor());
    auto body = run_on(
        ioc,
        [&]() -> asio::awaitable<std::string> {
            // Bound to a local: GCC 12 destroys a temporary in a co_await expression twice.
            net::http_request get{"GET", fake.url() + "/_fake/requests", {}, ""};
            auto got = co_await client.send(std::move(get), std::chrono::steady_clock::now() + 10s);
            co_return got ? got->body : std::string("error: ") + got.error().message;
        }(),
        20s);
    std::vector<json::object> lines;
    std::size_t start = 0;
    while (start < body.size()) {
        const auto end = body.find('\n', start);
        lines.push_back(json::parse(body.substr(start, end - start)).as_object());
        if (end == std::string::npos) break;
        start = end + 1;
    }
    return lines;
}

llm::request ask(const std::string& prompt) {
    llm::request r;
    r.model = "claude-test";
    r.system = {"You are a test."};
    r.messages = {llm::message{llm::role::user, {llm::text_block{prompt}}}};
    r.tools = {llm::tool_def{"stream_info", "Shows a stream",
                             json::parse(R"({"type":"object","properties":{"stream":{"type":"string"}}})").as_object(),
                             false}};
    return r;
}

struct call_outcome {
    llm::call_result<llm::response> result;
    std::chrono::steady_clock::duration took;
};

// One call on a fresh io_context and client (the client reads SSL_CERT_FILE when built).
call_outcome call_once(const llm::provider_config& config, llm::request r, std::chrono::nanoseconds timeout = 10s) {
    asio::io_context ioc;
    net::http_client client(ioc.get_executor());
    auto provider = llm::make_provider(config, ioc.get_executor(), client);
    const auto start = std::chrono::steady_clock::now();
    auto result = run_on(ioc, provider->call(std::move(r), timeout), 30s);
    return {std::move(result), std::chrono::steady_clock::now() - start};
}

llm::provider_config anthropic_at(const std::string& url) {
    llm::provider_config c;
    c.name = "anthropic";
    c.base_url = url;
    c.api_key = "sk-test-key";
    return c;
}

const char* const two_step_script = R"({"conversations":[{"name":"orders","when":{"prompt_contains":"ORDERS"},
  "steps":[{"expect":{"tools_include":["stream_info"]},
            "reply":{"content":[{"type":"thinking","thinking":"Look it up.","signature":"c2lnLzEr+/=="},
                                {"type":"text","text":"Checking."},
                                {"type":"tool_use","name":"stream_info","input":{"stream":"ORDERS"}}],
                     "stop_reason":"tool_use","usage":{"input_tokens":1200,"output_tokens":80,"cache_read_input_tokens":5}}},
           {"expect":{"last_tool_result_contains":"12 messages"},
            "reply":{"content":[{"type":"text","text":"ORDERS holds 12 messages."}],"stop_reason":"end_turn"}}]}]})";

std::string faults_script(const std::string& faults) {
    return R"({"conversations":[{"name":"f","steps":[{"faults":)" + faults +
           R"(,"reply":{"content":[{"type":"text","text":"done"}],"stop_reason":"end_turn"}}]}]})";
}

}  // namespace

TEST_CASE("anthropic over HTTP: headers, body, thinking echoed, tool calls", "[llm][http]") {
    clear_llm_env();
    fake_server fake(two_step_script);
    auto r = ask("How many in ORDERS?");
    auto first = call_once(anthropic_at(fake.url()), r);
    REQUIRE(first.result.has_value());
    const auto& reply = *first.result;
    CHECK(reply.stop_reason == "tool_use");
    CHECK(reply.request_id == "req_fake_1");
    CHECK(reply.used == llm::usage{1200, 80, 5, 0});
    REQUIRE(reply.content.size() == 3);
    const auto use = std::get<llm::tool_use_block>(reply.content[2]);
    CHECK(use == llm::tool_use_block{"toolu_orders_0_2", "stream_info", R"({"stream":"ORDERS"})", std::nullopt});

    r.messages.push_back(llm::message{llm::role::assistant, reply.content});
    r.messages.push_back(llm::message{llm::role::user, {llm::tool_result_block{use.id, "ORDERS: 12 messages", false}}});
    auto second = call_once(anthropic_at(fake.url()), r);
    REQUIRE(second.result.has_value());
    CHECK(std::get<llm::text_block>(second.result->content.at(0)).text == "ORDERS holds 12 messages.");

    auto log = request_log(fake);
    REQUIRE(log.size() == 2);
    const auto& headers = log[0].at("headers").as_object();
    CHECK(headers.at("x-api-key") == "sk-test-key");
    CHECK(headers.at("anthropic-version") == "2023-06-01");
    CHECK(headers.at("content-type") == "application/json");
    CHECK(headers.at("accept") == "application/json");
    CHECK(std::string(headers.at("user-agent").as_string()).starts_with("fisk-ai/"));
    CHECK_FALSE(headers.contains("anthropic-beta"));
    CHECK_FALSE(headers.contains("authorization"));
    CHECK(log[0].at("endpoint") == "/v1/messages");
    // The wire body is the codec's, cache markers included.
    auto first_request = ask("How many in ORDERS?");
    CHECK(log[0].at("body") == json::parse(llm::anthropic::encode_request(first_request)));
    CHECK(log[0].at("body").at("cache_control") == json::parse(R"({"type":"ephemeral"})"));
    // The thinking block goes back exactly as it came.
    const auto& echoed = log[1].at("body").at("messages").at(1).at("content").at(0).as_object();
    CHECK(echoed.at("type") == "thinking");
    CHECK(echoed.at("signature") == "c2lnLzEr+/==");
    CHECK(echoed.at("thinking") == "Look it up.");
    CHECK(log[1].at("step") == 1);
}

TEST_CASE("anthropic: ANTHROPIC_AUTH_TOKEN as bearer when no key is set", "[llm][http]") {
    clear_llm_env();
    fake_server fake(faults_script("[]"));
    ::setenv("ANTHROPIC_AUTH_TOKEN", "tok-1", 1);
    auto config = anthropic_at(fake.url());
    config.api_key.clear();
    auto out = call_once(config, ask("hi"));
    clear_llm_env();
    REQUIRE(out.result.has_value());
    auto log = request_log(fake);
    REQUIRE(log.size() == 1);
    CHECK(log[0].at("headers").at("authorization") == "Bearer tok-1");
    CHECK_FALSE(log[0].at("headers").as_object().contains("x-api-key"));
}

TEST_CASE("openai over HTTP: mapping, bearer only with a key", "[llm][http]") {
    clear_llm_env();
    fake_server fake(R"({"conversations":[{"name":"o","steps":[
        {"reply":{"content":[{"type":"thinking","thinking":"Reason."},{"type":"text","text":"Calling."},
                             {"type":"tool_use","name":"stream_info","input":{"stream":"ORDERS"}},
                             {"type":"tool_use","name":"broken","input_raw":"[1]","no_id":true}],
                  "stop_reason":"end_turn","usage":{"input_tokens":100,"output_tokens":7,"cache_read_input_tokens":30}}}]}]})");
    llm::provider_config config;
    config.name = "openai";
    config.base_url = fake.url() + "/v1";
    auto out = call_once(config, ask("hi"));
    REQUIRE(out.result.has_value());
    const auto& reply = *out.result;
    CHECK(reply.stop_reason == "tool_use");  // tool calls win over finish_reason "stop"
    CHECK(reply.request_id == "req_fake_1");
    CHECK(reply.used == llm::usage{100, 7, 30, 0});
    REQUIRE(reply.content.size() == 4);
    CHECK(std::get<llm::thinking_block>(reply.content[0]).text == "Reason.");
    CHECK(std::get<llm::tool_use_block>(reply.content[2]).id == "call_o_0_2");
    const auto& broken = std::get<llm::tool_use_block>(reply.content[3]);
    CHECK(broken.id == "call_1");
    CHECK(broken.input == "{}");
    CHECK(broken.input_error.has_value());

    ::setenv("FISKAI_TEST_KEY", "local-key", 1);
    config.api_key_env = "FISKAI_TEST_KEY";
    REQUIRE(call_once(config, ask("hi")).result.has_value());
    clear_llm_env();
    auto log = request_log(fake);
    REQUIRE(log.size() == 2);
    CHECK(log[0].at("endpoint") == "/v1/chat/completions");
    CHECK_FALSE(log[0].at("headers").as_object().contains("authorization"));
    CHECK(log[1].at("headers").at("authorization") == "Bearer local-key");
    CHECK(log[0].at("body").at("stream") == false);
    CHECK(log[0].at("body").at("messages").at(0) == json::parse(R"({"role":"system","content":"You are a test."})"));
}

TEST_CASE("retries: 529, 429 with retry-after 0, then the reply", "[llm][http][retry]") {
    clear_llm_env();
    fake_server fake(faults_script(
        R"([{"status":529,"headers":{"retry-after-ms":"0"}},{"status":429,"headers":{"retry-after":"0"}}])"));
    auto out = call_once(anthropic_at(fake.url()), ask("x"));
    REQUIRE(out.result.has_value());
    CHECK(request_log(fake).size() == 3);
    CHECK(out.took < 2s);
}

TEST_CASE("retries: the server's retry-after-ms is waited, backoff without one", "[llm][http][retry]") {
    clear_llm_env();
    fake_server fake(faults_script(R"([{"status":500,"headers":{"retry-after-ms":"300"}},{"status":503}])"));
    auto out = call_once(anthropic_at(fake.url()), ask("x"));
    REQUIRE(out.result.has_value());
    CHECK(request_log(fake).size() == 3);
    // 300 ms asked, then 1 s * (1 - up to 25 %) of backoff for the second retry.
    CHECK(out.took >= 300ms + 750ms);
    CHECK(out.took < 300ms + 1s + 1500ms);
}

TEST_CASE("retries: a closed connection is retried", "[llm][http][retry]") {
    clear_llm_env();
    fake_server fake(faults_script(R"([{"close":true}])"));
    auto out = call_once(anthropic_at(fake.url()), ask("x"));
    REQUIRE(out.result.has_value());
    CHECK(request_log(fake).size() >= 2);
}

TEST_CASE("retries: exhausted after max_retries, the last status reported", "[llm][http][retry]") {
    clear_llm_env();
    fake_server fake(faults_script(
        R"([{"status":500,"headers":{"retry-after":"0"}},{"status":500,"headers":{"retry-after":"0"}},{"status":500,"headers":{"retry-after":"0"}}])"));
    auto out = call_once(anthropic_at(fake.url()), ask("x"));
    REQUIRE_FALSE(out.result.has_value());
    CHECK(out.result.error().what == llm::error::kind::status);
    CHECK(out.result.error().message ==
          "anthropic: HTTP 500 api_error: fake-llm: scripted fault 500 (attempt 3) (request req_fake_3)");
    CHECK(request_log(fake).size() == 3);
}

TEST_CASE("no retry on 400: status, type, message and request id", "[llm][http][retry]") {
    clear_llm_env();
    fake_server fake(faults_script(
        R"([{"status":400,"body":{"type":"error","error":{"type":"invalid_request_error","message":"messages: text content blocks must be non-empty"}}}])"));
    auto r = ask("x");
    auto out = call_once(anthropic_at(fake.url()), r);
    REQUIRE_FALSE(out.result.has_value());
    CHECK(out.result.error().status == 400);
    CHECK(out.result.error().message ==
          "anthropic: HTTP 400 invalid_request_error: messages: text content blocks must be non-empty (request "
          "req_fake_1)");
    CHECK(request_log(fake).size() == 1);

    // With thinking on, Go's hint follows.
    fake_server again(faults_script(R"([{"status":400}])"));
    r.thinking = true;
    auto hinted = call_once(anthropic_at(again.url()), r);
    REQUIRE_FALSE(hinted.result.has_value());
    CHECK(hinted.result.error().message.ends_with(
        R"((request req_fake_1); model "claude-test" may not support thinking, set llm.thinking.enabled to false)"));
}

TEST_CASE("deadline: a hung server ends the call at call_timeout", "[llm][http][fault]") {
    clear_llm_env();
    fake_server fake(faults_script(R"([{"hang":true}])"));
    auto out = call_once(anthropic_at(fake.url()), ask("x"), 500ms);
    REQUIRE_FALSE(out.result.has_value());
    CHECK(out.result.error().what == llm::error::kind::timeout);
    CHECK(out.result.error().message == "anthropic: no response within 500ms (1 attempts)");
    CHECK(out.took >= 450ms);
    CHECK(out.took < 2500ms);
}

TEST_CASE("deadline: a call_timeout past the end of the clock means no deadline", "[llm][http][fault]") {
    clear_llm_env();
    fake_server fake(faults_script("[]"));
    auto out = call_once(anthropic_at(fake.url()), ask("x"), std::chrono::nanoseconds::max());
    REQUIRE(out.result.has_value());
    CHECK(out.took < 5s);
}

TEST_CASE("bad bodies: not JSON, a block without type", "[llm][http][fault]") {
    clear_llm_env();
    fake_server fake(faults_script(
        R"([{"status":200,"body":"<html>oops</html>"},{"status":200,"body":{"content":[{"text":"x"}]}}])"));
    auto config = anthropic_at(fake.url());
    auto not_json = call_once(config, ask("x"));
    REQUIRE_FALSE(not_json.result.has_value());
    CHECK(not_json.result.error().what == llm::error::kind::decode);
    CHECK(not_json.result.error().message.starts_with("anthropic: response body is not JSON"));
    auto no_type = call_once(config, ask("x"));
    REQUIRE_FALSE(no_type.result.has_value());
    CHECK(no_type.result.error().message == "anthropic: response content block 0 has no type");
}

TEST_CASE("connection refused is a transport error after the retries", "[llm][http][fault]") {
    clear_llm_env();
    int port = 0;
    {
        fake_server gone(faults_script("[]"));
        port = gone.process.port();
    }
    auto config = anthropic_at(fmt::format("http://127.0.0.1:{}", port));
    config.max_retries = 1;
    auto out = call_once(config, ask("x"));
    REQUIRE_FALSE(out.result.has_value());
    CHECK(out.result.error().what == llm::error::kind::transport);
    CHECK(out.result.error().message.starts_with("anthropic: "));
}

TEST_CASE("TLS: refused without the CA, accepted with it", "[llm][http][tls]") {
    clear_llm_env();
    // The CA and the localhost certificate the net tests use, made by the openssl CLI.
    const auto& tls = fiskai::test::tls_material::get();
    const auto dir = tls.dir.string();
    fake_server fake(faults_script("[]"), {"--tls", dir + "/localhost.pem", dir + "/localhost.key"});

    ::unsetenv("SSL_CERT_FILE");
    auto config = anthropic_at(fake.url("https", "localhost"));
    config.max_retries = 0;
    auto refused = call_once(config, ask("x"));
    REQUIRE_FALSE(refused.result.has_value());
    CHECK(refused.result.error().what == llm::error::kind::transport);
    INFO(refused.result.error().message);
    CHECK(refused.result.error().message.starts_with("anthropic: "));

    ::setenv("SSL_CERT_FILE", tls.ca_file.c_str(), 1);
    auto accepted = call_once(config, ask("x"));
    ::unsetenv("SSL_CERT_FILE");
    REQUIRE(accepted.result.has_value());
    CHECK(std::get<llm::text_block>(accepted.result->content.at(0)).text == "done");

    llm::provider_config openai;
    openai.name = "openai";
    openai.base_url = fake.url("https", "localhost") + "/v1";
    ::setenv("SSL_CERT_FILE", tls.ca_file.c_str(), 1);
    auto over_tls = call_once(openai, ask("x"));
    ::unsetenv("SSL_CERT_FILE");
    REQUIRE(over_tls.result.has_value());
}

TEST_CASE("configuration texts: key, provider, URL policy", "[llm][config]") {
    clear_llm_env();
    asio::io_context ioc;
    net::http_client client(ioc.get_executor());
    auto make = [&](const llm::provider_config& c) { return llm::make_provider(c, ioc.get_executor(), client); };
    auto text_of = [&](const llm::provider_config& c) -> std::string {
        try {
            (void)make(c);
        } catch (const llm::config_error& e) {
            return e.what();
        }
        return "(accepted)";
    };

    llm::provider_config c;
    c.name = "anthropic";
    CHECK(text_of(c) == "llm: no API key: set ANTHROPIC_API_KEY (or the variable named by llm.api_key_env)");
    c.api_key_env = "MY_KEY";
    CHECK(text_of(c) == "llm: no API key: set MY_KEY (or the variable named by llm.api_key_env)");
    ::setenv("MY_KEY", "k", 1);
    CHECK(text_of(c) == "(accepted)");
    ::unsetenv("MY_KEY");

    c.api_key = "k";
    c.name = "gemini";
    CHECK(text_of(c) == R"(unknown llm provider "gemini": known providers are [anthropic openai])");
    c.name = "anthropic";
    c.base_url = "http://llm.example.com";
    CHECK(
        text_of(c) ==
        R"(llm.base_url "http://llm.example.com" must use https (http is allowed only to a loopback host, or with llm.insecure_http: true))");
    c.insecure_http = true;
    CHECK(text_of(c) == "(accepted)");
    c.base_url = "https://user:pw@llm.example.com";
    CHECK(text_of(c) == R"(llm.base_url "https://user:xxxxx@llm.example.com" must not contain user information)");
    c.base_url = "http://localhost:8080";
    c.insecure_http = false;
    CHECK(text_of(c) == "(accepted)");
    // The environment wins over the config, and is checked under its own name.
    ::setenv("ANTHROPIC_BASE_URL", "http://10.0.0.1", 1);
    CHECK(text_of(c).starts_with(R"(ANTHROPIC_BASE_URL "http://10.0.0.1" must use https)"));
    clear_llm_env();

    llm::provider_config o;
    o.name = "openai";
    CHECK(text_of(o) ==
          "llm.base_url is required for the openai provider (e.g. http://127.0.0.1:8080/v1 for llama.cpp server)");
    o.base_url = "http://127.0.0.1:11434/v1";
    CHECK(text_of(o) == "(accepted)");

    auto names = llm::credential_env_names();
    CHECK(std::is_sorted(names.begin(), names.end()));
    CHECK(std::find(names.begin(), names.end(), "ANTHROPIC_API_KEY") != names.end());
    CHECK(std::find(names.begin(), names.end(), "OPENAI_API_KEY") != names.end());
}

TEST_CASE("cancelling the calling coroutine ends a hung call at once", "[llm][http][fault]") {
    clear_llm_env();
    fake_server fake(faults_script(R"([{"hang":true}])"));
    asio::io_context ioc;
    net::http_client client(ioc.get_executor());
    auto provider = llm::make_provider(anthropic_at(fake.url()), ioc.get_executor(), client);
    asio::cancellation_signal cancel;
    auto future = asio::co_spawn(ioc, provider->call(ask("x"), 30s),
                                 asio::bind_cancellation_slot(cancel.slot(), asio::use_future));
    // Cancel once the fake has the request (it logs it before hanging).
    const auto start = std::chrono::steady_clock::now();
    const auto end = start + 20s;
    bool cancelled = false;
    while (future.wait_for(0s) != std::future_status::ready && std::chrono::steady_clock::now() < end) {
        ioc.run_one_for(20ms);
        if (!cancelled && std::filesystem::exists(fake.dir.path / "log.jsonl") &&
            std::filesystem::file_size(fake.dir.path / "log.jsonl") > 0) {
            cancel.emit(asio::cancellation_type::terminal);
            cancelled = true;
        }
    }
    REQUIRE(future.wait_for(0s) == std::future_status::ready);
    auto result = future.get();
    REQUIRE_FALSE(result.has_value());
    CHECK(result.error().what == llm::error::kind::cancelled);
    CHECK(std::chrono::steady_clock::now() - start < 10s);
}
