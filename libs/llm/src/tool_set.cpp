#include <fiskai/llm/types.hpp>

#include <deque>
#include <mutex>
#include <utility>

namespace fiskai::llm {

struct tool_set::shared {
    std::vector<tool_def> defs;
    // One text per encoder, made by whichever thread asks first; a deque so that a text
    // handed out stays where it is when another is added.
    mutable std::mutex mutex;
    mutable std::deque<std::pair<encoder, std::string>> texts;
};

namespace {
const std::shared_ptr<const tool_set::shared>& no_tools() {
    static const std::shared_ptr<const tool_set::shared> empty = std::make_shared<const tool_set::shared>();
    return empty;
}
}  // namespace

tool_set::tool_set() : shared_(no_tools()) {}

tool_set::tool_set(std::vector<tool_def> defs) {
    auto s = std::make_shared<shared>();
    s->defs = std::move(defs);
    shared_ = std::move(s);
}

const std::vector<tool_def>& tool_set::defs() const noexcept { return shared_->defs; }

const std::string& tool_set::encoded(encoder encode) const {
    std::lock_guard lock(shared_->mutex);
    for (const auto& [by, text] : shared_->texts) {
        if (by == encode) return text;
    }
    return shared_->texts.emplace_back(encode, encode(shared_->defs)).second;
}

}  // namespace fiskai::llm
