#pragma once
// The text side of the knowledge base, free of I/O: splitting a document into
// heading-delimited chunks, its title, and turning a user's query into a safe FTS5 MATCH
// expression (Go's internal/rag chunk.go and ftsQuery).

#include <string>
#include <string_view>
#include <vector>

namespace fiskai::knowledge {

// Chunks are packed toward this size under their heading section.
inline constexpr std::size_t target_chunk_bytes = 1200;
// A paragraph over this size is hard-split; a fenced code block is kept whole.
inline constexpr std::size_t max_chunk_bytes = 1500;

struct chunk {
    // The heading breadcrumb, `A > B > C`; empty for text before any heading.
    std::string heading_path;
    // The body with the breadcrumb folded in front (`<breadcrumb>\n\n<body>`).
    std::string content;

    friend bool operator==(const chunk&, const chunk&) = default;
};

// A document split in two: its YAML front matter's `title` (empty when none) and the
// body after the front matter.
struct front_matter_split {
    std::string title;
    std::string body;
};

// Splits off a leading `---` ... `---` YAML front-matter block. A document without one,
// or whose block is not YAML, is all body.
[[nodiscard]] front_matter_split split_front_matter(std::string_view content);

// Heading-delimited, size-packed chunks of a Markdown or plain-text body. Empty input
// gives none.
[[nodiscard]] std::vector<chunk> chunk_document(std::string_view content);

// The first ATX heading outside a code fence, or empty.
[[nodiscard]] std::string document_title(std::string_view content);

// The title shown for a document: the front matter's `title`, else its first heading.
[[nodiscard]] std::string title_of(std::string_view content);

// Free text reduced to quoted, OR-ed terms for FTS5 MATCH: split on anything that is not
// a letter or digit, one-rune terms dropped, at most 40 terms, every term quoted so no
// user text is FTS syntax. Empty when nothing searchable is left.
[[nodiscard]] std::string fts_query(std::string_view query);

}  // namespace fiskai::knowledge
