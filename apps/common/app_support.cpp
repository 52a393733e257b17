#include "app_support.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/json/array.hpp>

#include <fmt/format.h>

#include <cstdio>

namespace fiskai::app {

void log_warning(std::string_view text) { fmt::print(stderr, "warning: {}\n", text); }
void log_info(std::string_view text) { fmt::print(stderr, "{}\n", text); }

namespace {
toolkit::tool_filter to_filter(const config::filter& f) { return {f.tools, f.tags}; }
}  // namespace

toolkit::application_options application_options_from(const config::config& c) {
    toolkit::application_options o;
    o.application_path = c.application_path;
    o.secret_env_names = c.credential_env_names();
    o.derive.confirm_tags = c.harness.confirm_tags;
    o.derive.global_flags = c.global_flags;
    o.derive.include = to_filter(c.include);
    o.derive.exclude = to_filter(c.exclude);
    o.derive.serve_include = to_filter(c.expose_tools_include);
    o.derive.serve_exclude = to_filter(c.expose_tools_exclude);
    return o;
}

toolkit::application_tools load_tools_blocking(const config::config& c) {
    boost::asio::io_context ioc;
    auto f = boost::asio::co_spawn(ioc, toolkit::load_application_tools(application_options_from(c)),
                                   boost::asio::use_future);
    ioc.run();
    return f.get();
}

boost::json::object tool_info_json(const toolkit::tool& t) {
    boost::json::object o;
    o["name"] = t.name();
    o["command"] = t.title();
    o["description"] = t.model_description();
    boost::json::array tags;
    for (const auto& tag : t.tags()) tags.emplace_back(tag);
    o["tags"] = std::move(tags);
    o["confirm"] = t.confirm().posture != toolkit::confirm_posture::not_required;
    o["input_schema"] = t.input_schema();
    return o;
}

std::string tools_table(const toolkit::tool_list& tools) {
    std::size_t width = 4;
    for (const auto& t : tools) width = std::max(width, t->name().size());
    std::string out = fmt::format("{:<{}}  {:<7}  {}\n", "TOOL", width, "CONFIRM", "DESCRIPTION / TAGS");
    for (const auto& t : tools) {
        const auto c = t->confirm();
        std::string confirm = c.posture == toolkit::confirm_posture::required ? "yes" : "no";
        out += fmt::format("{:<{}}  {:<7}  {}\n", t->name(), width, confirm, t->description());
        if (!t->tags().empty()) {
            std::string tags;
            for (const auto& tag : t->tags()) tags += (tags.empty() ? "" : ", ") + tag;
            out += fmt::format("{:<{}}  {:<7}  tags: {}{}\n", "", width, "", tags,
                               c.trigger_tag.empty() ? "" : fmt::format(" (confirm: {})", c.trigger_tag));
        }
    }
    return out;
}

}  // namespace fiskai::app
