#include <fiskai/runstate/fingerprint.hpp>

#include <fiskai/gocompat/json.hpp>
#include <fiskai/gocompat/quote.hpp>

#include <boost/json/value.hpp>
#include <openssl/evp.h>

#include <fmt/format.h>

#include <array>

namespace fiskai::runstate {

std::string hash_hex(std::string_view bytes) {
    // Fetched once: EVP_sha256() makes OpenSSL 3 look the algorithm up at every digest.
    static EVP_MD* const sha256 = EVP_MD_fetch(nullptr, "SHA256", nullptr);
    std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
    unsigned int length = 0;
    EVP_Digest(bytes.data(), bytes.size(), digest.data(), &length, sha256 != nullptr ? sha256 : EVP_sha256(), nullptr);
    static constexpr char hex[] = "0123456789abcdef";
    std::string out;
    out.reserve(2 * length);
    for (unsigned int i = 0; i < length; ++i) {
        out.push_back(hex[digest[i] >> 4]);
        out.push_back(hex[digest[i] & 0xF]);
    }
    return out;
}

// Go marshals a nil slice as `null`; the runner always has at least one system block and
// one tool, so an empty list only matters for agreeing on the bytes.
std::string system_blocks_json(const std::vector<std::string>& blocks) {
    if (blocks.empty()) return "null";
    std::string out = "[";
    for (std::size_t i = 0; i < blocks.size(); ++i) {
        if (i > 0) out.push_back(',');
        gocompat::append_json_string(out, blocks[i]);
    }
    out.push_back(']');
    return out;
}

std::string system_hash(const std::vector<std::string>& blocks) { return hash_hex(system_blocks_json(blocks)); }

std::string tools_json(const std::vector<llm::tool_def>& tools) {
    if (tools.empty()) return "null";
    std::string out = "[";
    for (std::size_t i = 0; i < tools.size(); ++i) {
        const auto& t = tools[i];
        if (i > 0) out.push_back(',');
        out.append("{\"Name\":");
        gocompat::append_json_string(out, t.name);
        out.append(",\"Description\":");
        gocompat::append_json_string(out, t.description);
        // A map[string]any: keys sorted at every level.
        out.append(",\"InputSchema\":");
        gocompat::append_json(out, boost::json::value(t.input_schema), gocompat::key_order::sorted);
        out.append(t.defer_loading ? ",\"DeferLoading\":true}" : ",\"DeferLoading\":false}");
    }
    out.push_back(']');
    return out;
}

std::string tools_hash(const std::vector<llm::tool_def>& tools) { return hash_hex(tools_json(tools)); }

std::vector<std::string> diff(const fingerprint& saved, const fingerprint& current) {
    std::vector<std::string> out;
    if (saved.model != current.model) out.push_back(fmt::format("model: {} -> {}", saved.model, current.model));
    if (saved.system_hash != current.system_hash) out.emplace_back("system prompt: changed");
    if (saved.tools_hash != current.tools_hash) out.emplace_back("tool set: changed");
    if (saved.thinking_mode != current.thinking_mode) {
        out.push_back(fmt::format("thinking: {} -> {}", saved.thinking_mode, current.thinking_mode));
    }
    if (saved.max_tokens != current.max_tokens) {
        out.push_back(fmt::format("max_tokens: {} -> {}", saved.max_tokens, current.max_tokens));
    }
    if (saved.max_iterations != current.max_iterations) {
        out.push_back(fmt::format("max_iterations: {} -> {}", saved.max_iterations, current.max_iterations));
    }
    return out;
}

bool equal_ignoring_provider(const fingerprint& saved, const fingerprint& current) {
    return diff(saved, current).empty();
}

std::string provider_mismatch_text(std::string_view id, std::string_view saved, std::string_view current) {
    return fmt::format(
        "cannot resume {}: it was started with provider {} but the current configuration uses {}; a run cannot "
        "change provider, and --force does not apply",
        gocompat::quote(id), gocompat::quote(saved), gocompat::quote(current));
}

std::string drift_text(std::string_view id, const std::vector<std::string>& differences) {
    std::string lines;
    for (std::size_t i = 0; i < differences.size(); ++i) {
        if (i > 0) lines.append("\n  ");
        lines.append(differences[i]);
    }
    return fmt::format(
        "cannot resume {}, the configuration changed since it was saved:\n  {}\nre-run against the original "
        "configuration, or pass --force to continue with the current one",
        gocompat::quote(id), lines);
}

std::optional<std::string> check_resume(std::string_view id, const fingerprint& saved, const fingerprint& current,
                                        bool force) {
    if (saved.provider != current.provider) return provider_mismatch_text(id, saved.provider, current.provider);
    if (force) return std::nullopt;
    const auto d = diff(saved, current);
    if (d.empty()) return std::nullopt;
    return drift_text(id, d);
}

}  // namespace fiskai::runstate
