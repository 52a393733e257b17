#include <fiskai/remotetools/remotetools.hpp>
#include <fiskai/gocompat/name.hpp>
#include <fiskai/gocompat/quote.hpp>

#include <fmt/format.h>
#include <re2/re2.h>

#include <algorithm>
#include <memory>

namespace fiskai::remotetools {
namespace {

namespace json = boost::json;

std::vector<std::unique_ptr<re2::RE2>> compile(const std::vector<std::string>& patterns) {
    std::vector<std::unique_ptr<re2::RE2>> out;
    for (const auto& p : patterns) {
        auto re = std::make_unique<re2::RE2>(p, re2::RE2::Quiet);
        if (!re->ok()) {
            throw import_error(
                fmt::format("invalid remote tool filter pattern {}: {}", gocompat::quote(p), re->error()));
        }
        out.push_back(std::move(re));
    }
    return out;
}

bool any_match(const std::vector<std::unique_ptr<re2::RE2>>& res, const std::string& name) {
    return std::any_of(res.begin(), res.end(), [&](const auto& re) { return re2::RE2::PartialMatch(name, *re); });
}

// A tool served by a peer agent. The peer is the authority: no local gate (it never
// serves a gated tool), no local argument validation, and its schema passes through.
class remote_tool final : public toolkit::tool {
public:
    remote_tool(std::string local_name, std::string host, std::string remote_name, std::string description,
                json::object schema, invoker call)
        : name_(std::move(local_name)),
          host_(std::move(host)),
          remote_name_(std::move(remote_name)),
          description_(std::move(description)),
          schema_(std::move(schema)),
          call_(std::move(call)),
          title_(fmt::format("{} (remote {})", remote_name_, host_)) {}

    const std::string& name() const override { return name_; }
    const std::string& title() const override { return title_; }
    const std::string& description() const override { return description_; }
    const std::string& model_description() const override { return description_; }
    const json::object& input_schema() const override { return schema_; }
    const std::vector<std::string>& tags() const override { return tags_; }
    // Served over MCP when the operator opts in; never re-exported over a2a, so agents
    // cannot chain each other's tools in loops.
    toolkit::exposure exposed() const override {
        // Never re-exported to other peers over a2a.
        return {toolkit::surface::mcp, toolkit::surface::agent};
    }
    toolkit::confirm_requirement confirm() const override { return {toolkit::confirm_posture::not_required, {}}; }
    toolkit::tool_kind kind() const override { return toolkit::tool_kind::remote; }
    std::string remote_agent() const override { return host_; }

    boost::asio::awaitable<toolkit::outcome> call(json::value arguments, toolkit::call_options) override {
        // Models emit null for argument-less tools; the peer treats absent input as {}.
        if (arguments.is_object() && arguments.get_object().empty()) arguments = nullptr;
        if (!call_) co_return toolkit::outcome::failure("remote tools are listed but not callable here");
        std::string failure;
        try {
            const auto reply = co_await call_(host_, remote_name_, std::move(arguments));
            co_return outcome_of(reply);
        } catch (const std::exception& e) {
            failure = e.what();
        }
        co_return toolkit::outcome::failure(fmt::format(
            "calling tool {} on agent {}: {}", gocompat::quote(remote_name_), gocompat::quote(host_), failure));
    }

private:
    std::string name_, host_, remote_name_, description_;
    json::object schema_;
    invoker call_;
    std::string title_;
    std::vector<std::string> tags_;
};

}  // namespace

std::vector<descriptor> filter_descriptors(const host_config& host, const std::vector<descriptor>& tools,
                                           bool& include_tags_ignored) {
    const auto include = compile(host.include_tools);
    const auto exclude = compile(host.exclude_tools);
    include_tags_ignored = !host.include_tags.empty();
    std::vector<descriptor> kept;
    for (const auto& d : tools) {
        if (!include.empty() && !any_match(include, d.name)) continue;
        if (!exclude.empty() && any_match(exclude, d.name)) continue;
        kept.push_back(d);
    }
    return kept;
}

toolkit::outcome outcome_of(const tool_reply& reply) {
    if (reply.is_error) return toolkit::outcome::failure(reply.output);
    return toolkit::outcome::from_command(
        toolkit::command_result{reply.command.value_or(""), reply.exit_code, reply.output, reply.truncated});
}

import_result import_tools(const std::vector<host_config>& hosts, const std::vector<discovery>& found,
                           const std::set<std::string>& taken, invoker call) {
    import_result r;
    std::vector<std::vector<descriptor>> kept(hosts.size());
    for (std::size_t i = 0; i < hosts.size(); ++i) {
        host_outcome h;
        h.name = hosts[i].name;
        h.alias = hosts[i].effective_alias();
        if (i < found.size()) {
            h.version = found[i].version;
            h.rtt = found[i].rtt;
            h.error = found[i].error;
            h.advertised = found[i].tools.size();
            if (!h.error) {
                try {
                    kept[i] = filter_descriptors(hosts[i], found[i].tools, h.include_tags_ignored);
                } catch (const import_error& e) {
                    h.error = e.what();
                }
            }
        } else {
            h.error = "not discovered";
        }
        r.hosts.push_back(std::move(h));
    }

    // Pass 1: how often each bare name is offered, over every host that answered.
    std::map<std::string, int> bare_count;
    for (std::size_t i = 0; i < hosts.size(); ++i) {
        if (r.hosts[i].error) continue;
        for (const auto& d : kept[i]) ++bare_count[d.name];
    }
    // Pass 2: a name a local tool holds, or that several hosts offer, gets the alias
    // prefix on every host alike; then count the final names.
    std::vector<std::vector<std::string>> final_names(hosts.size());
    std::map<std::string, int> final_count;
    for (std::size_t i = 0; i < hosts.size(); ++i) {
        if (r.hosts[i].error) continue;
        for (const auto& d : kept[i]) {
            const bool prefix = taken.contains(d.name) || bare_count[d.name] > 1;
            auto name = prefix ? hosts[i].effective_alias() + "_" + d.name : d.name;
            ++final_count[name];
            final_names[i].push_back(std::move(name));
        }
    }
    // Pass 3: build, skipping every tool still colliding (all of them, never one winner).
    std::vector<std::string> collisions;
    for (std::size_t i = 0; i < hosts.size(); ++i) {
        if (r.hosts[i].error) continue;
        auto& h = r.hosts[i];
        for (std::size_t k = 0; k < kept[i].size(); ++k) {
            const auto& d = kept[i][k];
            const auto& final_name = final_names[i][k];
            if (!gocompat::is_valid_name(final_name)) {
                h.skipped.push_back(fmt::format("{} (invalid name {})", d.name, gocompat::quote(final_name)));
                continue;
            }
            if (taken.contains(final_name) || final_count[final_name] > 1) {
                h.skipped.push_back(fmt::format("{} (name {} collides)", d.name, gocompat::quote(final_name)));
                collisions.push_back(
                    fmt::format("{} (agent {})", gocompat::quote(final_name), gocompat::quote(h.name)));
                continue;
            }
            if (d.description.empty()) {
                h.skipped.push_back(fmt::format("{} (tool {} from agent {} advertises no description)", d.name,
                                                gocompat::quote(final_name), gocompat::quote(h.name)));
                continue;
            }
            // The schema is untrusted: it must be an object; the peer's keys are merged
            // over {"type":"object"} so a missing type still reads as an object.
            json::object schema{{"type", "object"}};
            if (d.input_schema) {
                if (!d.input_schema->is_object()) {
                    h.skipped.push_back(
                        fmt::format("{} (tool {} from agent {} has an input schema that is not an object)", d.name,
                                    gocompat::quote(final_name), gocompat::quote(h.name)));
                    continue;
                }
                for (const auto& kv : d.input_schema->get_object()) schema[kv.key()] = kv.value();
            }
            r.tools.push_back(
                std::make_shared<remote_tool>(final_name, h.name, d.name, d.description, std::move(schema), call));
            h.imported.push_back(final_name);
        }
    }
    if (!collisions.empty()) {
        std::string list;
        for (const auto& c : collisions) list += (list.empty() ? "" : ", ") + c;
        r.collision_error =
            fmt::format("imported tool name collision: {}; set a distinct alias on the remote_tools host", list);
    }
    return r;
}

std::vector<std::string> import_result::warnings() const {
    std::vector<std::string> out;
    for (const auto& h : hosts) {
        if (h.include_tags_ignored) {
            out.push_back(
                fmt::format("remote agent {} include filter uses tags, which discovery does not carry; the tag "
                            "filter was ignored (filter by tool name instead)",
                            gocompat::quote(h.name)));
        }
        if (!h.skipped.empty()) {
            std::string list;
            for (const auto& s : h.skipped) list += (list.empty() ? "" : "; ") + s;
            out.push_back(fmt::format("remote agent {}: skipped {}", gocompat::quote(h.name), list));
        }
    }
    return out;
}

void require_complete(const import_result& r, const std::string& nats_context) {
    for (const auto& h : r.hosts) {
        if (h.error) {
            throw import_error(fmt::format("importing tools from remote agent {} on context {}: {}",
                                           gocompat::quote(h.name), gocompat::quote(nats_context), *h.error));
        }
    }
    if (r.collision_error) throw import_error(*r.collision_error);
}

}  // namespace fiskai::remotetools
