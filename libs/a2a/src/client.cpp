#include <fiskai/a2a/client.hpp>
#include <fiskai/a2a/codec.hpp>
#include <fiskai/a2a/stamp.hpp>
#include <fiskai/a2a/validator.hpp>

#include "json_text.hpp"

namespace fiskai::a2a {

namespace asio = boost::asio;

namespace {

// Encodes a stamped request and checks it as its receiver will.
template <class M>
result<std::string> finish_request(M& m, std::string_view self, std::string_view agent) {
    stamp_request(m, self, agent);
    auto text = encode(m);
    if (!text) return wrap(text.error(), "marshaling request");
    if (auto checked = default_validator().check(*text, M::protocol); !checked) {
        return wrap(checked.error(), "invalid outgoing request");
    }
    return text;
}

template <class M>
result<M> accept(const reply& r) {
    if (r.error) {
        return make_error(errc::error_reply, std::to_string(r.error->code) + " " + r.error->description);
    }
    auto m = default_validator().check_as<M>(r.body);
    if (!m && m.error().code != errc::protocol_mismatch) return wrap(m.error(), "invalid reply");
    return m;
}

}  // namespace

client::client(transport& t, client_options options) : transport_(t), options_(std::move(options)) {}

std::chrono::steady_clock::duration client::timeout_or_default(
    std::optional<std::chrono::steady_clock::duration> timeout) const noexcept {
    if (timeout && *timeout > std::chrono::steady_clock::duration::zero()) return *timeout;
    if (options_.timeout > std::chrono::steady_clock::duration::zero()) return options_.timeout;
    return std::chrono::seconds(30);
}

result<std::string> client::prepare_discovery(std::string_view agent) const {
    discovery_request m;
    return finish_request(m, options_.identity, agent);
}

result<std::string> client::prepare_tool_call(std::string_view agent, std::string_view tool,
                                              std::string_view input) const {
    tool_request m;
    m.name = std::string(tool);
    // Models send `null` for a tool without arguments; the schema wants an object or nothing.
    if (!input.empty() && input != "null") {
        auto raw = raw_json::parse(input);
        if (!raw) return wrap(raw.error(), "marshaling request");
        m.input = std::move(*raw);
    }
    return finish_request(m, options_.identity, agent);
}

result<discovery_reply> client::accept_discovery(const reply& r) const { return accept<discovery_reply>(r); }

result<tool_reply> client::accept_tool_reply(const reply& r) const { return accept<tool_reply>(r); }

asio::awaitable<result<discovery_reply>> client::discover(std::string agent,
                                                          std::optional<std::chrono::steady_clock::duration> timeout) {
    auto body = prepare_discovery(agent);
    if (!body) co_return body.error();
    auto r =
        co_await transport_.request(route::discovery, std::move(agent), std::move(*body), timeout_or_default(timeout));
    if (!r) co_return r.error();
    co_return accept_discovery(*r);
}

asio::awaitable<result<tool_reply>> client::invoke(std::string agent, std::string tool, std::string input,
                                                   std::optional<std::chrono::steady_clock::duration> timeout) {
    auto body = prepare_tool_call(agent, tool, input);
    if (!body) co_return body.error();
    auto r = co_await transport_.request(route::tool, std::move(agent), std::move(*body), timeout_or_default(timeout));
    if (!r) co_return r.error();
    co_return accept_tool_reply(*r);
}

}  // namespace fiskai::a2a
