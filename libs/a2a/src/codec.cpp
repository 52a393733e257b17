#include <fiskai/a2a/codec.hpp>

#include "body.hpp"
#include "json_text.hpp"

#include <fiskai/gocompat/json.hpp>
#include <fiskai/gocompat/quote.hpp>
#include <fiskai/gocompat/utf8.hpp>

#include <boost/json/parse.hpp>

#include <array>
#include <limits>
#include <type_traits>
#include <utility>
#include <vector>

namespace fiskai::a2a {

// ============================================================================================
// Encoding: Go's encoding/json, field by field.
// ============================================================================================

namespace {

// Appends one JSON object member by member. Keys are this library's own ASCII names.
class object_writer {
public:
    explicit object_writer(std::string& out) : out_(out) { out_.push_back('{'); }
    object_writer(const object_writer&) = delete;
    object_writer& operator=(const object_writer&) = delete;
    ~object_writer() { out_.push_back('}'); }

    std::string& key(std::string_view k) {
        if (!first_) out_.push_back(',');
        first_ = false;
        out_.push_back('"');
        out_.append(k);
        out_.append("\":");
        return out_;
    }
    void string(std::string_view k, std::string_view v) { gocompat::append_json_string(key(k), v); }
    void string_omitempty(std::string_view k, std::string_view v) {
        if (!v.empty()) string(k, v);
    }
    void boolean(std::string_view k, bool v) { key(k).append(v ? "true" : "false"); }
    void boolean_omitempty(std::string_view k, bool v) {
        if (v) boolean(k, v);
    }
    template <class Int>
    void integer(std::string_view k, Int v) {
        key(k).append(std::to_string(v));
    }
    template <class Int>
    void integer_omitempty(std::string_view k, Int v) {
        if (v != 0) integer(k, v);
    }
    void raw(std::string_view k, const raw_json& v) { detail::append_raw(key(k), v.text()); }
    void raw_omitempty(std::string_view k, const std::optional<raw_json>& v) {
        if (v) raw(k, *v);
    }
    void strings_omitempty(std::string_view k, const std::vector<std::string>& v) {
        if (v.empty()) return;
        auto& out = key(k);
        out.push_back('[');
        for (std::size_t i = 0; i < v.size(); ++i) {
            if (i != 0) out.push_back(',');
            gocompat::append_json_string(out, v[i]);
        }
        out.push_back(']');
    }

private:
    std::string& out_;
    bool first_ = true;
};

void write(std::string& out, const identity& id) {
    object_writer w(out);
    w.string("name", id.name);
    w.string_omitempty("instance", id.instance);
}

void write(std::string& out, const exec_result& e) {
    object_writer w(out);
    w.string_omitempty("command", e.command);
    w.integer_omitempty("exit_code", e.exit_code);
    w.boolean_omitempty("truncated", e.truncated);
}

void write(std::string& out, const usage& u) {
    object_writer w(out);
    w.integer_omitempty("input_tokens", u.input_tokens);
    w.integer_omitempty("output_tokens", u.output_tokens);
}

void write(std::string& out, const budget& b) {
    object_writer w(out);
    w.integer_omitempty("max_tokens", b.max_tokens);
    w.integer_omitempty("max_iterations", b.max_iterations);
    w.string_omitempty("call_timeout", b.call_timeout);
}

void write(std::string& out, const tool_descriptor& d) {
    object_writer w(out);
    w.string("name", d.name);
    w.string_omitempty("description", d.description);
    w.raw_omitempty("input_schema", d.input_schema);
}

template <class T>
void write_omitempty(object_writer& w, std::string_view k, const std::optional<T>& v) {
    if (v) write(w.key(k), *v);
}

void write_header(object_writer& w, std::string_view protocol, const header& h) {
    w.string("protocol", protocol);
    w.string("id", h.id);
    w.string("request", h.request);
    w.string("conversation", h.conversation);
    w.string_omitempty("parent", h.parent);
    w.integer("sequence", h.sequence);
    w.string("time", h.time.to_string());
    write(w.key("sender"), h.sender);
    write_omitempty(w, "recipient", h.recipient);
    w.boolean_omitempty("must_understand", h.must_understand);
}

// Blocks: Go re-marshals a block through a map to add `type`, so its keys come out
// sorted; nested objects (exec, usage) keep their struct order.
result<void> write_block(std::string& out, const block& b) {
    return std::visit(
        [&out](const auto& v) -> result<void> {
            using T = std::decay_t<decltype(v)>;
            if constexpr (std::is_same_v<T, std::monostate>) {
                return make_error(errc::invalid_message, "block has no content");
            } else if constexpr (std::is_same_v<T, unknown_block>) {
                detail::append_raw(out, v.raw().text());
                return {};
            } else {
                object_writer w(out);
                if constexpr (std::is_same_v<T, thinking_block>) {
                    w.string_omitempty("provider", v.provider);
                    w.string_omitempty("signature", v.signature);
                    w.string("text", v.text);
                    w.string("type", T::type);
                } else if constexpr (std::is_same_v<T, text_block>) {
                    w.string("text", v.text);
                    w.string("type", T::type);
                } else if constexpr (std::is_same_v<T, tool_call_block>) {
                    w.string("id", v.id);
                    w.raw_omitempty("input", v.input);
                    w.string("name", v.name);
                    w.string("type", T::type);
                } else if constexpr (std::is_same_v<T, tool_result_block>) {
                    w.string("call_id", v.call_id);
                    write_omitempty(w, "exec", v.exec);
                    w.boolean_omitempty("is_error", v.is_error);
                    w.string_omitempty("output", v.output);
                    w.string("type", T::type);
                } else if constexpr (std::is_same_v<T, agent_call_block>) {
                    w.string("id", v.id);
                    w.string("name", v.name);
                    w.string("task", v.task);
                    w.string("type", T::type);
                } else {
                    static_assert(std::is_same_v<T, status_block>);
                    w.integer_omitempty("iteration", v.iteration);
                    w.string_omitempty("phase", v.phase);
                    w.string("type", T::type);
                    write_omitempty(w, "usage", v.usage);
                }
                return {};
            }
        },
        b);
}

result<void> write_payload(object_writer&, const discovery_request&) { return {}; }

result<void> write_payload(object_writer& w, const discovery_reply& m) {
    w.string("name", m.name);
    w.string("version", m.version);
    w.string_omitempty("description", m.description);
    w.strings_omitempty("protocols", m.protocols);
    if (!m.tools.empty()) {
        auto& out = w.key("tools");
        out.push_back('[');
        for (std::size_t i = 0; i < m.tools.size(); ++i) {
            if (i != 0) out.push_back(',');
            write(out, m.tools[i]);
        }
        out.push_back(']');
    }
    return {};
}

result<void> write_payload(object_writer& w, const tool_request& m) {
    w.string("name", m.name);
    w.raw_omitempty("input", m.input);
    return {};
}

result<void> write_payload(object_writer& w, const tool_reply& m) {
    w.boolean_omitempty("is_error", m.is_error);
    w.string_omitempty("output", m.output);
    write_omitempty(w, "exec", m.exec);
    return {};
}

result<void> write_payload(object_writer& w, const task_request& m) {
    w.string("prompt", m.prompt);
    w.string_omitempty("context", m.context);
    w.strings_omitempty("tool_hints", m.tool_hints);
    write_omitempty(w, "budget", m.budget);
    if (m.stream) w.boolean("stream", *m.stream);
    return {};
}

result<void> write_payload(object_writer& w, const task_event& m) {
    if (std::holds_alternative<std::monostate>(m.block))
        return make_error(errc::invalid_message, "block has no content");
    return write_block(w.key("block"), m.block);
}

result<void> write_payload(object_writer& w, const task_result& m) {
    w.string("stop_reason", m.stop_reason);
    w.string_omitempty("text", m.text);
    write_omitempty(w, "usage", m.usage);
    return {};
}

result<void> write_payload(object_writer& w, const task_error& m) {
    w.string_omitempty("stop_reason", m.stop_reason);
    w.string("error", m.error);
    w.string_omitempty("code", m.code);
    return {};
}

result<void> write_payload(object_writer& w, const task_cancel& m) {
    w.string_omitempty("reason", m.reason);
    return {};
}

result<void> write_payload(object_writer& w, const task_ack& m) {
    w.boolean("accepted", m.accepted);
    w.string_omitempty("reason", m.reason);
    return {};
}

result<void> write_payload(object_writer& w, const task_question& m) {
    w.string("question_id", m.question_id);
    w.string("kind", m.kind);
    w.string("question", m.question);
    w.strings_omitempty("options", m.options);
    w.string_omitempty("default", m.default_value);
    w.string_omitempty("call_id", m.call_id);
    w.string_omitempty("tool", m.tool);
    w.string_omitempty("command", m.command);
    w.string_omitempty("tag", m.tag);
    w.string("window", m.window);
    return {};
}

result<void> write_payload(object_writer& w, const task_answer& m) {
    w.string("question_id", m.question_id);
    if (m.confirmed) w.boolean("confirmed", *m.confirmed);
    if (m.selected) w.integer("selected", *m.selected);
    if (m.value) w.string("value", *m.value);
    if (m.decision) w.string("decision", *m.decision);
    w.boolean_omitempty("declined", m.declined);
    w.string_omitempty("reason", m.reason);
    return {};
}

result<void> write_payload(object_writer& w, const task_keepalive& m) {
    w.string_omitempty("question_id", m.question_id);
    return {};
}

}  // namespace

result<std::string> encode(const message& m) {
    std::string out;
    result<void> r = std::visit(
        [&out](const auto& v) -> result<void> {
            object_writer w(out);
            write_header(w, std::decay_t<decltype(v)>::protocol, v);
            return write_payload(w, v);
        },
        m);
    if (!r) return r.error();
    return out;
}

result<std::string> encode(const block& b) {
    std::string out;
    if (auto r = write_block(out, b); !r) return r.error();
    return out;
}

// ============================================================================================
// Decoding: Go's typed decode of a tree. A missing or null field keeps its zero value;
// unknown members are ignored; a wrong JSON type is an error.
// ============================================================================================

namespace detail {

namespace {

namespace json = boost::json;

std::string_view kind_name(json::kind k) noexcept {
    switch (k) {
        case json::kind::null: return "null";
        case json::kind::bool_: return "a boolean";
        case json::kind::int64:
        case json::kind::uint64:
        case json::kind::double_: return "a number";
        case json::kind::string: return "a string";
        case json::kind::array: return "an array";
        case json::kind::object: return "an object";
    }
    return "a value";
}

// Reads typed fields out of a tree and keeps the first failure. After a failure every read
// is a no-op, so a decoder reads straight through and checks once at the end.
class reader {
public:
    [[nodiscard]] bool failed() const noexcept { return failure_.has_value(); }
    [[nodiscard]] error take_error() { return std::move(*failure_); }

    void fail(error e) {
        if (!failure_) failure_ = std::move(e);
    }

    void enter(std::string_view key) { path_.push_back(key); }
    void leave() { path_.pop_back(); }

    void fail(errc code, std::string_view key, std::string_view what) {
        if (failure_) return;
        std::string path;
        for (auto p : path_) {
            path.append(p);
            path.push_back('.');
        }
        path.append(key);
        failure_ = make_error(code, gocompat::quote(path) + ": " + std::string(what));
    }

    // The member `key`, or nullptr when absent or null (both mean "zero value").
    const json::value* get(const json::object& o, std::string_view key) const {
        if (failure_) return nullptr;
        const auto* v = o.if_contains(key);
        return (v == nullptr || v->is_null()) ? nullptr : v;
    }

    void read(const json::object& o, std::string_view key, std::string& out) {
        if (const auto* v = get(o, key)) {
            if (!v->is_string()) return wrong(key, "a string", *v);
            const auto& s = v->get_string();
            out = gocompat::to_valid_utf8(std::string_view(s.data(), s.size()));
        }
    }

    void read(const json::object& o, std::string_view key, bool& out) {
        if (const auto* v = get(o, key)) {
            if (!v->is_bool()) return wrong(key, "a boolean", *v);
            out = v->get_bool();
        }
    }

    void read(const json::object& o, std::string_view key, std::optional<bool>& out) {
        if (const auto* v = get(o, key)) {
            if (!v->is_bool()) return wrong(key, "a boolean", *v);
            out = v->get_bool();
        }
    }

    // Go's int and int64: an integer literal within int64.
    void read(const json::object& o, std::string_view key, std::int64_t& out) {
        if (const auto* v = get(o, key)) {
            if (v->is_int64()) {
                out = v->get_int64();
            } else if (v->is_uint64()) {
                fail(errc::invalid_field, key, "number out of range for a 64-bit signed integer");
            } else if (v->is_double()) {
                fail(errc::invalid_field, key, "want an integer literal");
            } else {
                wrong(key, "a number", *v);
            }
        }
    }

    // Go's uint64: a non-negative integer literal.
    void read(const json::object& o, std::string_view key, std::uint64_t& out) {
        if (const auto* v = get(o, key)) {
            if (v->is_uint64()) {
                out = v->get_uint64();
            } else if (v->is_int64() && v->get_int64() >= 0) {
                out = static_cast<std::uint64_t>(v->get_int64());
            } else if (v->is_int64()) {
                fail(errc::invalid_field, key, "number out of range for a 64-bit unsigned integer");
            } else if (v->is_double()) {
                fail(errc::invalid_field, key, "want an integer literal");
            } else {
                wrong(key, "a number", *v);
            }
        }
    }

    void read(const json::object& o, std::string_view key, std::vector<std::string>& out) {
        if (const auto* v = get(o, key)) {
            if (!v->is_array()) return wrong(key, "an array of strings", *v);
            out.clear();
            for (const auto& e : v->get_array()) {
                if (e.is_null()) {
                    out.emplace_back();
                } else if (!e.is_string()) {
                    return wrong(key, "an array of strings", e);
                } else {
                    out.push_back(
                        gocompat::to_valid_utf8(std::string_view(e.get_string().data(), e.get_string().size())));
                }
            }
        }
    }

    void read(const json::object& o, std::string_view key, timestamp& out) {
        if (const auto* v = get(o, key)) {
            if (!v->is_string()) return wrong(key, "a string", *v);
            const std::string_view s(v->get_string().data(), v->get_string().size());
            if (auto t = timestamp::parse(s)) {
                out = *t;
            } else {
                fail(errc::invalid_field, key, "parsing time " + gocompat::quote_bounded(s, 64) + " as RFC 3339");
            }
        }
    }

    // A nested record: `fill(reader&, const object&)` reads its members.
    template <class T, class Fill>
    void read_object(const json::object& o, std::string_view key, T& out, Fill fill) {
        if (const auto* v = get(o, key)) {
            if (!v->is_object()) return wrong(key, "an object", *v);
            path_.push_back(key);
            fill(*this, v->get_object(), out);
            path_.pop_back();
        }
    }
    template <class T, class Fill>
    void read_object(const json::object& o, std::string_view key, std::optional<T>& out, Fill fill) {
        if (const auto* v = get(o, key)) {
            if (!v->is_object()) return wrong(key, "an object", *v);
            path_.push_back(key);
            fill(*this, v->get_object(), out.emplace());
            path_.pop_back();
        }
    }

    // A raw member: its text cut from `text` (the object's own JSON text), compacted.
    void read_raw(const json::object& o, std::string_view text, std::string_view key, std::optional<raw_json>& out) {
        if (failure_ || !o.contains(key)) return;
        if (const auto span = find_member(text, key)) out = raw_json_access::make(compact(*span));
    }

private:
    void wrong(std::string_view key, std::string_view want, const json::value& got) {
        fail(errc::invalid_field, key, "want " + std::string(want) + ", got " + std::string(kind_name(got.kind())));
    }

    std::optional<error> failure_;
    std::vector<std::string_view> path_;
};

void fill_identity(reader& r, const json::object& o, identity& out) {
    r.read(o, "name", out.name);
    r.read(o, "instance", out.instance);
}

void fill_exec(reader& r, const json::object& o, exec_result& out) {
    r.read(o, "command", out.command);
    r.read(o, "exit_code", out.exit_code);
    r.read(o, "truncated", out.truncated);
}

void fill_usage(reader& r, const json::object& o, usage& out) {
    r.read(o, "input_tokens", out.input_tokens);
    r.read(o, "output_tokens", out.output_tokens);
}

void fill_budget(reader& r, const json::object& o, budget& out) {
    r.read(o, "max_tokens", out.max_tokens);
    r.read(o, "max_iterations", out.max_iterations);
    r.read(o, "call_timeout", out.call_timeout);
}

void read_header(reader& r, const json::object& o, header& h) {
    r.read(o, "id", h.id);
    r.read(o, "request", h.request);
    r.read(o, "conversation", h.conversation);
    r.read(o, "parent", h.parent);
    r.read(o, "sequence", h.sequence);
    r.read(o, "time", h.time);
    r.read_object(o, "sender", h.sender, fill_identity);
    r.read_object(o, "recipient", h.recipient, fill_identity);
    r.read(o, "must_understand", h.must_understand);
}

void read_payload(reader&, const json::object&, std::string_view, discovery_request&) {}

void read_payload(reader& r, const json::object& o, std::string_view text, discovery_reply& m) {
    r.read(o, "name", m.name);
    r.read(o, "version", m.version);
    r.read(o, "description", m.description);
    r.read(o, "protocols", m.protocols);
    const auto* tools = r.get(o, "tools");
    if (tools == nullptr) return;
    if (!tools->is_array()) return r.fail(errc::invalid_field, "tools", "want an array of tool descriptors");
    // Each descriptor's input_schema is raw: cut it from the descriptor's own text.
    std::vector<std::string_view> texts;
    texts.reserve(tools->get_array().size());
    if (const auto span = find_member(text, "tools")) {
        for_each_element(*span, [&](std::string_view e) { texts.push_back(e); });
    }
    const auto& items = tools->get_array();
    for (std::size_t i = 0; i < items.size() && !r.failed(); ++i) {
        auto& d = m.tools.emplace_back();
        if (items[i].is_null()) continue;
        if (!items[i].is_object()) return r.fail(errc::invalid_field, "tools", "want an array of tool descriptors");
        const auto& td = items[i].get_object();
        r.read(td, "name", d.name);
        r.read(td, "description", d.description);
        if (i < texts.size()) r.read_raw(td, texts[i], "input_schema", d.input_schema);
    }
}

void read_payload(reader& r, const json::object& o, std::string_view text, tool_request& m) {
    r.read(o, "name", m.name);
    r.read_raw(o, text, "input", m.input);
}

void read_payload(reader& r, const json::object& o, std::string_view, tool_reply& m) {
    r.read(o, "is_error", m.is_error);
    r.read(o, "output", m.output);
    r.read_object(o, "exec", m.exec, fill_exec);
}

void read_payload(reader& r, const json::object& o, std::string_view, task_request& m) {
    r.read(o, "prompt", m.prompt);
    r.read(o, "context", m.context);
    r.read(o, "tool_hints", m.tool_hints);
    r.read_object(o, "budget", m.budget, fill_budget);
    r.read(o, "stream", m.stream);
}

result<block> decode_block_in(reader& r, const json::object& o, std::string_view text);

void read_payload(reader& r, const json::object& o, std::string_view text, task_event& m) {
    const auto* b = r.get(o, "block");
    if (b == nullptr) return;
    if (!b->is_object()) return r.fail(errc::invalid_field, "block", "want an object");
    const auto span = find_member(text, "block");
    r.enter("block");
    auto decoded = decode_block_in(r, b->get_object(), span.value_or(std::string_view{}));
    r.leave();
    if (decoded) {
        m.block = std::move(*decoded);
    } else {
        r.fail(decoded.error());
    }
}

void read_payload(reader& r, const json::object& o, std::string_view, task_result& m) {
    r.read(o, "stop_reason", m.stop_reason);
    r.read(o, "text", m.text);
    r.read_object(o, "usage", m.usage, fill_usage);
}

void read_payload(reader& r, const json::object& o, std::string_view, task_error& m) {
    r.read(o, "stop_reason", m.stop_reason);
    r.read(o, "error", m.error);
    r.read(o, "code", m.code);
}

void read_payload(reader& r, const json::object& o, std::string_view, task_cancel& m) { r.read(o, "reason", m.reason); }

void read_payload(reader& r, const json::object& o, std::string_view, task_ack& m) {
    r.read(o, "accepted", m.accepted);
    r.read(o, "reason", m.reason);
}

void read_payload(reader& r, const json::object& o, std::string_view, task_question& m) {
    r.read(o, "question_id", m.question_id);
    r.read(o, "kind", m.kind);
    r.read(o, "question", m.question);
    r.read(o, "options", m.options);
    r.read(o, "default", m.default_value);
    r.read(o, "call_id", m.call_id);
    r.read(o, "tool", m.tool);
    r.read(o, "command", m.command);
    r.read(o, "tag", m.tag);
    r.read(o, "window", m.window);
}

// A field that may be absent: read only when present, so "unset" and a zero value stay apart.
template <class T>
void read_present(reader& r, const json::object& o, std::string_view key, std::optional<T>& out) {
    if (!o.contains(key)) return;
    T v{};
    r.read(o, key, v);
    out = std::move(v);
}

void read_payload(reader& r, const json::object& o, std::string_view, task_answer& m) {
    r.read(o, "question_id", m.question_id);
    r.read(o, "confirmed", m.confirmed);
    read_present(r, o, "selected", m.selected);
    read_present(r, o, "value", m.value);
    read_present(r, o, "decision", m.decision);
    r.read(o, "declined", m.declined);
    r.read(o, "reason", m.reason);
}

void read_payload(reader& r, const json::object& o, std::string_view, task_keepalive& m) {
    r.read(o, "question_id", m.question_id);
}

result<block> decode_block_in(reader& r, const json::object& o, std::string_view text) {
    const auto* t = o.if_contains("type");
    if (t == nullptr || !t->is_string()) return make_error(errc::unknown_block_type, "\"\"");
    const std::string_view type(t->get_string().data(), t->get_string().size());
    block out;
    if (type == thinking_block::type) {
        auto& b = out.emplace<thinking_block>();
        r.read(o, "text", b.text);
        r.read(o, "signature", b.signature);
        r.read(o, "provider", b.provider);
    } else if (type == text_block::type) {
        r.read(o, "text", out.emplace<text_block>().text);
    } else if (type == tool_call_block::type) {
        auto& b = out.emplace<tool_call_block>();
        r.read(o, "id", b.id);
        r.read(o, "name", b.name);
        r.read_raw(o, text, "input", b.input);
    } else if (type == tool_result_block::type) {
        auto& b = out.emplace<tool_result_block>();
        r.read(o, "call_id", b.call_id);
        r.read(o, "is_error", b.is_error);
        r.read(o, "output", b.output);
        r.read_object(o, "exec", b.exec, fill_exec);
    } else if (type == agent_call_block::type) {
        auto& b = out.emplace<agent_call_block>();
        r.read(o, "id", b.id);
        r.read(o, "name", b.name);
        r.read(o, "task", b.task);
    } else if (type == status_block::type) {
        auto& b = out.emplace<status_block>();
        r.read(o, "iteration", b.iteration);
        r.read(o, "phase", b.phase);
        r.read_object(o, "usage", b.usage, fill_usage);
    } else {
        // A kind this version does not know: keep the peer's bytes.
        auto u = unknown_block::from_raw(raw_json_access::make(compact(text)));
        if (!u) return u.error();
        out = std::move(*u);
    }
    if (r.failed()) return make_error(errc::invalid_field, "block");
    return out;
}

template <class M>
result<message> decode_as(const json::object& o, std::string_view text) {
    reader r;
    M m;
    read_header(r, o, m);
    read_payload(r, o, text, m);
    if (r.failed()) return r.take_error();
    return message(std::move(m));
}

using decode_fn = result<message> (*)(const json::object&, std::string_view);

template <std::size_t... I>
constexpr auto make_decoders(std::index_sequence<I...>) {
    return std::array<decode_fn, sizeof...(I)>{&decode_as<std::variant_alternative_t<I, message>>...};
}
constexpr auto decoders = make_decoders(std::make_index_sequence<std::variant_size_v<message>>{});

}  // namespace

result<void> parse_body(std::string_view body, parsed_body& out) {
    if (body.size() > max_message_size) return make_error(errc::too_large);
    out.text = body;
    out.repaired = replace_unpaired_surrogates(body);
    boost::system::error_code ec;
    out.doc = json::parse(out.repaired ? std::string_view(*out.repaired) : body, ec, &out.storage, parse_options());
    if (ec) return make_error(errc::invalid_json, ec.message());
    return {};
}

result<std::size_t> protocol_index(const json::value& doc) {
    if (!doc.is_object())
        return make_error(errc::invalid_json, "a message is a JSON object, not " + std::string(kind_name(doc.kind())));
    const auto* p = doc.get_object().if_contains("protocol");
    if (p == nullptr || p->is_null()) return make_error(errc::unknown_protocol, "\"\"");
    if (!p->is_string())
        return make_error(errc::unknown_protocol,
                          "protocol is " + std::string(kind_name(p->kind())) + ", not a string");
    const std::string_view id(p->get_string().data(), p->get_string().size());
    for (std::size_t i = 0; i < protocols::all.size(); ++i) {
        if (protocols::all[i] == id) return i;
    }
    return make_error(errc::unknown_protocol, gocompat::quote_bounded(id));
}

result<message> decode_document(const json::object& doc, std::string_view text, std::size_t index) {
    return decoders.at(index)(doc, text);
}

result<block> decode_block_document(const json::object& doc, std::string_view text) {
    reader r;
    auto b = decode_block_in(r, doc, text);
    if (r.failed()) return r.take_error();  // the field that failed, rather than the summary
    return b;
}

}  // namespace detail

result<message> decode(std::string_view body) {
    detail::parsed_body parsed;
    if (auto r = detail::parse_body(body, parsed); !r) return r.error();
    auto index = detail::protocol_index(parsed.doc);
    if (!index) return index.error();
    return detail::decode_document(parsed.doc.get_object(), body, *index);
}

std::string request_named_by(std::string_view body) {
    detail::parsed_body parsed;
    if (!detail::parse_body(body, parsed) || !parsed.doc.is_object()) return {};
    const auto* request = parsed.doc.get_object().if_contains("request");
    if (request == nullptr || !request->is_string()) return {};
    return std::string(request->get_string());
}

result<block> decode_block(std::string_view json) {
    detail::parsed_body parsed;
    if (auto r = detail::parse_body(json, parsed); !r) return r.error();
    if (!parsed.doc.is_object()) return make_error(errc::unknown_block_type, "a block is a JSON object");
    return detail::decode_block_document(parsed.doc.get_object(), json);
}

}  // namespace fiskai::a2a
