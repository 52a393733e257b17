#pragma once
// The vector tier's seam: a source of embedding vectors. The one production implementation
// talks to an OpenAI-compatible `<base_url>/embeddings` endpoint over libs/net. Vectors
// come back raw; the store L2-normalises every vector itself.

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/system/result.hpp>

#include <memory>
#include <string>
#include <vector>

namespace fiskai::config {
struct config;
struct embeddings_settings;
}  // namespace fiskai::config

namespace fiskai::knowledge {

// A chunk to embed: its heading fills the document prefix's `{title}`.
struct embed_document {
    std::string title;
    std::string text;
};

template <class T>
using embed_result = boost::system::result<T, std::string>;

class embedder {
public:
    virtual ~embedder() = default;
    [[nodiscard]] virtual const std::string& model() const = 0;
    [[nodiscard]] virtual const std::string& query_prefix() const = 0;
    [[nodiscard]] virtual const std::string& document_prefix() const = 0;
    // The model's dimension, probed once and cached after the first success.
    virtual boost::asio::awaitable<embed_result<int>> dimension() = 0;
    // The raw vector of a query (the query prefix applied; over 8192 bytes truncated).
    virtual boost::asio::awaitable<embed_result<std::vector<float>>> embed_query(std::string text) = 0;
    // The raw vectors of documents, one per document in order (the document prefix applied).
    virtual boost::asio::awaitable<embed_result<std::vector<std::vector<float>>>> embed_documents(
        std::vector<embed_document> docs) = 0;
};

// The embedder the config asks for, or null when the vector tier is off. Validates the
// block without contacting the server: base_url and model set, https unless loopback.
// Throws std::runtime_error with Go's text when the block is malformed.
[[nodiscard]] std::shared_ptr<embedder> embedder_from_config(boost::asio::any_io_executor io,
                                                             const config::config& cfg);

// An OpenAI-compatible client for `settings`; `api_key` is sent as a bearer token when set.
[[nodiscard]] std::shared_ptr<embedder> make_openai_embedder(boost::asio::any_io_executor io,
                                                             const config::embeddings_settings& settings,
                                                             std::string api_key);

}  // namespace fiskai::knowledge
