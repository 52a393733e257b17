// Go's internal/rag/chunk.go and ftsQuery, ported: the same packing sizes, breadcrumbs
// and fence handling, so citations point at the same sections.
#include <fiskai/knowledge/chunk.hpp>

#include <fiskai/gocompat/utf8.hpp>

#include <yaml-cpp/yaml.h>

#include <clocale>
#include <cwctype>
#include <locale.h>

namespace fiskai::knowledge {

namespace {

constexpr std::size_t max_fts_terms = 40;
constexpr std::size_t min_fts_term_runes = 2;

std::string_view trim(std::string_view s) {
    const auto* ws = " \t\r\n\v\f";
    const auto b = s.find_first_not_of(ws);
    if (b == std::string_view::npos) return {};
    const auto e = s.find_last_not_of(ws);
    return s.substr(b, e - b + 1);
}

std::vector<std::string_view> split_lines(std::string_view s) {
    std::vector<std::string_view> out;
    std::size_t start = 0;
    for (;;) {
        const auto nl = s.find('\n', start);
        if (nl == std::string_view::npos) {
            out.push_back(s.substr(start));
            return out;
        }
        out.push_back(s.substr(start, nl - start));
        start = nl + 1;
    }
}

std::string normalise_newlines(std::string_view content) {
    std::string out;
    out.reserve(content.size());
    for (std::size_t i = 0; i < content.size(); ++i) {
        if (content[i] == '\r' && i + 1 < content.size() && content[i + 1] == '\n') continue;
        out.push_back(content[i]);
    }
    return out;
}

bool is_fence(std::string_view trimmed) { return trimmed.starts_with("```") || trimmed.starts_with("~~~"); }

struct heading {
    int level = 0;
    std::string text;
};

bool parse_heading(std::string_view trimmed, heading& out) {
    if (!trimmed.starts_with('#')) return false;
    std::size_t level = 0;
    while (level < trimmed.size() && trimmed[level] == '#') ++level;
    if (level > 6) return false;
    const auto text = trim(trimmed.substr(level));
    if (text.empty()) return false;
    out = heading{static_cast<int>(level), std::string(text)};
    return true;
}

// The whole fence from lines[i] through its closing marker (or the end) and the index past it.
std::pair<std::string, std::size_t> collect_fence(const std::vector<std::string_view>& lines, std::size_t i) {
    const auto open = trim(lines[i]);
    const std::string_view marker = open.starts_with("~~~") ? "~~~" : "```";
    std::string b(lines[i]);
    std::size_t j = i + 1;
    while (j < lines.size()) {
        b += '\n';
        b += lines[j];
        if (trim(lines[j]).starts_with(marker)) {
            ++j;
            break;
        }
        ++j;
    }
    return {std::move(b), j};
}

// The run of non-blank lines from lines[i] (a table's rows stay together).
std::pair<std::string, std::size_t> collect_paragraph(const std::vector<std::string_view>& lines, std::size_t i) {
    std::string b;
    std::size_t j = i;
    heading h;
    while (j < lines.size()) {
        const auto trimmed = trim(lines[j]);
        if (trimmed.empty() || is_fence(trimmed) || parse_heading(trimmed, h)) break;
        if (j > i) b += '\n';
        b += lines[j];
        ++j;
    }
    return {std::move(b), j};
}

std::string crumb(const std::vector<heading>& stack) {
    std::string out;
    for (const auto& h : stack) {
        if (!out.empty()) out += " > ";
        out += h.text;
    }
    return out;
}

class section_packer {
public:
    explicit section_packer(std::string breadcrumb = {}) : breadcrumb_(std::move(breadcrumb)) {}

    void add(std::string block, bool indivisible) {
        while (!block.empty() && block.back() == '\n') block.pop_back();
        if (trim(block).empty()) return;
        if (!indivisible && block.size() > max_chunk_bytes) {
            // Cut on rune boundaries, where Go cuts bytes: a chunk must stay valid UTF-8, which
            // the embeddings API requires (one such paragraph would fail every vector index run).
            for (std::string_view rest = block; !rest.empty();) {
                std::string_view piece = gocompat::utf8_prefix(rest, target_chunk_bytes);
                if (piece.empty()) piece = rest.substr(0, std::min(target_chunk_bytes, rest.size()));
                append(std::string(piece));
                rest.remove_prefix(piece.size());
            }
            return;
        }
        append(std::move(block));
    }

    void flush(std::vector<chunk>& out) {
        for (auto& c : done_) out.push_back(std::move(c));
        done_.clear();
        if (!buf_.empty()) out.push_back(take());
    }

private:
    void append(std::string block) {
        if (!buf_.empty() && size_ + block.size() + 2 > target_chunk_bytes) done_.push_back(take());
        size_ += block.size() + 2;
        buf_.push_back(std::move(block));
    }

    chunk take() {
        std::string body;
        for (std::size_t i = 0; i < buf_.size(); ++i) {
            if (i > 0) body += "\n\n";
            body += buf_[i];
        }
        buf_.clear();
        size_ = 0;
        // The breadcrumb travels with the text into both the lexical index and the embedding.
        return chunk{breadcrumb_, breadcrumb_.empty() ? std::move(body) : breadcrumb_ + "\n\n" + body};
    }

    std::string breadcrumb_;
    std::vector<std::string> buf_;
    std::size_t size_ = 0;
    std::vector<chunk> done_;
};

// The rune at s[i], advancing i past it: Go's utf8.DecodeRuneInString, so an invalid byte
// (an encoded surrogate among them) is U+FFFD one byte long, a separator like any other.
char32_t next_rune(std::string_view s, std::size_t& i) {
    const auto d = gocompat::decode_rune(s, i);
    i += d.size;
    return d.valid ? d.rune : gocompat::rune_error;
}

// Unicode letters and digits as the C.UTF-8 locale classifies them (Go's unicode.IsLetter
// and IsDigit), independent of the process's own locale.
bool is_letter_or_digit(char32_t r) {
    if (r < 0x80) return (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9');
    static const locale_t utf8 = newlocale(LC_CTYPE_MASK, "C.UTF-8", static_cast<locale_t>(nullptr));
    if (utf8 == static_cast<locale_t>(nullptr)) return r != 0xFFFD;
    return r != 0xFFFD && iswalnum_l(static_cast<wint_t>(r), utf8) != 0;
}

}  // namespace

front_matter_split split_front_matter(std::string_view content) {
    const std::string text = normalise_newlines(content);
    std::string_view rest(text);
    if (!rest.starts_with("---\n")) return {{}, text};
    const auto close = rest.find("\n---", 3);
    if (close == std::string_view::npos) return {{}, text};
    auto after = close + 4;
    // The closing line is exactly `---`, optionally with trailing blanks.
    auto eol = rest.find('\n', after);
    if (!trim(rest.substr(after, eol == std::string_view::npos ? std::string_view::npos : eol - after)).empty()) {
        return {{}, text};
    }
    front_matter_split out;
    try {
        const YAML::Node node = YAML::Load(std::string(rest.substr(4, close - 3)));
        if (!node.IsMap() && !node.IsNull()) return {{}, text};
        if (node.IsMap() && node["title"] && node["title"].IsScalar())
            out.title = std::string(trim(node["title"].as<std::string>()));
    } catch (const YAML::Exception&) {
        return {{}, text};
    }
    out.body = eol == std::string_view::npos ? std::string{} : std::string(rest.substr(eol + 1));
    return out;
}

std::vector<chunk> chunk_document(std::string_view content) {
    const std::string text = normalise_newlines(content);
    const auto lines = split_lines(text);
    std::vector<chunk> chunks;
    std::vector<heading> stack;
    section_packer packer;
    std::size_t i = 0;
    while (i < lines.size()) {
        const auto trimmed = trim(lines[i]);
        if (is_fence(trimmed)) {
            auto [block, next] = collect_fence(lines, i);
            packer.add(std::move(block), true);
            i = next;
            continue;
        }
        if (heading h; parse_heading(trimmed, h)) {
            // A heading starts a section; the heading line itself travels in the breadcrumb.
            packer.flush(chunks);
            while (!stack.empty() && stack.back().level >= h.level) stack.pop_back();
            stack.push_back(std::move(h));
            packer = section_packer(crumb(stack));
            ++i;
            continue;
        }
        if (trimmed.empty()) {
            ++i;
            continue;
        }
        auto [block, next] = collect_paragraph(lines, i);
        packer.add(std::move(block), false);
        i = next;
    }
    packer.flush(chunks);
    return chunks;
}

std::string document_title(std::string_view content) {
    const std::string text = normalise_newlines(content);
    const auto lines = split_lines(text);
    std::size_t i = 0;
    while (i < lines.size()) {
        const auto trimmed = trim(lines[i]);
        if (is_fence(trimmed)) {
            i = collect_fence(lines, i).second;
            continue;
        }
        if (heading h; parse_heading(trimmed, h)) return h.text;
        ++i;
    }
    return {};
}

std::string title_of(std::string_view content) {
    auto split = split_front_matter(content);
    if (!split.title.empty()) return split.title;
    return document_title(split.body);
}

std::string fts_query(std::string_view query) {
    std::string out;
    std::size_t terms = 0;
    std::size_t i = 0;
    while (i < query.size() && terms < max_fts_terms) {
        // Skip separators, then take one run of letters and digits.
        std::size_t start = i;
        char32_t r = next_rune(query, i);
        if (!is_letter_or_digit(r)) continue;
        std::size_t runes = 1;
        std::size_t end = i;
        while (i < query.size()) {
            std::size_t next = i;
            if (!is_letter_or_digit(next_rune(query, next))) break;
            i = next;
            end = i;
            ++runes;
        }
        if (runes < min_fts_term_runes) continue;
        // A term holds only letters and digits, so it cannot contain a quote; quoting
        // keeps words such as OR, AND, NEAR or NOT literal.
        if (!out.empty()) out += " OR ";
        out += '"';
        out += query.substr(start, end - start);
        out += '"';
        ++terms;
    }
    return out;
}

}  // namespace fiskai::knowledge
