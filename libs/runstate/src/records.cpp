#include <fiskai/runstate/records.hpp>

#include "internal.hpp"

#include <fiskai/runstate/message_json.hpp>
#include <fiskai/gocompat/json.hpp>
#include <fiskai/gocompat/quote.hpp>

#include <boost/json.hpp>

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <limits>

namespace fiskai::runstate {

namespace json = boost::json;

namespace detail {

error storage_error(std::string message) { return error{make_error_code(errc::storage), std::move(message)}; }

error system_error(std::string_view what, int err) {
    return storage_error(fmt::format("{}: {}", what, std::strerror(err)));
}

}  // namespace detail

std::string_view to_string(terminal_reason r) noexcept {
    switch (r) {
        case terminal_reason::completed: return "completed";
        case terminal_reason::suspended: return "suspended";
        case terminal_reason::error: return "error";
        case terminal_reason::budget: return "budget";
        case terminal_reason::max_iterations: return "max_iterations";
    }
    return "error";
}

std::optional<terminal_reason> parse_terminal_reason(std::string_view s) noexcept {
    for (auto r : {terminal_reason::completed, terminal_reason::suspended, terminal_reason::error,
                   terminal_reason::budget, terminal_reason::max_iterations}) {
        if (to_string(r) == s) return r;
    }
    return std::nullopt;
}

std::string_view record::protocol() const noexcept {
    switch (payload.index()) {
        case 0: return protocol::meta;
        case 1: return protocol::assistant;
        case 2: return protocol::user;
        case 3: return protocol::tool_result;
        default: return protocol::terminal;
    }
}

namespace {

void append_int(std::string& out, std::int64_t v) { fmt::format_to(std::back_inserter(out), "{}", v); }

void append_field(std::string& out, std::string_view key, std::string_view value) {
    out.push_back('"');
    out.append(key);
    out.append("\":");
    gocompat::append_json_string(out, value);
}

void append_int_field(std::string& out, std::string_view key, std::int64_t value) {
    out.push_back('"');
    out.append(key);
    out.append("\":");
    append_int(out, value);
}

void append_payload(std::string& out, const meta_record& m) {
    out.append("{\"version\":");
    append_int(out, m.version);
    out.push_back(',');
    append_field(out, "run_id", m.run_id);
    out.push_back(',');
    append_field(out, "created", gocompat::format_rfc3339_nano(m.created));
    out.append(",\"fingerprint\":{");
    const auto& f = m.fingerprint;
    append_field(out, "provider", f.provider);
    out.push_back(',');
    append_field(out, "model", f.model);
    out.push_back(',');
    append_field(out, "system_hash", f.system_hash);
    out.push_back(',');
    append_field(out, "tools_hash", f.tools_hash);
    out.push_back(',');
    append_field(out, "thinking_mode", f.thinking_mode);
    out.push_back(',');
    append_int_field(out, "max_tokens", f.max_tokens);
    out.push_back(',');
    append_int_field(out, "max_iterations", f.max_iterations);
    out.append("},");
    append_field(out, "prompt", m.prompt);
    if (m.interactive) out.append(",\"interactive\":true");
    out.push_back('}');
}

void append_payload(std::string& out, const assistant_record& a) {
    out.append("{\"iteration\":");
    append_int(out, a.iteration);
    out.append(",\"message\":");
    append_message_json(out, a.message);
    if (!a.stop_reason.empty()) {
        out.push_back(',');
        append_field(out, "stop_reason", a.stop_reason);
    }
    out.push_back(',');
    append_int_field(out, "in_tokens", a.in_tokens);
    out.push_back(',');
    append_int_field(out, "out_tokens", a.out_tokens);
    if (a.cache_read_tokens != 0) {
        out.push_back(',');
        append_int_field(out, "cache_read_tokens", a.cache_read_tokens);
    }
    if (a.cache_create_tokens != 0) {
        out.push_back(',');
        append_int_field(out, "cache_create_tokens", a.cache_create_tokens);
    }
    out.push_back('}');
}

void append_payload(std::string& out, const user_record& u) {
    out.append("{\"message\":");
    append_message_json(out, u.message);
    out.push_back('}');
}

void append_payload(std::string& out, const tool_result_record& t) {
    out.push_back('{');
    append_field(out, "tool_use_id", t.tool_use_id);
    out.append(",\"result\":");
    append_tool_result_json(out, t.result);
    if (t.remote) out.append(",\"remote\":true");
    out.push_back('}');
}

void append_payload(std::string& out, const terminal_record& t) {
    out.push_back('{');
    append_field(out, "reason", to_string(t.reason));
    if (!t.message.empty()) {
        out.push_back(',');
        append_field(out, "message", t.message);
    }
    out.push_back('}');
}

constexpr std::array<std::string_view, 5> payload_keys{"meta", "assistant", "user", "tool_result", "terminal"};

// ---- decoding (the document has passed its schema: types and required keys hold) ----

std::int64_t int_of(const json::value& v) {
    return v.is_int64() ? v.get_int64() : static_cast<std::int64_t>(v.get_uint64());
}

result<std::int64_t> get_int(const json::object& o, std::string_view key, std::string_view where) {
    const auto* v = o.if_contains(key);
    if (v == nullptr) return std::int64_t{0};
    if (v->is_uint64() && v->get_uint64() > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
        return make_error(errc::corrupt, fmt::format("{}/{}: {} does not fit an int64", where, key, v->get_uint64()));
    }
    if (!v->is_int64() && !v->is_uint64()) {
        return make_error(errc::corrupt, fmt::format("{}/{}: not an integer", where, key));
    }
    return int_of(*v);
}

std::string str_of(const json::object& o, std::string_view key) {
    const auto* v = o.if_contains(key);
    return v == nullptr ? std::string{} : std::string(v->get_string());
}

bool bool_of(const json::object& o, std::string_view key) {
    const auto* v = o.if_contains(key);
    return v != nullptr && v->get_bool();
}

result<payload> decode_meta(const json::object& m) {
    meta_record out;
    auto version = get_int(m, "version", "meta");
    if (!version) return version.error();
    if (*version < std::numeric_limits<int>::min() || *version > std::numeric_limits<int>::max()) {
        return make_error(errc::corrupt, fmt::format("meta/version: {} is out of range", *version));
    }
    out.version = static_cast<int>(*version);
    out.run_id = str_of(m, "run_id");
    const auto created = str_of(m, "created");
    const auto t = gocompat::parse_rfc3339(created);
    if (!t) {
        return make_error(errc::corrupt,
                          fmt::format("meta/created: {} is not an RFC 3339 time", gocompat::quote_bounded(created)));
    }
    out.created = *t;
    const auto& f = m.at("fingerprint").get_object();
    out.fingerprint.provider = str_of(f, "provider");
    out.fingerprint.model = str_of(f, "model");
    out.fingerprint.system_hash = str_of(f, "system_hash");
    out.fingerprint.tools_hash = str_of(f, "tools_hash");
    out.fingerprint.thinking_mode = str_of(f, "thinking_mode");
    auto max_tokens = get_int(f, "max_tokens", "meta/fingerprint");
    if (!max_tokens) return max_tokens.error();
    out.fingerprint.max_tokens = *max_tokens;
    auto max_iterations = get_int(f, "max_iterations", "meta/fingerprint");
    if (!max_iterations) return max_iterations.error();
    out.fingerprint.max_iterations = *max_iterations;
    out.prompt = str_of(m, "prompt");
    out.interactive = bool_of(m, "interactive");
    return payload{std::move(out)};
}

result<payload> decode_assistant(const json::object& a) {
    assistant_record out;
    for (auto [key, field] :
         {std::pair{"iteration", &assistant_record::iteration}, std::pair{"in_tokens", &assistant_record::in_tokens},
          std::pair{"out_tokens", &assistant_record::out_tokens},
          std::pair{"cache_read_tokens", &assistant_record::cache_read_tokens},
          std::pair{"cache_create_tokens", &assistant_record::cache_create_tokens}}) {
        auto v = get_int(a, key, "assistant");
        if (!v) return v.error();
        out.*field = *v;
    }
    auto message = message_from_json(a.at("message"));
    if (!message) return wrap(message.error(), "assistant");
    out.message = std::move(*message);
    out.stop_reason = str_of(a, "stop_reason");
    return payload{std::move(out)};
}

result<payload> decode_user(const json::object& u) {
    auto message = message_from_json(u.at("message"));
    if (!message) return wrap(message.error(), "user");
    return payload{user_record{std::move(*message)}};
}

result<payload> decode_tool_result(const json::object& t) {
    tool_result_record out;
    out.tool_use_id = str_of(t, "tool_use_id");
    auto r = tool_result_from_json(t.at("result"));
    if (!r) return wrap(r.error(), "tool_result");
    out.result = std::move(*r);
    out.remote = bool_of(t, "remote");
    return payload{std::move(out)};
}

result<payload> decode_terminal(const json::object& t) {
    terminal_record out;
    const auto reason = str_of(t, "reason");
    const auto r = parse_terminal_reason(reason);
    if (!r)
        return make_error(errc::corrupt, fmt::format("terminal/reason: unknown reason {}", gocompat::quote(reason)));
    out.reason = *r;
    out.message = str_of(t, "message");
    return payload{std::move(out)};
}

}  // namespace

std::string encode_record(const record& r) {
    std::string out;
    out.reserve(256);
    out.append("{\"seq\":");
    fmt::format_to(std::back_inserter(out), "{}", r.seq);
    out.append(",\"protocol\":\"");
    out.append(r.protocol());
    out.append("\",\"");
    out.append(payload_keys[r.payload.index()]);
    out.append("\":");
    std::visit([&](const auto& p) { append_payload(out, p); }, r.payload);
    out.push_back('}');
    return out;
}

result<record> decode_record(std::string_view text) {
    boost::system::error_code ec;
    json::monotonic_resource resource;
    const json::value doc = json::parse(text, ec, &resource, gocompat::go_parse_options());
    if (ec) return make_error(errc::corrupt, fmt::format("not JSON: {}", ec.message()));
    auto index = detail::validate_record(doc);
    if (!index) return index.error();
    const auto& o = doc.get_object();
    record out;
    const auto& seq = o.at("seq");
    out.seq = seq.is_uint64() ? seq.get_uint64() : static_cast<std::uint64_t>(seq.get_int64());
    const auto& body = o.at(payload_keys[*index]).get_object();
    result<payload> p = [&]() -> result<payload> {
        switch (*index) {
            case 0: return decode_meta(body);
            case 1: return decode_assistant(body);
            case 2: return decode_user(body);
            case 3: return decode_tool_result(body);
            default: return decode_terminal(body);
        }
    }();
    if (!p) return p.error();
    out.payload = std::move(*p);
    return out;
}

result<void> validate_id(std::string_view id) {
    bool ok = !id.empty() && id.size() <= 128;
    for (std::size_t i = 0; ok && i < id.size(); ++i) {
        const char c = id[i];
        const bool alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
        ok = alnum || (i > 0 && (c == '_' || c == '-'));
    }
    if (!ok) {
        return make_error(errc::invalid_id, fmt::format("{} (use letters, digits, '-' or '_')", gocompat::quote(id)));
    }
    return {};
}

result<append_action> check_append(std::uint64_t last_seq, std::uint64_t seq) {
    // A stored seq at the top of the range (a foreign or damaged journal) has no successor:
    // the next seq would wrap to 0 and be skipped as a duplicate, every later record
    // "written" without a write.
    if (last_seq == std::numeric_limits<std::uint64_t>::max()) {
        return make_error(errc::corrupt,
                          fmt::format("seq {} is the last a journal can hold; no record can follow it", last_seq));
    }
    if (seq <= last_seq) return append_action::skip;
    if (seq > last_seq + 1) return make_error(errc::seq_gap, fmt::format("seq {} skips ahead of {}", seq, last_seq));
    return append_action::write;
}

}  // namespace fiskai::runstate
