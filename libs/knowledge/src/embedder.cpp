// Go's internal/rag/embed.go over libs/net: batches of 64, halving on a refused batch,
// vectors placed strictly by their `index`, every malformed answer a clear error.
#include <fiskai/knowledge/embedder.hpp>

#include <fiskai/config/config.hpp>
#include <fiskai/gocompat/quote.hpp>
#include <fiskai/gocompat/utf8.hpp>
#include <fiskai/net/http_client.hpp>
#include <fiskai/net/url.hpp>

#include <boost/json.hpp>

#include <fmt/format.h>

#include <cstdlib>
#include <stdexcept>

namespace fiskai::knowledge {

namespace {

namespace json = boost::json;

constexpr std::size_t max_query_chars = 8192;
constexpr std::size_t embed_batch_size = 64;
constexpr std::size_t max_embed_input_bytes = 128 * 1024;
constexpr std::size_t max_embed_response_bytes = std::size_t{64} << 20;

bool blank(std::string_view s) { return s.find_first_not_of(" \t\r\n\v\f") == std::string_view::npos; }

std::string trim_right_slash(std::string s) {
    while (!s.empty() && s.back() == '/') s.pop_back();
    return s;
}

class openai_embedder final : public embedder {
public:
    openai_embedder(boost::asio::any_io_executor io, const config::embeddings_settings& s, std::string api_key)
        : client_(std::move(io), client_opts()),
          base_url_(trim_right_slash(s.base_url)),
          model_(s.model),
          api_key_(std::move(api_key)),
          query_prefix_(s.query_prefix),
          document_prefix_(s.document_prefix),
          timeout_(std::chrono::duration_cast<std::chrono::steady_clock::duration>(s.timeout)) {}

    const std::string& model() const override { return model_; }
    const std::string& query_prefix() const override { return query_prefix_; }
    const std::string& document_prefix() const override { return document_prefix_; }

    boost::asio::awaitable<embed_result<int>> dimension() override {
        if (dim_ != 0) co_return dim_;
        std::vector<std::string> probe{"dimension probe"};
        auto vecs = co_await embed_batch(std::move(probe));
        if (!vecs) co_return vecs.error();
        if (vecs->size() != 1 || vecs->front().empty()) {
            co_return fmt::format("embeddings server at {} returned an empty dimension probe for model {}", base_url_,
                                  gocompat::quote(model_));
        }
        dim_ = static_cast<int>(vecs->front().size());
        co_return dim_;
    }

    boost::asio::awaitable<embed_result<std::vector<float>>> embed_query(std::string text) override {
        if (text.size() > max_query_chars) {
            text.resize(max_query_chars);
            // Back off a partial trailing rune so the input stays valid UTF-8.
            while (!text.empty() && !gocompat::is_valid_utf8(text)) text.pop_back();
        }
        std::vector<std::string> inputs{query_prefix_ + text};
        auto vecs = co_await embed_batch(std::move(inputs));
        if (!vecs) co_return vecs.error();
        if (vecs->size() != 1) {
            co_return fmt::format("embeddings server returned {} vectors for one query input", vecs->size());
        }
        co_return std::move(vecs->front());
    }

    boost::asio::awaitable<embed_result<std::vector<std::vector<float>>>> embed_documents(
        std::vector<embed_document> docs) override {
        std::vector<std::string> inputs;
        inputs.reserve(docs.size());
        for (const auto& d : docs) inputs.push_back(document_input(d));
        std::vector<std::vector<float>> out;
        out.reserve(inputs.size());
        for (std::size_t start = 0; start < inputs.size(); start += embed_batch_size) {
            const auto end = std::min(start + embed_batch_size, inputs.size());
            std::vector<std::string> batch(inputs.begin() + static_cast<std::ptrdiff_t>(start),
                                           inputs.begin() + static_cast<std::ptrdiff_t>(end));
            auto vecs = co_await embed_with_fallback(std::move(batch));
            if (!vecs) co_return vecs.error();
            for (auto& v : *vecs) out.push_back(std::move(v));
        }
        co_return out;
    }

private:
    static net::client_options client_opts() {
        net::client_options o;
        o.body_limit = max_embed_response_bytes;
        return o;
    }

    std::string document_input(const embed_document& d) const {
        const std::string title = d.title.empty() ? "none" : d.title;
        std::string prefix = document_prefix_;
        for (std::size_t at = prefix.find("{title}"); at != std::string::npos;
             at = prefix.find("{title}", at + title.size())) {
            prefix.replace(at, 7, title);
        }
        return prefix + d.text;
    }

    // A refused batch is split in halves down to single inputs, keeping the order.
    boost::asio::awaitable<embed_result<std::vector<std::vector<float>>>> embed_with_fallback(
        std::vector<std::string> inputs) {
        auto whole = co_await embed_batch(inputs);
        if (whole || inputs.size() == 1) co_return whole;
        const auto mid = static_cast<std::ptrdiff_t>(inputs.size() / 2);
        std::vector<std::string> left_in(inputs.begin(), inputs.begin() + mid);
        std::vector<std::string> right_in(inputs.begin() + mid, inputs.end());
        auto left = co_await embed_with_fallback(std::move(left_in));
        if (!left) co_return left.error();
        auto right = co_await embed_with_fallback(std::move(right_in));
        if (!right) co_return right.error();
        for (auto& v : *right) left->push_back(std::move(v));
        co_return std::move(*left);
    }

    boost::asio::awaitable<embed_result<std::vector<std::vector<float>>>> embed_batch(std::vector<std::string> inputs) {
        for (std::size_t i = 0; i < inputs.size(); ++i) {
            if (blank(inputs[i])) co_return fmt::format("embedding input {} is empty", i);
            if (!gocompat::is_valid_utf8(inputs[i])) co_return fmt::format("embedding input {} is not valid UTF-8", i);
            if (inputs[i].size() > max_embed_input_bytes) {
                co_return fmt::format("embedding input {} is too large: {} bytes, limit is {}", i, inputs[i].size(),
                                      max_embed_input_bytes);
            }
        }
        json::array in;
        for (const auto& s : inputs) in.emplace_back(s);
        net::http_request req;
        req.method = "POST";
        req.url = base_url_ + "/embeddings";
        req.headers.emplace_back("Content-Type", "application/json");
        if (!api_key_.empty()) req.headers.emplace_back("Authorization", "Bearer " + api_key_);
        req.body = json::serialize(json::object{{"input", std::move(in)}, {"model", model_}});
        const auto deadline = std::chrono::steady_clock::now() + timeout_;
        auto resp = co_await client_.send(std::move(req), deadline);
        if (!resp) co_return fmt::format("contacting embeddings server at {}: {}", base_url_, resp.error().message);
        if (resp->status != 200) {
            std::string body = resp->body;
            while (!body.empty() && std::isspace(static_cast<unsigned char>(body.back()))) body.pop_back();
            co_return fmt::format("embeddings server at {} returned {}: {}", base_url_, resp->status,
                                  body.substr(0, 512));
        }
        boost::system::error_code ec;
        json::value parsed = json::parse(resp->body, ec);
        if (ec) co_return fmt::format("decoding embeddings response: {}", ec.message());
        if (!parsed.is_object()) co_return std::string("decoding embeddings response: the body is not a JSON object");
        const auto& obj = parsed.get_object();
        // Some servers report an error inside a 200 body.
        if (const auto* e = obj.if_contains("error"); e != nullptr && e->is_object()) {
            if (const auto* m = e->get_object().if_contains("message");
                m != nullptr && m->is_string() && !m->get_string().empty()) {
                co_return fmt::format("embeddings server at {} reported: {}", base_url_, std::string(m->get_string()));
            }
        }
        const auto* data = obj.if_contains("data");
        if (data == nullptr || !data->is_array()) {
            co_return fmt::format("embeddings server returned 0 vectors for {} inputs", inputs.size());
        }
        const auto& arr = data->get_array();
        if (arr.size() != inputs.size()) {
            co_return fmt::format("embeddings server returned {} vectors for {} inputs", arr.size(), inputs.size());
        }
        std::vector<std::vector<float>> out(inputs.size());
        std::vector<bool> seen(inputs.size(), false);
        for (const auto& item : arr) {
            const auto* o = item.if_object();
            const auto* idx = o != nullptr ? o->if_contains("index") : nullptr;
            const auto* emb = o != nullptr ? o->if_contains("embedding") : nullptr;
            std::int64_t index = 0;
            if (idx != nullptr && idx->is_int64())
                index = idx->get_int64();
            else if (idx != nullptr && idx->is_uint64())
                index = static_cast<std::int64_t>(idx->get_uint64());
            else if (idx != nullptr)
                co_return std::string("decoding embeddings response: index is not an integer");
            if (index < 0 || static_cast<std::size_t>(index) >= inputs.size()) {
                co_return fmt::format("embeddings server returned out-of-range index {} for {} inputs", index,
                                      inputs.size());
            }
            const auto at = static_cast<std::size_t>(index);
            if (seen[at]) co_return fmt::format("embeddings server returned duplicate index {}", index);
            if (emb != nullptr && !emb->is_array() && !emb->is_null()) {
                co_return std::string("decoding embeddings response: embedding is not an array of numbers");
            }
            std::vector<float> v;
            if (emb != nullptr && emb->is_array()) {
                for (const auto& f : emb->get_array()) {
                    if (!f.is_number()) {
                        co_return std::string("decoding embeddings response: embedding is not an array of numbers");
                    }
                    v.push_back(static_cast<float>(f.to_number<double>()));
                }
            }
            if (v.empty()) co_return fmt::format("embeddings server returned an empty vector at index {}", index);
            seen[at] = true;
            out[at] = std::move(v);
        }
        co_return out;
    }

    net::http_client client_;
    std::string base_url_;
    std::string model_;
    std::string api_key_;
    std::string query_prefix_;
    std::string document_prefix_;
    std::chrono::steady_clock::duration timeout_;
    // Touched only on the io executor (one thread), so no lock.
    int dim_ = 0;
};

}  // namespace

std::shared_ptr<embedder> make_openai_embedder(boost::asio::any_io_executor io,
                                               const config::embeddings_settings& settings, std::string api_key) {
    return std::make_shared<openai_embedder>(std::move(io), settings, std::move(api_key));
}

std::shared_ptr<embedder> embedder_from_config(boost::asio::any_io_executor io, const config::config& cfg) {
    if (!cfg.harness.knowledge.vector_tier()) return nullptr;
    const auto& ec = *cfg.harness.knowledge.embeddings;
    if (blank(ec.base_url)) {
        throw std::runtime_error("knowledge.embeddings.base_url is required when the embeddings block is present");
    }
    if (blank(ec.model)) {
        throw std::runtime_error("knowledge.embeddings.model is required when the embeddings block is present");
    }
    if (auto refusal = net::check_url(ec.base_url, "knowledge.embeddings.base_url", false)) {
        throw std::runtime_error(*refusal);
    }
    std::string api_key;
    if (!ec.api_key_env.empty()) {
        if (const char* v = std::getenv(ec.api_key_env.c_str())) api_key = v;
    }
    return make_openai_embedder(std::move(io), ec, std::move(api_key));
}

}  // namespace fiskai::knowledge
