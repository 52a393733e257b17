#include "slack_state.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace fiskai::fake_slack {

namespace json = boost::json;

namespace {

std::string str(const json::object& o, std::string_view key) {
    const auto* v = o.if_contains(key);
    if (v == nullptr) return {};
    if (v->is_string()) return std::string(v->get_string());
    if (v->is_int64()) return std::to_string(v->get_int64());
    return {};
}

std::size_t text_size(const json::value& text_object) {
    if (const auto* o = text_object.if_object()) {
        if (const auto* t = o->if_contains("text"); t != nullptr && t->is_string()) return t->get_string().size();
    }
    return 0;
}

}  // namespace

std::string check_blocks(const json::value& blocks) {
    if (blocks.is_null()) return {};
    const auto* list = blocks.if_array();
    if (list == nullptr) return "blocks is not an array";
    if (list->size() > 50) return "more than 50 blocks";
    for (const auto& block : *list) {
        const auto* b = block.if_object();
        if (b == nullptr) return "a block is not an object";
        const auto type = str(*b, "type");
        if (type == "section") {
            if (const auto* t = b->if_contains("text"); t != nullptr && text_size(*t) > 3000)
                return "section text over 3000 characters";
        } else if (type == "actions") {
            const auto* elements = b->if_contains("elements");
            if (elements == nullptr || !elements->is_array()) return "actions block without elements";
            if (elements->get_array().size() > 25) return "more than 25 elements in an actions block";
            for (const auto& element : elements->get_array()) {
                const auto& e = element.as_object();
                if (str(e, "action_id").size() > 255) return "action_id over 255 characters";
                if (str(e, "type") == "button") {
                    if (const auto* t = e.if_contains("text"); t != nullptr && text_size(*t) > 75)
                        return "button text over 75 characters";
                    if (str(e, "value").size() > 2000) return "button value over 2000 characters";
                } else if (str(e, "type") == "static_select") {
                    const auto* options = e.if_contains("options");
                    if (options == nullptr || !options->is_array()) return "static_select without options";
                    if (options->get_array().size() > 100) return "more than 100 options";
                    for (const auto& option : options->get_array()) {
                        const auto& o = option.as_object();
                        if (str(o, "value").size() > 150) return "option value over 150 characters";
                        if (const auto* t = o.if_contains("text"); t != nullptr && text_size(*t) > 75)
                            return "option text over 75 characters";
                    }
                }
            }
        }
    }
    return {};
}

std::string slack_state::next_ts() { return fmt::format("1700000000.{:06d}", ++ts_counter_); }

message* slack_state::find(std::string_view channel, std::string_view ts) {
    for (auto& m : messages_)
        if (m.channel == channel && m.ts == ts) return &m;
    return nullptr;
}

message* slack_state::find_any(std::string_view ts) {
    for (auto& m : messages_)
        if (m.ts == ts) return &m;
    return nullptr;
}

json::object slack_state::message_json(const message& m) const {
    json::object out{{"type", "message"}, {"user", m.user}, {"text", m.text}, {"ts", m.ts}};
    if (!m.thread_ts.empty()) out["thread_ts"] = m.thread_ts;
    if (!m.bot_id.empty()) out["bot_id"] = m.bot_id;
    if (!m.blocks.is_null()) out["blocks"] = m.blocks;
    return out;
}

web_reply slack_state::call(std::string_view method, std::string_view token, const json::object& args,
                            std::string_view socket_url) {
    auto fail = [](std::string code) {
        return web_reply{200, json::object{{"ok", false}, {"error", std::move(code)}}};
    };
    if (auto it = limits_.find(std::string(method)); it != limits_.end() && it->second.first > 0) {
        --it->second.first;
        return web_reply{429, json::object{{"ok", false}, {"error", "ratelimited"}}, it->second.second};
    }
    const bool app_method = method == "apps.connections.open";
    if (token.empty()) return fail("not_authed");
    if (token != (app_method ? app_token : bot_token)) return fail("invalid_auth");

    if (method == "auth.test")
        return web_reply{200, json::object{{"ok", true},
                                           {"url", "https://fake.slack.com/"},
                                           {"team", "fake"},
                                           {"user", "fiskai"},
                                           {"team_id", team},
                                           {"user_id", bot_user},
                                           {"bot_id", bot_id}}};
    if (app_method) return web_reply{200, json::object{{"ok", true}, {"url", socket_url}}};
    if (method == "chat.postMessage" || method == "chat.update") {
        const auto channel = str(args, "channel");
        if (channel.empty()) return fail("channel_not_found");
        const auto text = str(args, "text");
        const json::value blocks = args.contains("blocks") ? args.at("blocks") : json::value(nullptr);
        if (text.empty() && (blocks.is_null() || (blocks.is_array() && blocks.get_array().empty())))
            return fail("no_text");
        if (text.size() > 40000) return fail("msg_too_long");
        if (auto bad = check_blocks(blocks); !bad.empty()) {
            auto reply = fail("invalid_blocks");
            reply.body["errors"] = json::array{json::value(bad)};
            return reply;
        }
        message* target = nullptr;
        if (method == "chat.postMessage") {
            messages_.push_back(
                message{channel, next_ts(), str(args, "thread_ts"), text, bot_user, bot_id, blocks, blocks});
            target = &messages_.back();
        } else {
            target = find(channel, str(args, "ts"));
            if (target == nullptr || target->user != bot_user) return fail("message_not_found");
            target->text = text;
            target->blocks = blocks;
        }
        auto entry = message_json(*target);
        entry["op"] = method == "chat.postMessage" ? "post" : "update";
        entry["channel"] = channel;
        log_.push_back(entry);
        return web_reply{200, json::object{{"ok", true},
                                           {"channel", channel},
                                           {"ts", target->ts},
                                           {"text", target->text},
                                           {"message", message_json(*target)}}};
    }
    if (method == "conversations.replies") {
        const auto channel = str(args, "channel");
        const auto ts = str(args, "ts");
        if (channel.empty()) return fail("channel_not_found");
        if (ts.empty() || find(channel, ts) == nullptr) return fail("thread_not_found");
        std::size_t limit = 1000;
        if (auto l = str(args, "limit"); !l.empty()) limit = static_cast<std::size_t>(std::max(1, std::stoi(l)));
        json::array out;
        for (const auto& m : messages_) {
            if (m.channel != channel || (m.ts != ts && m.thread_ts != ts)) continue;
            if (out.size() == limit) break;
            out.push_back(message_json(m));
        }
        return web_reply{200, json::object{{"ok", true}, {"messages", std::move(out)}, {"has_more", false}}};
    }
    return fail("unknown_method");
}

json::object slack_state::event_envelope(const json::object& control, std::string& error) {
    const auto type = str(control, "type");
    const auto channel = str(control, "channel");
    if (type != "app_mention" && type != "message") {
        error = "type must be app_mention or message";
        return {};
    }
    if (channel.empty()) {
        error = "channel is required";
        return {};
    }
    message m{channel,
              next_ts(),
              str(control, "thread_ts"),
              str(control, "text"),
              str(control, "user"),
              str(control, "bot_id"),
              nullptr};
    if (m.user.empty()) m.user = "UHUMAN";
    messages_.push_back(m);
    json::object event{{"type", type},       {"user", m.user},   {"text", m.text}, {"ts", m.ts},
                       {"channel", channel}, {"event_ts", m.ts}, {"team", team}};
    if (!m.thread_ts.empty()) event["thread_ts"] = m.thread_ts;
    if (!m.bot_id.empty()) event["bot_id"] = m.bot_id;
    if (auto subtype = str(control, "subtype"); !subtype.empty()) event["subtype"] = subtype;
    if (auto ct = str(control, "channel_type"); !ct.empty()) event["channel_type"] = ct;
    ++events_;
    json::object payload{
        {"token", "fake-verification"},
        {"team_id", team},
        {"api_app_id", "A1"},
        {"event", std::move(event)},
        {"type", "event_callback"},
        {"event_id", fmt::format("Ev{:08d}", events_)},
        {"event_time", 1700000000 + static_cast<std::int64_t>(events_)},
        {"authorizations", json::array{json::object{{"team_id", team}, {"user_id", bot_user}, {"is_bot", true}}}}};
    return json::object{{"envelope_id", next_envelope_id()},
                        {"type", "events_api"},
                        {"accepts_response_payload", false},
                        {"retry_attempt", 0},
                        {"retry_reason", ""},
                        {"payload", std::move(payload)}};
}

json::object slack_state::click_envelope(const json::object& control, std::string& error) {
    const auto ts = str(control, "message_ts");
    message* m = find_any(ts);
    if (m == nullptr || m->user != bot_user) {
        error = fmt::format("no bot message with ts {}", ts);
        return {};
    }
    // Controls in order over every actions block; a static_select counts as one control.
    std::vector<std::pair<const json::object*, std::string>> controls;  // element, block_id
    // stale: the click comes from a client still showing the message as first posted.
    const auto* stale = control.if_contains("stale");
    const auto& shown = stale != nullptr && stale->is_bool() && stale->get_bool() ? m->first_blocks : m->blocks;
    if (shown.is_array()) {
        for (const auto& block : shown.get_array()) {
            const auto& b = block.as_object();
            if (str(b, "type") != "actions") continue;
            const auto* elements = b.if_contains("elements");
            if (elements == nullptr || !elements->is_array()) continue;
            for (const auto& element : elements->get_array())
                controls.emplace_back(&element.as_object(), str(b, "block_id"));
        }
    }
    if (controls.empty()) {
        error = fmt::format("message {} has no controls", ts);
        return {};
    }
    json::object action;
    const auto now = fmt::format("1700001000.{:06d}", ++ts_counter_);
    if (const auto* choice = control.if_contains("choice")) {
        const json::object* select = nullptr;
        std::string block_id;
        for (auto& [e, id] : controls)
            if (str(*e, "type") == "static_select") select = e, block_id = id;
        const auto index = choice->is_int64() ? choice->get_int64() : -1;
        if (select == nullptr || index < 0 ||
            index >= static_cast<std::int64_t>(select->at("options").as_array().size())) {
            error = "choice does not name an option of a static_select";
            return {};
        }
        action = {{"type", "static_select"},
                  {"action_id", str(*select, "action_id")},
                  {"block_id", block_id},
                  {"selected_option", select->at("options").as_array()[static_cast<std::size_t>(index)]},
                  {"action_ts", now}};
    } else {
        const auto* idx = control.if_contains("action_index");
        const auto index = idx != nullptr && idx->is_int64() ? idx->get_int64() : 0;
        if (index < 0 || index >= static_cast<std::int64_t>(controls.size()) ||
            str(*controls[static_cast<std::size_t>(index)].first, "type") != "button") {
            error = fmt::format("action_index {} does not name a button", index);
            return {};
        }
        const auto& [e, block_id] = controls[static_cast<std::size_t>(index)];
        action = {{"type", "button"},
                  {"action_id", str(*e, "action_id")},
                  {"block_id", block_id},
                  {"value", str(*e, "value")},
                  {"text", e->contains("text") ? e->at("text") : json::value(nullptr)},
                  {"action_ts", now}};
    }
    auto user = str(control, "user");
    if (user.empty()) user = "UHUMAN";
    json::object container{
        {"type", "message"}, {"message_ts", m->ts}, {"channel_id", m->channel}, {"is_ephemeral", false}};
    if (!m->thread_ts.empty()) container["thread_ts"] = m->thread_ts;
    json::object payload{{"type", "block_actions"},
                         {"user", json::object{{"id", user}, {"username", user}, {"team_id", team}}},
                         {"api_app_id", "A1"},
                         {"token", "fake-verification"},
                         {"container", std::move(container)},
                         {"trigger_id", fmt::format("trigger-{}", ts_counter_)},
                         {"team", json::object{{"id", team}, {"domain", "fake"}}},
                         {"channel", json::object{{"id", m->channel}, {"name", "fake"}}},
                         {"message", message_json(*m)},
                         {"response_url", "http://127.0.0.1/_fake/response"},
                         {"actions", json::array{std::move(action)}}};
    return json::object{{"envelope_id", next_envelope_id()},
                        {"type", "interactive"},
                        {"accepts_response_payload", false},
                        {"retry_attempt", 0},
                        {"retry_reason", ""},
                        {"payload", std::move(payload)}};
}

}  // namespace fiskai::fake_slack
