#include <fiskai/runstate/message_json.hpp>

#include "internal.hpp"

#include <fiskai/gocompat/json.hpp>
#include <fiskai/gocompat/quote.hpp>

#include <boost/json.hpp>
#include <openssl/evp.h>

#include <fmt/format.h>

#include <string>
#include <string_view>

namespace fiskai::runstate {

namespace json = boost::json;

namespace detail {

bool append_compact_raw(std::string& out, std::string_view raw) {
    boost::system::error_code ec;
    json::parse(raw, ec, {}, gocompat::go_parse_options());
    if (ec) return false;
    out.reserve(out.size() + raw.size());
    bool in_string = false;
    for (std::size_t i = 0; i < raw.size(); ++i) {
        const char c = raw[i];
        if (!in_string) {
            if (c == ' ' || c == '\t' || c == '\n' || c == '\r') continue;
            if (c == '"') in_string = true;
            out.push_back(c);
            continue;
        }
        switch (c) {
            case '\\':
                // An escape is copied as written (Go's compact keeps `\u00e9` as is).
                out.push_back(c);
                if (i + 1 < raw.size()) out.push_back(raw[++i]);
                break;
            case '"':
                in_string = false;
                out.push_back(c);
                break;
            case '<': out.append("\\u003c"); break;
            case '>': out.append("\\u003e"); break;
            case '&': out.append("\\u0026"); break;
            case '\xE2':
                if (i + 2 < raw.size() && raw[i + 1] == '\x80' && (raw[i + 2] == '\xA8' || raw[i + 2] == '\xA9')) {
                    out.append(raw[i + 2] == '\xA8' ? "\\u2028" : "\\u2029");
                    i += 2;
                    break;
                }
                out.push_back(c);
                break;
            default: out.push_back(c);
        }
    }
    return true;
}

std::string base64_encode(std::string_view bytes) {
    std::string out(4 * ((bytes.size() + 2) / 3), '\0');
    const int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                  reinterpret_cast<const unsigned char*>(bytes.data()), static_cast<int>(bytes.size()));
    out.resize(static_cast<std::size_t>(n));
    return out;
}

bool base64_decode(std::string_view text, std::string& out) {
    // Go's StdEncoding: padded, alphabet A-Z a-z 0-9 + /. (Go also skips \r and \n, which
    // json never carries in a signature it wrote.)
    if (text.size() % 4 != 0) return false;
    std::size_t pad = 0;
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        const bool alpha =
            (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '+' || c == '/';
        if (c == '=') {
            if (i + 2 < text.size()) return false;
            ++pad;
        } else if (!alpha || pad > 0) {
            return false;
        }
    }
    std::string decoded(3 * (text.size() / 4), '\0');
    const int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(decoded.data()),
                                  reinterpret_cast<const unsigned char*>(text.data()), static_cast<int>(text.size()));
    if (n < 0) return false;
    decoded.resize(static_cast<std::size_t>(n) - pad);
    out = std::move(decoded);
    return true;
}

}  // namespace detail

namespace {

void append_key(std::string& out, std::string_view key) {
    out.push_back('"');
    out.append(key);
    out.append("\":");
}

// A raw JSON value as Go marshals a json.RawMessage: empty (nil) is `null`. Raw text that
// is not JSON cannot be journaled faithfully; it is written as a JSON string of itself so
// the record stays parseable, and decoding gives that string back as the raw value.
void append_raw(std::string& out, std::string_view raw) {
    if (raw.empty()) {
        out.append("null");
        return;
    }
    if (!detail::append_compact_raw(out, raw)) gocompat::append_json_string(out, raw);
}

void append_block(std::string& out, const llm::content_block& block) {
    out.push_back('{');
    std::visit(
        [&](const auto& b) {
            using T = std::decay_t<decltype(b)>;
            if constexpr (std::is_same_v<T, llm::text_block>) {
                append_key(out, "text");
                out.append("{\"text\":");
                gocompat::append_json_string(out, b.text);
                out.push_back('}');
            } else if constexpr (std::is_same_v<T, llm::thinking_block>) {
                append_key(out, "thinking");
                out.push_back('{');
                bool first = true;
                if (!b.text.empty()) {
                    out.append("\"text\":");
                    gocompat::append_json_string(out, b.text);
                    first = false;
                }
                if (!b.signature.empty()) {
                    if (!first) out.push_back(',');
                    out.append("\"signature\":\"");
                    out.append(detail::base64_encode(b.signature));
                    out.push_back('"');
                }
                out.push_back('}');
            } else if constexpr (std::is_same_v<T, llm::tool_use_block>) {
                append_key(out, "tool_use");
                out.append("{\"id\":");
                gocompat::append_json_string(out, b.id);
                out.append(",\"name\":");
                gocompat::append_json_string(out, b.name);
                out.append(",\"input\":");
                append_raw(out, b.input);
                out.push_back('}');
            } else if constexpr (std::is_same_v<T, llm::tool_result_block>) {
                append_key(out, "tool_result");
                append_tool_result_json(out, b);
            } else {
                append_key(out, "provider");
                out.append("{\"kind\":");
                gocompat::append_json_string(out, b.kind);
                out.append(",\"raw\":");
                append_raw(out, b.raw);
                out.push_back('}');
            }
        },
        block);
    out.push_back('}');
}

std::string bad(std::string_view where, std::string_view what) { return fmt::format("{}: {}", where, what); }

error corrupt(std::string_view where, std::string_view what) { return make_error(errc::corrupt, bad(where, what)); }

result<std::string> get_string(const json::object& o, std::string_view key, std::string_view where, bool required) {
    const auto* v = o.if_contains(key);
    if (v == nullptr) {
        if (required) return corrupt(where, fmt::format("missing {}", gocompat::quote(key)));
        return std::string{};
    }
    if (!v->is_string()) {
        return corrupt(where,
                       fmt::format("{} is a {}, want a string", gocompat::quote(key), gocompat::json_kind_name(*v)));
    }
    return std::string(v->get_string());
}

result<void> only_keys(const json::object& o, std::initializer_list<std::string_view> allowed, std::string_view where) {
    for (const auto& kv : o) {
        bool ok = false;
        for (auto a : allowed) ok = ok || kv.key() == a;
        if (!ok) return corrupt(where, fmt::format("unknown field {}", gocompat::quote(kv.key())));
    }
    return {};
}

// A raw JSON field kept as Go's compacted text; null and absent are empty.
result<std::string> get_raw(const json::object& o, std::string_view key) {
    const auto* v = o.if_contains(key);
    if (v == nullptr || v->is_null()) return std::string{};
    return gocompat::to_json(*v, gocompat::key_order::stored);
}

result<llm::content_block> block_from_json(const json::value& v, std::string_view where) {
    if (!v.is_object())
        return corrupt(where, fmt::format("a content block is a {}, want an object", gocompat::json_kind_name(v)));
    const auto& o = v.get_object();
    if (o.size() != 1) return corrupt(where, fmt::format("a content block has {} keys, want exactly one", o.size()));
    const auto& kv = *o.begin();
    const std::string inner_where = fmt::format("{}/{}", where, std::string_view(kv.key()));
    if (!kv.value().is_object()) {
        return corrupt(inner_where, fmt::format("is a {}, want an object", gocompat::json_kind_name(kv.value())));
    }
    const auto& b = kv.value().get_object();
    const auto key = std::string_view(kv.key());
    if (key == "text") {
        if (auto r = only_keys(b, {"text"}, inner_where); !r) return r.error();
        auto text = get_string(b, "text", inner_where, false);
        if (!text) return text.error();
        return llm::content_block{llm::text_block{std::move(*text)}};
    }
    if (key == "thinking") {
        if (auto r = only_keys(b, {"text", "signature"}, inner_where); !r) return r.error();
        auto text = get_string(b, "text", inner_where, false);
        if (!text) return text.error();
        llm::thinking_block t{std::move(*text), {}};
        if (const auto* sig = b.if_contains("signature"); sig != nullptr && !sig->is_null()) {
            if (!sig->is_string() || !detail::base64_decode(std::string_view(sig->get_string()), t.signature)) {
                return corrupt(inner_where, "signature is not standard base64");
            }
        }
        return llm::content_block{std::move(t)};
    }
    if (key == "tool_use") {
        if (auto r = only_keys(b, {"id", "name", "input"}, inner_where); !r) return r.error();
        auto id = get_string(b, "id", inner_where, false);
        if (!id) return id.error();
        auto name = get_string(b, "name", inner_where, false);
        if (!name) return name.error();
        auto input = get_raw(b, "input");
        if (!input) return input.error();
        return llm::content_block{
            llm::tool_use_block{std::move(*id), std::move(*name), std::move(*input), std::nullopt}};
    }
    if (key == "tool_result") {
        auto r = tool_result_from_json(kv.value());
        if (!r) return wrap(r.error(), inner_where);
        return llm::content_block{std::move(*r)};
    }
    if (key == "provider") {
        if (auto r = only_keys(b, {"kind", "raw"}, inner_where); !r) return r.error();
        auto kind = get_string(b, "kind", inner_where, false);
        if (!kind) return kind.error();
        auto raw = get_raw(b, "raw");
        if (!raw) return raw.error();
        return llm::content_block{llm::provider_block{std::move(*kind), std::move(*raw)}};
    }
    return corrupt(where, fmt::format("unknown content block {}", gocompat::quote(key)));
}

}  // namespace

void append_tool_result_json(std::string& out, const llm::tool_result_block& r) {
    out.append("{\"tool_use_id\":");
    gocompat::append_json_string(out, r.tool_use_id);
    out.append(",\"content\":");
    gocompat::append_json_string(out, r.content);
    if (r.is_error) out.append(",\"is_error\":true");
    out.push_back('}');
}

void append_message_json(std::string& out, const llm::message& m) {
    out.append(m.who == llm::role::assistant ? "{\"role\":\"assistant\",\"content\":["
                                             : "{\"role\":\"user\",\"content\":[");
    bool first = true;
    for (const auto& block : m.content) {
        if (!first) out.push_back(',');
        first = false;
        append_block(out, block);
    }
    out.append("]}");
}

result<llm::tool_result_block> tool_result_from_json(const json::value& v) {
    constexpr std::string_view where = "tool result";
    if (!v.is_object()) return corrupt(where, fmt::format("is a {}, want an object", gocompat::json_kind_name(v)));
    const auto& o = v.get_object();
    if (auto r = only_keys(o, {"tool_use_id", "content", "is_error"}, where); !r) return r.error();
    auto id = get_string(o, "tool_use_id", where, false);
    if (!id) return id.error();
    auto content = get_string(o, "content", where, false);
    if (!content) return content.error();
    bool is_error = false;
    if (const auto* e = o.if_contains("is_error"); e != nullptr) {
        if (!e->is_bool()) return corrupt(where, "\"is_error\" is not a boolean");
        is_error = e->get_bool();
    }
    return llm::tool_result_block{std::move(*id), std::move(*content), is_error};
}

result<llm::message> message_from_json(const json::value& v) {
    constexpr std::string_view where = "message";
    if (!v.is_object()) return corrupt(where, fmt::format("is a {}, want an object", gocompat::json_kind_name(v)));
    const auto& o = v.get_object();
    if (auto r = only_keys(o, {"role", "content"}, where); !r) return r.error();
    auto role = get_string(o, "role", where, true);
    if (!role) return role.error();
    llm::message m;
    if (*role == "user") {
        m.who = llm::role::user;
    } else if (*role == "assistant") {
        m.who = llm::role::assistant;
    } else {
        return corrupt(where, fmt::format("role {} is neither \"user\" nor \"assistant\"", gocompat::quote(*role)));
    }
    const auto* content = o.if_contains("content");
    if (content == nullptr || content->is_null()) return m;
    if (!content->is_array()) {
        return corrupt(where, fmt::format("content is a {}, want an array", gocompat::json_kind_name(*content)));
    }
    m.content.reserve(content->get_array().size());
    std::size_t i = 0;
    for (const auto& b : content->get_array()) {
        auto block = block_from_json(b, fmt::format("message/content/{}", i++));
        if (!block) return block.error();
        m.content.push_back(std::move(*block));
    }
    return m;
}

}  // namespace fiskai::runstate
