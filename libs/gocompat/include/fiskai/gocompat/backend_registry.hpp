#pragma once
// The registry behind Go's `Register(name, factory)` pattern for pluggable stores (the
// session journal's and memory's backends): names mapped to factories, safe from any
// thread. Each library keeps its own texts around it.

#include <map>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace fiskai::gocompat {

template <class Factory>
class backend_registry {
public:
    struct registration {
        Factory make;
        bool requires_nats = false;
    };

    // `owner` names the library in the logic_error texts (`<owner>: register_backend ...`).
    backend_registry(std::string owner, std::vector<std::pair<std::string, registration>> builtins)
        : owner_(std::move(owner)) {
        for (auto& [name, reg] : builtins) backends_.emplace(std::move(name), std::move(reg));
    }

    // A programming error, not input: throws std::logic_error on an empty name or factory
    // and on a name registered twice.
    void add(std::string name, Factory make, bool requires_nats) {
        if (name.empty()) throw std::logic_error(owner_ + ": register_backend called with an empty backend name");
        if (!make) {
            throw std::logic_error(owner_ + ": register_backend called with an empty factory for backend " + name);
        }
        std::lock_guard lock(mutex_);
        if (backends_.contains(name)) {
            throw std::logic_error(owner_ + ": register_backend called twice for backend " + name);
        }
        backends_.emplace(std::move(name), registration{std::move(make), requires_nats});
    }

    // The registered names, sorted.
    [[nodiscard]] std::vector<std::string> names() const {
        std::lock_guard lock(mutex_);
        std::vector<std::string> out;
        for (const auto& [name, reg] : backends_) out.push_back(name);
        return out;
    }

    // False for an unknown name.
    [[nodiscard]] bool needs_nats(std::string_view backend) const {
        std::lock_guard lock(mutex_);
        const auto it = backends_.find(backend);
        return it != backends_.end() && it->second.requires_nats;
    }

    // A copy of the factory, so that it runs outside the lock; nullopt for an unknown name.
    [[nodiscard]] std::optional<Factory> find(std::string_view backend) const {
        std::lock_guard lock(mutex_);
        const auto it = backends_.find(backend);
        if (it == backends_.end()) return std::nullopt;
        return it->second.make;
    }

private:
    std::string owner_;
    mutable std::mutex mutex_;
    std::map<std::string, registration, std::less<>> backends_;
};

}  // namespace fiskai::gocompat
