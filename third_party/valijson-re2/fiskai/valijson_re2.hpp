#pragma once
// valijson with RE2 behind its RegexEngine extension point: the one way this project
// validates JSON Schema `pattern` keywords (tool arguments, a2a messages).
//
// Why: valijson's default engine is std::regex, whose libstdc++ executor recurses once per
// input character, so one long string argument against a `pattern` overflows the stack.
// RE2 runs in linear time with bounded stack, and its syntax is the one Go's regexp (and so
// the original fisk-ai) uses. valijson's own date/time/ipv4 format checks use Boost.Regex
// (VALIJSON_USE_BOOST_REGEX), which is non-recursive and throws instead of crashing when a
// match grows too costly: callers catch and report that as a validation failure.
//
// Patterns RE2 cannot compile (lookaround, backreferences) never match, so a schema that
// uses them refuses every value rather than accepting unchecked ones: fail closed.

#include <re2/re2.h>

#include <valijson/validator.hpp>

#include <memory>
#include <string>
#include <vector>

namespace fiskai::schema_support {

class re2_engine {
public:
    explicit re2_engine(const std::string& pattern) : re_(std::make_shared<re2::RE2>(pattern, options())) {}

    // JSON Schema's `pattern` is unanchored: a match anywhere in the string satisfies it.
    static bool search(const std::string& text, const re2_engine& engine) {
        return engine.re_->ok() && re2::RE2::PartialMatch(text, *engine.re_);
    }

    [[nodiscard]] bool ok() const { return re_->ok(); }
    [[nodiscard]] const std::string& error() const { return re_->error(); }

private:
    static re2::RE2::Options options() {
        re2::RE2::Options o;
        o.set_log_errors(false);  // a bad pattern is reported by the caller, not on stderr
        // Room for large alternations from generated schemas; memory, not stack.
        o.set_max_mem(64 << 20);
        return o;
    }
    std::shared_ptr<re2::RE2> re_;  // RE2 is neither copyable nor movable
};

using validator = valijson::ValidatorT<re2_engine>;

// valijson's validator caches compiled regular expressions and is not thread-safe; compiled
// schemas are read-only. One validator per thread keeps both properties.
inline validator& thread_validator() {
    thread_local validator v;
    return v;
}

// How a property name in valijson's context (`["name"]`) is written in a pointer.
enum class property_quotes { strip, keep };

// valijson's legacy error context (`<root>`, `["sender"]`, `[0]`) as a JSON pointer
// (`/sender/0`), `/` at the root. `keep` leaves the quotes valijson 1.1 puts around
// property names, for messages whose bytes were fixed with them.
inline std::string context_pointer(const std::vector<std::string>& context,
                                   property_quotes quotes = property_quotes::strip) {
    std::string out;
    for (const auto& c : context) {
        if (c == "<root>") continue;
        out.push_back('/');
        std::string part = c.size() >= 2 && c.front() == '[' && c.back() == ']' ? c.substr(1, c.size() - 2) : c;
        if (quotes == property_quotes::strip && part.size() >= 2 && part.front() == '"' && part.back() == '"') {
            part = part.substr(1, part.size() - 2);
        }
        out.append(part);
    }
    return out.empty() ? "/" : out;
}

}  // namespace fiskai::schema_support
