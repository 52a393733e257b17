// Resources, prompts and completion: what an embedder serves besides tools.

#include "server_impl.hpp"

#include <boost/json/array.hpp>
#include <algorithm>

#include <fmt/format.h>

namespace fiskai::mcpserver {
namespace {

namespace json = boost::json;
namespace asio = boost::asio;

constexpr std::size_t max_subscriptions = 256;
constexpr std::size_t max_subscription_uri = 2048;

// RFC 6570 level 1: each `{name}` matches a non-empty run without '/'. Returns the
// variables on a match.
std::optional<json::object> match_template(std::string_view tmpl, std::string_view uri) {
    json::object vars;
    std::size_t ti = 0, ui = 0;
    while (ti < tmpl.size()) {
        if (tmpl[ti] == '{') {
            const auto close = tmpl.find('}', ti);
            if (close == std::string_view::npos) return std::nullopt;
            const auto name = tmpl.substr(ti + 1, close - ti - 1);
            const char next = close + 1 < tmpl.size() ? tmpl[close + 1] : '\0';
            std::size_t end = ui;
            while (end < uri.size() && uri[end] != '/' && (next == '\0' || uri[end] != next)) ++end;
            if (end == ui) return std::nullopt;
            vars[name] = uri.substr(ui, end - ui);
            ui = end;
            ti = close + 1;
        } else {
            if (ui >= uri.size() || uri[ui] != tmpl[ti]) return std::nullopt;
            ++ui;
            ++ti;
        }
    }
    if (ui != uri.size()) return std::nullopt;
    return vars;
}

std::string string_param(const json::object& params, std::string_view key) {
    const auto* v = params.if_contains(key);
    return v && v->is_string() ? std::string(v->get_string()) : std::string();
}

// Built outside the coroutine: g++ 12 miscompiles braced initialisers holding string
// literals inside coroutine bodies ("array used as initializer").
json::object keyed(std::string_view key, json::value v) {
    json::object o;
    o[key] = std::move(v);
    return o;
}

void put_if(json::object& o, std::string_view key, const std::string& value) {
    if (!value.empty()) o[key] = value;
}

}  // namespace

asio::awaitable<json::object> server::impl::dispatch_extension(std::shared_ptr<session> s, const rpc_request& request,
                                                               bool& handled) {
    handled = true;
    const auto& m = request.method;
    const auto& params = request.params;
    bool invalid_cursor = false;
    auto cursor_error = [&] {
        return make_error(request.id, rpc_error::invalid_params, "Invalid params: unknown cursor");
    };

    if (m == "resources/list") {
        auto r = paged(resources, params, options.page_size, "resources", invalid_cursor, [](const resource& res) {
            json::object o{{"uri", res.uri}, {"name", res.name}};
            put_if(o, "title", res.title);
            put_if(o, "description", res.description);
            put_if(o, "mimeType", res.mime_type);
            return o;
        });
        co_return invalid_cursor ? cursor_error() : make_result(request.id, std::move(r));
    }
    if (m == "resources/templates/list") {
        auto r = paged(templates, params, options.page_size, "resourceTemplates", invalid_cursor,
                       [](const resource_template& t) {
                           json::object o{{"uriTemplate", t.uri_template}, {"name", t.name}};
                           put_if(o, "title", t.title);
                           put_if(o, "description", t.description);
                           put_if(o, "mimeType", t.mime_type);
                           return o;
                       });
        co_return invalid_cursor ? cursor_error() : make_result(request.id, std::move(r));
    }
    if (m == "resources/read") {
        const auto uri = string_param(params, "uri");
        if (uri.empty()) co_return make_error(request.id, rpc_error::invalid_params, "Invalid params: uri is required");
        try {
            for (const auto& r : resources) {
                if (r.uri == uri) {
                    auto contents = co_await r.read(uri);
                    co_return make_result(request.id, keyed("contents", std::move(contents)));
                }
            }
            for (const auto& t : templates) {
                if (auto vars = match_template(t.uri_template, uri)) {
                    auto contents = co_await t.read(uri, std::move(*vars));
                    co_return make_result(request.id, keyed("contents", std::move(contents)));
                }
            }
        } catch (const std::exception& e) {
            co_return make_error(request.id, rpc_error::internal_error,
                                 fmt::format("reading {} failed: {}", uri, e.what()));
        }
        co_return make_error(request.id, -32002, fmt::format("Resource not found: {}", uri),
                             keyed("uri", json::value(uri)));
    }
    if (m == "resources/subscribe" || m == "resources/unsubscribe") {
        const auto uri = string_param(params, "uri");
        if (uri.empty()) co_return make_error(request.id, rpc_error::invalid_params, "Invalid params: uri is required");
        // A server serving no resources (fisk-ai-mcp: tools only) acknowledges and keeps
        // nothing: no update can ever be sent, and clients (the conformance suite among
        // them) subscribe regardless of the capability.
        if (resources.empty() && templates.empty()) co_return make_result(request.id, json::object{});
        if (m == "resources/subscribe") {
            // Bounded in count and size (at most 256 x 2 KiB a session), and only to what
            // this server serves, so a client cannot grow a session's set without limit.
            if (uri.size() > max_subscription_uri) {
                co_return make_error(
                    request.id, rpc_error::invalid_params,
                    fmt::format("Invalid params: uri has {} bytes; the limit is {}", uri.size(), max_subscription_uri));
            }
            const bool served =
                std::any_of(resources.begin(), resources.end(), [&](const resource& r) { return r.uri == uri; }) ||
                std::any_of(templates.begin(), templates.end(), [&](const resource_template& t) {
                    return match_template(t.uri_template, uri).has_value();
                });
            if (!served) {
                co_return make_error(request.id, -32002, fmt::format("Resource not found: {}", uri),
                                     keyed("uri", json::value(uri)));
            }
            if (s->subscriptions.size() >= max_subscriptions && !s->subscriptions.contains(uri)) {
                co_return make_error(request.id, rpc_error::invalid_params,
                                     fmt::format("Invalid params: too many subscriptions (the limit is {} a session); "
                                                 "unsubscribe from one first",
                                                 max_subscriptions));
            }
            s->subscriptions.insert(uri);
        } else {
            s->subscriptions.erase(uri);
        }
        co_return make_result(request.id, json::object{});
    }
    if (m == "prompts/list") {
        auto r = paged(prompts, params, options.page_size, "prompts", invalid_cursor, [](const prompt& p) {
            json::object o{{"name", p.name}};
            put_if(o, "title", p.title);
            put_if(o, "description", p.description);
            json::array args;
            for (const auto& a : p.arguments) {
                json::object arg{{"name", a.name}};
                put_if(arg, "description", a.description);
                if (a.required) arg["required"] = true;
                args.push_back(std::move(arg));
            }
            if (!args.empty()) o["arguments"] = std::move(args);
            return o;
        });
        co_return invalid_cursor ? cursor_error() : make_result(request.id, std::move(r));
    }
    if (m == "prompts/get") {
        const auto name = string_param(params, "name");
        auto it = std::find_if(prompts.begin(), prompts.end(), [&](const prompt& p) { return p.name == name; });
        if (it == prompts.end()) {
            co_return make_error(request.id, rpc_error::invalid_params,
                                 fmt::format("Invalid params: unknown prompt \"{}\"", name));
        }
        json::object args;
        if (const auto* a = params.if_contains("arguments"); a && a->is_object()) args = a->get_object();
        for (const auto& declared : it->arguments) {
            if (declared.required && !args.contains(declared.name)) {
                co_return make_error(
                    request.id, rpc_error::invalid_params,
                    fmt::format("Invalid params: prompt \"{}\" needs argument \"{}\"", name, declared.name));
            }
        }
        try {
            co_return make_result(request.id, co_await it->get(std::move(args)));
        } catch (const std::exception& e) {
            co_return make_error(request.id, rpc_error::internal_error,
                                 fmt::format("prompt {} failed: {}", name, e.what()));
        }
    }
    if (m == "completion/complete" && completion) {
        json::object ref, argument, context;
        if (const auto* v = params.if_contains("ref"); v && v->is_object()) ref = v->get_object();
        if (const auto* v = params.if_contains("argument"); v && v->is_object()) argument = v->get_object();
        if (const auto* v = params.if_contains("context"); v && v->is_object()) context = v->get_object();
        if (ref.empty() || argument.empty()) {
            co_return make_error(request.id, rpc_error::invalid_params,
                                 "Invalid params: ref and argument are required");
        }
        try {
            auto values = co_await completion(std::move(ref), std::move(argument), std::move(context));
            co_return make_result(request.id, keyed("completion", std::move(values)));
        } catch (const std::exception& e) {
            co_return make_error(request.id, rpc_error::internal_error, fmt::format("completion failed: {}", e.what()));
        }
    }
    handled = false;
    co_return json::object{};
}

}  // namespace fiskai::mcpserver
