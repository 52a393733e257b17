#include "fiskai/llm/provider.hpp"

#include "fiskai/llm/anthropic_codec.hpp"
#include "fiskai/llm/openai_codec.hpp"
#include "fiskai/llm/retry.hpp"

#include <fiskai/gocompat/duration.hpp>
#include <fiskai/gocompat/quote.hpp>
#include <fiskai/net/http_client.hpp>
#include <fiskai/net/url.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/system/system_error.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <random>

#ifndef FISKAI_VERSION
#define FISKAI_VERSION "0.0.0"
#endif

namespace fiskai::llm {

namespace asio = boost::asio;

namespace {

std::string env(const std::string& name) {
    const char* value = name.empty() ? nullptr : std::getenv(name.c_str());
    return value == nullptr ? std::string() : std::string(value);
}

std::string trim_slash(std::string url) {
    while (!url.empty() && url.back() == '/') url.pop_back();
    return url;
}

// What differs between the two wire formats; the call loop is shared.
struct wire {
    std::string provider_name;
    std::string url;
    net::header_list headers;
    std::function<std::string(const request&)> encode;
    std::function<boost::system::result<response, std::string>(std::string_view)> decode;
    std::function<std::string(int, std::string_view, std::optional<std::string_view>)> status_text;
    std::string request_id_header;
    bool supports_tool_search = false;
    // Set for a provider that ignores thinking: warned about once, on the first call asking for it.
    bool thinking_ignored = false;
};

// now + timeout, saturating: a timeout past the end of the clock is no deadline
// (time_point::max(), which the HTTP client treats as none), a negative one is now.
std::chrono::steady_clock::time_point deadline_after(std::chrono::nanoseconds timeout) {
    using clock = std::chrono::steady_clock;
    const auto now = clock::now();
    if (timeout <= std::chrono::nanoseconds::zero()) return now;
    const auto room = clock::time_point::max() - now;
    if (timeout >= std::chrono::duration_cast<std::chrono::nanoseconds>(room)) return clock::time_point::max();
    return now + std::chrono::duration_cast<clock::duration>(timeout);
}

class http_provider final : public provider {
public:
    http_provider(wire w, const provider_config& config, asio::any_io_executor executor, net::http_client& client)
        : wire_(std::move(w)),
          max_retries_(std::max(config.max_retries, 0)),
          log_(config.log),
          executor_(std::move(executor)),
          client_(client),
          rng_(std::random_device{}()) {}

    capabilities caps() const override { return {wire_.provider_name, wire_.supports_tool_search}; }

    asio::awaitable<call_result<response>> call(request req, std::chrono::nanoseconds call_timeout) override {
        const auto deadline = deadline_after(call_timeout);
        if (req.thinking && wire_.thinking_ignored && !thinking_warned_) {
            thinking_warned_ = true;
            log_.warn("llm.thinking.enabled has no effect with the openai provider");
        }
        net::http_request http{"POST", wire_.url, wire_.headers, wire_.encode(req)};
        int attempts = 0;
        error last;
        for (int retry = 0;; ++retry) {
            ++attempts;
            // A named copy: GCC 12 mishandles a temporary with a destructor inside a co_await expression.
            net::http_request attempt_request = http;
            auto sent = co_await client_.send(std::move(attempt_request), deadline);
            retry_hints hints;
            int status = 0;
            if (!sent) {
                const auto& failure = sent.error();
                using k = net::http_error::kind;
                if (failure.what == k::timeout) co_return timeout_error(call_timeout, attempts);
                if (failure.what == k::cancelled) {
                    co_return error{error::kind::cancelled, 0, wire_.provider_name + ": call cancelled"};
                }
                last = error{error::kind::transport, 0, fmt::format("{}: {}", wire_.provider_name, failure.message)};
                // A certificate that does not verify, a bad URL or an oversized body
                // fails the same way every time: retrying only burns the deadline.
                if (failure.what != k::connect && failure.what != k::closed) co_return last;
            } else {
                const auto& got = *sent;
                if (got.status >= 200 && got.status < 300) {
                    auto decoded = wire_.decode(got.body);
                    if (!decoded) co_return error{error::kind::decode, got.status, std::move(decoded.error())};
                    if (auto id = got.header(wire_.request_id_header)) decoded->request_id = std::string(*id);
                    co_return std::move(*decoded);
                }
                status = got.status;
                hints = retry_hints::from_headers(got.headers);
                last = error{error::kind::status, status,
                             wire_.status_text(status, got.body, got.header(wire_.request_id_header))};
                if (status == 400 && req.thinking && wire_.provider_name == "anthropic") {
                    last.message +=
                        fmt::format("; model {} may not support thinking, set llm.thinking.enabled to false",
                                    gocompat::quote(req.model));
                }
                if (!should_retry(status, hints)) co_return last;
            }
            if (retry >= max_retries_) co_return last;
            const auto delay = retry_delay(retry, hints, std::uniform_real_distribution<double>(0.0, 1.0)(rng_),
                                           std::chrono::system_clock::now());
            const auto wait = fit_before_deadline(delay, std::chrono::steady_clock::now(), deadline);
            if (!wait) co_return last;
            const std::string waited = gocompat::format_duration(*wait);
            const std::string attempt_text = std::to_string(attempts);
            log_.debug("llm call retrying", {{"provider", wire_.provider_name},
                                             {"attempt", attempt_text},
                                             {"failure", last.message},
                                             {"wait", waited}});
            asio::steady_timer timer(executor_, *wait);
            auto [ec] = co_await timer.async_wait(asio::as_tuple(asio::use_awaitable));
            if (ec) co_return error{error::kind::cancelled, 0, wire_.provider_name + ": call cancelled"};
        }
    }

private:
    error timeout_error(std::chrono::nanoseconds call_timeout, int attempts) const {
        return error{error::kind::timeout, 0,
                     fmt::format("{}: no response within {} ({} attempts)", wire_.provider_name,
                                 gocompat::format_duration(call_timeout), attempts)};
    }

    wire wire_;
    int max_retries_;
    gocompat::logger log_;
    bool thinking_warned_ = false;
    asio::any_io_executor executor_;
    net::http_client& client_;
    std::mt19937_64 rng_;
};

// The configured base URL, unless the provider's environment variable overrides it (Go
// precedent), checked against the URL policy under the name the operator set.
std::string resolve_base_url(const provider_config& config, const std::string& env_name, const std::string& fallback) {
    std::string url = config.base_url;
    std::string key = "llm.base_url";
    if (auto from_env = env(env_name); !from_env.empty()) {
        url = from_env;
        key = env_name;
    }
    if (url.empty()) url = fallback;
    if (url.empty()) return url;
    if (auto refused = net::check_url(url, key, config.insecure_http)) throw config_error(*refused);
    return trim_slash(url);
}

net::header_list common_headers() {
    return {{"content-type", "application/json"}, {"accept", "application/json"}, {"user-agent", user_agent()}};
}

wire anthropic_wire(const provider_config& config) {
    const std::string key_env = config.api_key_env.empty() ? "ANTHROPIC_API_KEY" : config.api_key_env;
    wire w;
    w.provider_name = "anthropic";
    w.url = resolve_base_url(config, "ANTHROPIC_BASE_URL", "https://api.anthropic.com") + "/v1/messages";
    w.headers = common_headers();
    if (std::string key = config.api_key.empty() ? env(key_env) : config.api_key; !key.empty()) {
        w.headers.emplace_back("x-api-key", std::move(key));
    } else if (std::string token = env("ANTHROPIC_AUTH_TOKEN"); !token.empty()) {
        w.headers.emplace_back("authorization", "Bearer " + token);
    } else {
        throw config_error(fmt::format("llm: no API key: set {} (or the variable named by llm.api_key_env)", key_env));
    }
    w.headers.emplace_back("anthropic-version", "2023-06-01");
    w.encode = [](const request& r) { return anthropic::encode_request(r); };
    w.decode = [](std::string_view body) { return anthropic::decode_response(body); };
    w.status_text = [](int status, std::string_view body, std::optional<std::string_view> id) {
        return anthropic::status_error_text(status, body, id);
    };
    w.request_id_header = "request-id";
    w.supports_tool_search = true;
    return w;
}

wire openai_wire(const provider_config& config) {
    const std::string key_env = config.api_key_env.empty() ? "OPENAI_API_KEY" : config.api_key_env;
    wire w;
    w.provider_name = "openai";
    const std::string base = resolve_base_url(config, "OPENAI_BASE_URL", "");
    if (base.empty()) {
        throw config_error(
            "llm.base_url is required for the openai provider (e.g. http://127.0.0.1:8080/v1 for llama.cpp server)");
    }
    w.url = base + "/chat/completions";
    w.headers = common_headers();
    // Local servers need no key: the header is sent only when one is set.
    if (std::string key = config.api_key.empty() ? env(key_env) : config.api_key; !key.empty()) {
        w.headers.emplace_back("authorization", "Bearer " + key);
    }
    w.encode = [](const request& r) { return openai::encode_request(r); };
    w.decode = [](std::string_view body) { return openai::decode_response(body); };
    w.status_text = [](int status, std::string_view body, std::optional<std::string_view>) {
        return openai::status_error_text(status, body);
    };
    w.request_id_header = "x-request-id";
    w.thinking_ignored = true;
    return w;
}

}  // namespace

const std::vector<std::string>& known_providers() {
    static const std::vector<std::string> names{"anthropic", "openai"};
    return names;
}

std::vector<std::string> credential_env_names() {
    std::vector<std::string> names{
        "ANTHROPIC_API_KEY",        "ANTHROPIC_AUTH_TOKEN",          "ANTHROPIC_IDENTITY_TOKEN",
        "ANTHROPIC_CUSTOM_HEADERS", "ANTHROPIC_WEBHOOK_SIGNING_KEY", "OPENAI_API_KEY",
    };
    std::sort(names.begin(), names.end());
    names.erase(std::unique(names.begin(), names.end()), names.end());
    return names;
}

std::string user_agent() { return std::string("fisk-ai/") + FISKAI_VERSION; }

std::shared_ptr<provider> make_provider(const provider_config& config, asio::any_io_executor executor,
                                        net::http_client& client) {
    if (config.name == "anthropic") {
        return std::make_shared<http_provider>(anthropic_wire(config), config, std::move(executor), client);
    }
    if (config.name == "openai") {
        return std::make_shared<http_provider>(openai_wire(config), config, std::move(executor), client);
    }
    throw config_error(
        fmt::format("unknown llm provider {}: known providers are [anthropic openai]", gocompat::quote(config.name)));
}

}  // namespace fiskai::llm
