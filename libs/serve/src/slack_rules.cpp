#include <fiskai/serve/a2a_rules.hpp>
#include <fiskai/serve/slack_rules.hpp>

#include <fiskai/gocompat/utf8.hpp>
#include <fiskai/runstate/state.hpp>

#include <boost/json.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <variant>

namespace fiskai::serve::slack_rules {

namespace json = boost::json;

namespace {

std::string str(const json::object& o, std::string_view key) {
    const auto* v = o.if_contains(key);
    return v != nullptr && v->is_string() ? std::string(v->get_string()) : std::string();
}

const json::object* obj(const json::object& o, std::string_view key) {
    const auto* v = o.if_contains(key);
    return v != nullptr ? v->if_object() : nullptr;
}

std::string_view trim(std::string_view s) {
    const auto first = s.find_first_not_of(" \t\r\n");
    if (first == std::string_view::npos) return {};
    const auto last = s.find_last_not_of(" \t\r\n");
    return s.substr(first, last - first + 1);
}

// Markdown link targets that become Slack links.
bool linkable(std::string_view target) {
    return target.starts_with("https://") || target.starts_with("http://") || target.starts_with("mailto:");
}

json::object plain(std::string_view t) { return json::object{{"type", "plain_text"}, {"text", t}, {"emoji", true}}; }
json::object mrkdwn(std::string_view t) { return json::object{{"type", "mrkdwn"}, {"text", t}}; }

json::object button(std::string_view label, std::size_t n, const action_value& v) {
    return json::object{{"type", "button"},
                        {"text", plain(a2a_rules::sanitize(label, 75))},
                        {"action_id", fmt::format("fiskai.answer.{}", n)},
                        {"value", encode_value(v)}};
}

}  // namespace

std::string busy_text(std::size_t admitted) {
    return fmt::format("I'm busy with {} requests; please try again shortly.", admitted);
}

std::optional<frame> parse_frame(std::string_view text) {
    boost::system::error_code ec;
    auto value = json::parse(text, ec);
    if (ec || !value.is_object()) return std::nullopt;
    const auto& o = value.as_object();
    frame f;
    const auto type = str(o, "type");
    f.envelope_id = str(o, "envelope_id");
    if (type == "hello") {
        f.what = frame::kind::hello;
    } else if (type == "disconnect") {
        f.what = frame::kind::disconnect;
        f.reason = str(o, "reason");
    } else if (!f.envelope_id.empty()) {
        f.what = frame::kind::envelope;
        f.type = type;
        if (const auto* p = obj(o, "payload")) f.payload = *p;
        if (const auto* r = o.if_contains("retry_attempt"); r != nullptr && r->is_int64())
            f.retry_attempt = r->get_int64();
    }
    return f;
}

std::string ack_text(std::string_view envelope_id) {
    return json::serialize(json::object{{"envelope_id", envelope_id}});
}

bool fatal_disconnect(std::string_view reason) noexcept { return reason == "link_disabled"; }

bool seen_ids::first_time(const std::string& id, std::chrono::steady_clock::time_point now) {
    if (id.empty()) return true;
    while (!order_.empty() && (order_.front().second + ttl_ <= now || order_.size() >= capacity_ + 1)) {
        index_.erase(order_.front().first);
        order_.pop_front();
    }
    if (index_.contains(id)) return false;
    if (order_.size() == capacity_) {
        index_.erase(order_.front().first);
        order_.pop_front();
    }
    order_.emplace_back(id, now);
    index_[id] = std::prev(order_.end());
    return true;
}

std::string strip_mention(std::string_view text, std::string_view bot_user) {
    std::string out(text);
    const auto tag = fmt::format("<@{}>", bot_user);
    for (auto at = out.find(tag); at != std::string::npos; at = out.find(tag)) out.erase(at, tag.size());
    // A mention may carry a label: <@UBOT|fiskai>.
    const auto labelled = fmt::format("<@{}|", bot_user);
    for (auto at = out.find(labelled); at != std::string::npos; at = out.find(labelled)) {
        const auto end = out.find('>', at);
        out.erase(at, end == std::string::npos ? std::string::npos : end - at + 1);
    }
    return std::string(trim(out));
}

std::optional<human_message> classify_event(const json::object& payload, const self_identity& me,
                                            const std::vector<std::string>& channels, std::string& why) {
    if (str(payload, "type") != "event_callback") {
        why = "not an event_callback";
        return std::nullopt;
    }
    const auto* event = obj(payload, "event");
    if (event == nullptr) {
        why = "no event";
        return std::nullopt;
    }
    const auto type = str(*event, "type");
    human_message m;
    m.event_id = str(payload, "event_id");
    m.team = str(payload, "team_id");
    if (m.team.empty()) m.team = str(*event, "team");
    m.channel = str(*event, "channel");
    m.user = str(*event, "user");
    m.ts = str(*event, "ts");
    const auto thread = str(*event, "thread_ts");
    m.in_thread = !thread.empty() && thread != m.ts;
    m.thread_ts = thread.empty() ? m.ts : thread;
    const auto raw = str(*event, "text");
    if (!str(*event, "subtype").empty() || event->contains("bot_id") || m.user == me.bot_user) {
        why = "a message from a bot or with a subtype";
        return std::nullopt;
    }
    if (m.channel.empty() || m.user.empty() || m.ts.empty()) {
        why = "an event without channel, user or ts";
        return std::nullopt;
    }
    const bool mentions = raw.find(fmt::format("<@{}", me.bot_user)) != std::string::npos;
    if (type == "app_mention") {
        m.what = human_message::kind::mention;
    } else if (type == "message") {
        if (str(*event, "channel_type") == "im") {
            m.what = human_message::kind::direct;
        } else if (m.in_thread && !mentions) {
            m.what = human_message::kind::thread_reply;
        } else {
            why = mentions ? "a mention (handled as app_mention)" : "a channel message outside a thread";
            return std::nullopt;
        }
    } else {
        why = fmt::format("event type {}", type);
        return std::nullopt;
    }
    if (m.what != human_message::kind::direct && !channels.empty() &&
        std::find(channels.begin(), channels.end(), m.channel) == channels.end()) {
        why = fmt::format("channel {} is not in expose.agent.slack.channels", m.channel);
        return std::nullopt;
    }
    m.prompt = strip_mention(raw, me.bot_user);
    if (m.prompt.empty()) {
        why = "an empty message";
        return std::nullopt;
    }
    return m;
}

std::string thread_context(const json::value& replies, std::string_view current_ts, const self_identity& me,
                           std::size_t cap) {
    std::vector<std::string> lines;
    if (const auto* list = replies.if_array()) {
        for (const auto& item : *list) {
            const auto* m = item.if_object();
            if (m == nullptr) continue;
            const auto user = str(*m, "user");
            if (str(*m, "ts") == current_ts || m->contains("bot_id") || user == me.bot_user) continue;
            lines.push_back(fmt::format("<@{}>: {}", user, str(*m, "text")));
        }
    }
    // The newest lines are kept when the cap bites.
    std::string out;
    std::size_t total = 0;
    std::size_t first = lines.size();
    while (first > 0 && total + lines[first - 1].size() + 1 <= cap) total += lines[--first].size() + 1;
    for (std::size_t i = first; i < lines.size(); ++i) {
        if (!out.empty()) out += '\n';
        out += lines[i];
    }
    return out;
}

std::string compose_prompt(std::string_view prompt, std::string_view context) {
    if (context.empty()) return std::string(prompt);
    return fmt::format("{}\n\n<context>\n{}\n</context>", prompt, context);
}

std::string escape(std::string_view s) { return escape_capped(s, std::numeric_limits<std::size_t>::max()); }

std::string escape_capped(std::string_view s, std::size_t max_runes) {
    std::string out;
    std::size_t runes = 0;
    for (std::size_t i = 0; i < s.size(); ++i) {
        const char c = s[i];
        const std::string_view entity = c == '&' ? "&amp;" : c == '<' ? "&lt;" : c == '>' ? "&gt;" : "";
        const bool starts_rune = (static_cast<unsigned char>(c) & 0xC0) != 0x80;
        // A rune's continuation bytes follow it; an entity goes in whole or not at all.
        const std::size_t grows = !entity.empty() ? entity.size() : starts_rune ? 1 : 0;
        if (runes + grows > max_runes) break;
        runes += grows;
        if (!entity.empty())
            out += entity;
        else
            out += c;
    }
    return out;
}

std::string to_mrkdwn(std::string_view markdown) {
    const auto escaped = escape(markdown);
    std::string out;
    std::string_view rest = escaped;
    while (!rest.empty()) {
        const auto eol = rest.find('\n');
        auto line = rest.substr(0, eol);
        std::string converted;
        // Headings: `# h` .. `###### h` → `*h*`.
        std::size_t hashes = 0;
        while (hashes < line.size() && line[hashes] == '#') ++hashes;
        if (hashes > 0 && hashes <= 6 && hashes < line.size() && line[hashes] == ' ') {
            converted = fmt::format("*{}*", trim(line.substr(hashes + 1)));
        } else {
            for (std::size_t i = 0; i < line.size();) {
                if (line.substr(i, 2) == "**") {
                    const auto close = line.find("**", i + 2);
                    if (close != std::string_view::npos && close > i + 2) {
                        converted += fmt::format("*{}*", line.substr(i + 2, close - i - 2));
                        i = close + 2;
                        continue;
                    }
                }
                if (line[i] == '[') {
                    const auto mid = line.find("](", i);
                    const auto end = mid == std::string_view::npos ? mid : line.find(')', mid);
                    // Only web and mail targets: `<@U…|t>`, `<!channel|t>` or `<#C…|t>` would
                    // let model output mention people, so other targets stay escaped text.
                    if (end != std::string_view::npos &&
                        line.substr(i + 1, mid - i - 1).find('[') == std::string_view::npos &&
                        linkable(line.substr(mid + 2, end - mid - 2))) {
                        converted += fmt::format("<{}|{}>", line.substr(mid + 2, end - mid - 2),
                                                 line.substr(i + 1, mid - i - 1));
                        i = end + 1;
                        continue;
                    }
                }
                converted += line[i++];
            }
        }
        out += converted;
        if (eol == std::string_view::npos) break;
        out += '\n';
        rest.remove_prefix(eol + 1);
    }
    return out;
}

std::vector<std::string> split_answer(std::string_view text, std::size_t limit, std::size_t max_parts) {
    std::vector<std::string> parts;
    std::string_view rest = trim(text);
    while (!rest.empty()) {
        if (parts.size() == max_parts) {
            parts.back() += fmt::format("\n[answer trimmed: {} more characters]", rest.size());
            break;
        }
        if (rest.size() <= limit) {
            parts.emplace_back(rest);
            break;
        }
        const auto window = rest.substr(0, limit);
        std::size_t cut = window.rfind("\n\n");
        if (cut == std::string_view::npos || cut < limit / 4) cut = window.rfind('\n');
        if (cut == std::string_view::npos || cut < limit / 4) cut = window.rfind(' ');
        if (cut == std::string_view::npos || cut < limit / 4) cut = gocompat::utf8_prefix(rest, limit).size();
        if (cut == 0) cut = limit;
        parts.emplace_back(trim(rest.substr(0, cut)));
        rest = trim(rest.substr(cut));
    }
    return parts;
}

std::string status_for(const outcome& o) {
    if (o.abandoned) return std::string(text::not_started);
    if (o.crashed) return fmt::format(":x: Failed: {}", o.error.empty() ? "the run crashed" : o.error);
    if (!o.deferred.empty()) return std::string(text::waiting);
    if (o.reason == "suspended") return std::string(text::stopped);
    if (o.reason == "completed" || o.error.empty()) return std::string(text::done);
    return fmt::format(":x: Failed: {}", o.error);  // error, budget, max_iterations
}

std::string encode_value(const action_value& v) {
    json::object o{{"v", 1}, {"q", v.question_id}, {"k", v.kind}, {"c", v.choice}};
    if (!v.call_id.empty()) o["call"] = v.call_id;
    return json::serialize(o);
}

std::optional<action_value> decode_value(std::string_view text) {
    boost::system::error_code ec;
    auto value = json::parse(text, ec);
    if (ec || !value.is_object()) return std::nullopt;
    const auto& o = value.as_object();
    const auto* v = o.if_contains("v");
    if (v == nullptr || !v->is_int64() || v->get_int64() != 1) return std::nullopt;
    action_value out{str(o, "q"), str(o, "k"), str(o, "c"), str(o, "call")};
    if (out.question_id.empty() || (out.kind != "confirm" && out.kind != "select" && out.kind != "approval"))
        return std::nullopt;
    return out;
}

question_message approval_message(const toolkit::approval_request& r, std::string_view question_id) {
    // Each part is capped as escaped text (an `&` shows as five characters), so the section
    // stays under Slack's 3000 characters: 100 + 2000 + 200 and the frame.
    auto command = a2a_rules::sanitize(r.command_line, 2000);
    std::replace(command.begin(), command.end(), '`', '\'');
    const auto section =
        fmt::format("*Approval needed* for `{}`:\n`{}`\n{}", escape_capped(a2a_rules::sanitize(r.tool_name, 100), 100),
                    escape_capped(command, 2000), escape_capped(a2a_rules::sanitize(r.trigger_tag, 200), 200));
    json::array buttons;
    const std::pair<std::string_view, std::string_view> choices[] = {
        {"Allow once", "once"}, {"Allow for this turn", "run"}, {"Deny", "deny"}};
    std::size_t n = 0;
    for (const auto& [label, choice] : choices)
        buttons.push_back(button(label, n++, {std::string(question_id), "approval", std::string(choice), r.call_id}));
    json::array blocks{json::object{{"type", "section"}, {"text", mrkdwn(section)}},
                       json::object{{"type", "actions"}, {"block_id", "fiskai.question"}, {"elements", buttons}}};
    // The message's text is mrkdwn too (the notification and the fallback): escaped like the
    // section, so a name with <!channel> in it mentions nobody.
    return {fmt::format("Approval needed for {}", escape_capped(a2a_rules::sanitize(r.tool_name, 100), 100)),
            std::move(blocks)};
}

question_message tool_question_message(const toolkit::question& q, std::string_view question_id) {
    const auto section = escape_capped(a2a_rules::sanitize(q.text, 2900), 2900);
    json::array blocks{json::object{{"type", "section"}, {"text", mrkdwn(section)}}};
    const std::string id(question_id);
    json::array elements;
    switch (q.what) {
        case toolkit::question::kind::confirm:
            elements.push_back(button("Yes", 0, {id, "confirm", "yes", q.call_id}));
            elements.push_back(button("No", 1, {id, "confirm", "no", q.call_id}));
            break;
        case toolkit::question::kind::select:
            if (q.options.size() <= 5) {
                for (std::size_t i = 0; i < q.options.size(); ++i)
                    elements.push_back(button(q.options[i], i, {id, "select", std::to_string(i), q.call_id}));
            } else {
                // Option values are capped at 150 characters: no call id in them (Amendment 14).
                json::array options;
                for (std::size_t i = 0; i < q.options.size() && i < 100; ++i)
                    options.push_back(json::object{{"text", plain(a2a_rules::sanitize(q.options[i], 75))},
                                                   {"value", encode_value({id, "select", std::to_string(i), {}})}});
                elements.push_back(json::object{{"type", "static_select"},
                                                {"action_id", "fiskai.answer.0"},
                                                {"placeholder", plain("Choose…")},
                                                {"options", std::move(options)}});
            }
            break;
        case toolkit::question::kind::input:
            blocks.push_back(
                json::object{{"type", "context"}, {"elements", json::array{mrkdwn(text::reply_to_answer)}}});
            break;
    }
    if (!elements.empty())
        blocks.push_back(
            json::object{{"type", "actions"}, {"block_id", "fiskai.question"}, {"elements", std::move(elements)}});
    // The text is the escaped section: it is mrkdwn as well, and the answered and given-up
    // edits put it back into a section.
    return {section, std::move(blocks)};
}

std::string choice_label(const action_value& v, const std::vector<std::string>& options) {
    if (v.kind == "confirm") return v.choice == "yes" ? "Yes" : "No";
    if (v.kind == "approval") {
        if (v.choice == "once") return "Allow once";
        if (v.choice == "run") return "Allow for this turn";
        return "Deny";
    }
    try {
        const auto i = std::stoul(v.choice);
        if (i < options.size()) return options[i];
    } catch (const std::exception&) {}
    return v.choice;
}

std::optional<toolkit::approval> approval_choice(std::string_view choice) {
    if (choice == "once") return toolkit::approval::allow_once;
    if (choice == "run") return toolkit::approval::allow_for_run;
    if (choice == "deny") return toolkit::approval::deny;
    return std::nullopt;
}

std::optional<click> parse_click(const json::object& payload, std::string& why) {
    if (str(payload, "type") != "block_actions") {
        why = fmt::format("interactive payload of type {}", str(payload, "type"));
        return std::nullopt;
    }
    click c;
    if (const auto* t = obj(payload, "team")) c.team = str(*t, "id");
    if (const auto* u = obj(payload, "user")) c.user = str(*u, "id");
    const auto* container = obj(payload, "container");
    const auto* message = obj(payload, "message");
    if (container != nullptr) {
        c.channel = str(*container, "channel_id");
        c.message_ts = str(*container, "message_ts");
        c.thread_ts = str(*container, "thread_ts");
    }
    if (c.thread_ts.empty() && message != nullptr) c.thread_ts = str(*message, "thread_ts");
    const auto* actions = payload.if_contains("actions");
    if (actions == nullptr || !actions->is_array() || actions->get_array().empty() ||
        !actions->get_array()[0].is_object()) {
        why = "a click without actions";
        return std::nullopt;
    }
    const auto& action = actions->get_array()[0].as_object();
    std::string value = str(action, "value");
    std::string label;
    if (const auto* text = obj(action, "text")) label = str(*text, "text");
    if (const auto* selected = obj(action, "selected_option")) {
        value = str(*selected, "value");
        if (const auto* text = obj(*selected, "text")) label = str(*text, "text");
    }
    auto decoded = decode_value(value);
    if (!str(action, "action_id").starts_with("fiskai.answer.") || !decoded) {
        why = "a click on a control that is not ours";
        return std::nullopt;
    }
    if (c.team.empty() || c.channel.empty() || c.thread_ts.empty() || c.user.empty()) {
        why = "a click without team, channel, thread or user";
        return std::nullopt;
    }
    c.value = std::move(*decoded);
    c.choice_text = a2a_rules::sanitize(label.empty() ? choice_label(c.value, {}) : label, 200);
    if (message != nullptr) {
        if (const auto* blocks = message->if_contains("blocks"); blocks != nullptr && blocks->is_array()) {
            c.message_blocks = *blocks;
            for (const auto& b : blocks->get_array()) {
                const auto* block = b.if_object();
                if (block == nullptr || str(*block, "type") != "section") continue;
                if (const auto* t = obj(*block, "text")) c.question_text = a2a_rules::sanitize(str(*t, "text"), 3000);
                break;
            }
        }
        if (c.question_text.empty()) c.question_text = a2a_rules::sanitize(str(*message, "text"), 3000);
    }
    return c;
}

question_message answered_message(std::string_view question_text, std::string_view answer, std::string_view user) {
    const auto line = fmt::format("{} — answered by <@{}>", escape(answer), user);
    json::array blocks{json::object{{"type", "section"}, {"text", mrkdwn(a2a_rules::sanitize(question_text, 2900))}},
                       json::object{{"type", "context"}, {"elements", json::array{mrkdwn(line)}}}};
    return {line, std::move(blocks)};
}

json::value given_up_blocks(const json::value& blocks) {
    json::array out = blocks.is_array() ? blocks.get_array() : json::array{};
    out.push_back(json::object{{"type", "context"}, {"elements", json::array{mrkdwn(text::no_answer_yet)}}});
    return out;
}

std::string resume_prompt(std::string_view question_text, std::string_view answer) {
    return fmt::format("The operator answered your earlier question \"{}\": {}.", question_text, answer);
}

bool awaiting_decision(const runstate::run_state& session, std::string_view call_id) {
    if (!session.pending || call_id.empty() || session.pending->answered.contains(std::string(call_id))) return false;
    return std::any_of(session.pending->assistant.content.begin(), session.pending->assistant.content.end(),
                       [&](const llm::content_block& b) {
                           const auto* use = std::get_if<llm::tool_use_block>(&b);
                           return use != nullptr && use->id == call_id;
                       });
}

json::value noted_blocks(const json::value& blocks, std::string_view note) {
    json::array out;
    if (blocks.is_array())
        for (const auto& b : blocks.get_array())
            if (!(b.is_object() && str(b.get_object(), "type") == "context")) out.push_back(b);
    out.push_back(json::object{{"type", "context"}, {"elements", json::array{mrkdwn(note)}}});
    return out;
}

}  // namespace fiskai::serve::slack_rules
