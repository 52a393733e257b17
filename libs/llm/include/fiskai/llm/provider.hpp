#pragma once
// The provider interface the agent loop calls, the provider registry (anthropic, openai)
// and the credential variable names every tool child has scrubbed from its environment.

#include "fiskai/llm/types.hpp"

#include <fiskai/gocompat/log.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/system/result.hpp>

#include <chrono>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace fiskai::net {
class http_client;
}  // namespace fiskai::net

namespace fiskai::llm {

// Why a call failed. `message` is the whole text the loop reports after `llm call: `.
struct error {
    enum class kind {
        transport,  // no usable response: connect, TLS, reset, closed, too large
        status,     // the provider answered with an HTTP error status
        decode,     // the response is not what the wire format says
        timeout,    // the call's deadline passed
        cancelled,  // the calling coroutine was cancelled
    };
    kind what = kind::transport;
    int status = 0;
    std::string message;
};

template <class T>
using call_result = boost::system::result<T, error>;

class provider {
public:
    virtual ~provider() = default;
    [[nodiscard]] virtual capabilities caps() const = 0;
    // Owns the deadline: call_timeout bounds every attempt and every backoff sleep. Runs on
    // the http_client's executor (the io_context thread) only.
    [[nodiscard]] virtual boost::asio::awaitable<call_result<response>> call(request req,
                                                                             std::chrono::nanoseconds call_timeout) = 0;
};

struct provider_config {
    // `anthropic` or `openai`.
    std::string name;
    // Empty: the provider's default (anthropic) or an error (openai). ANTHROPIC_BASE_URL /
    // OPENAI_BASE_URL, when set, win over it.
    std::string base_url;
    // The variable holding the credential (llm.api_key_env); empty: the provider's default
    // (ANTHROPIC_API_KEY, OPENAI_API_KEY). The key is read once, at construction.
    std::string api_key_env;
    // A key given directly (embedding, tests): used instead of the environment when set.
    std::string api_key;
    int max_retries = 2;
    bool insecure_http = false;
    // Retries (debug) and settings without effect (warn, once). Never the credential.
    gocompat::logger log;
};

// A configuration the providers refuse; what() is the exact startup text.
class config_error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// Throws config_error: unknown provider, missing credential, a base URL the policy refuses.
// The client must outlive the provider.
[[nodiscard]] std::shared_ptr<provider> make_provider(const provider_config& config,
                                                      boost::asio::any_io_executor executor, net::http_client& client);

// ["anthropic", "openai"].
[[nodiscard]] const std::vector<std::string>& known_providers();

// Every registered provider's secret-bearing variables: sorted, de-duplicated (Go rule).
[[nodiscard]] std::vector<std::string> credential_env_names();

// The user-agent the providers send: `fisk-ai/<version>`.
[[nodiscard]] std::string user_agent();

}  // namespace fiskai::llm
