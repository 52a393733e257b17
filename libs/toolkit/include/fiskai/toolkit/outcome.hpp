#pragma once
// The result of one tool call, as every surface renders it.

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <optional>
#include <string>

namespace fiskai::toolkit {

// What a command run produced. Serialised as the CommandResult envelope:
// {"command":...,"exit_code":N,"output":...,"truncated":true} with exit_code omitted
// when zero and truncated omitted when false, byte-compatible with the Go original.
struct command_result {
    std::string command;  // argv joined by single spaces, without the binary path
    int exit_code = 0;    // -1 for a process killed by a signal we did not send
    std::string output;   // stdout and stderr interleaved, capped
    bool truncated = false;

    friend bool operator==(const command_result&, const command_result&) = default;
};

// Go-compatible JSON of the envelope (HTML-safe escapes, invalid UTF-8 as U+FFFD).
[[nodiscard]] std::string to_json(const command_result& r);
[[nodiscard]] boost::json::object to_json_object(const command_result& r);

class outcome {
public:
    enum class kind { command, json, content, error };

    // A command ran; any exit code, including non-zero, is a normal result.
    static outcome from_command(command_result r);
    // An in-process tool produced the JSON the caller asked for; it travels verbatim.
    static outcome from_json(boost::json::value v);
    // The tool could not do its work (bad arguments, no start, timeout, denied).
    static outcome failure(std::string message);
    // Rich content for surfaces that carry it (MCP content blocks: text, image, audio,
    // resource), with optional structured data; `is_error` marks a tool-level failure.
    // A question tool whose human has not answered yet: non-error JSON that says so
    // (`{"<k>":null,"deferred":true,"question_id":...,"reason":...}`). The agent loop
    // journals it and never dispatches the call again; a surface that cannot carry the
    // later answer refuses it (is_deferral()).
    static outcome deferral(boost::json::value v, std::string question_id);
    static outcome from_content(boost::json::array blocks, std::optional<boost::json::object> structured = std::nullopt,
                                bool is_error = false);

    [[nodiscard]] kind type() const noexcept { return kind_; }
    [[nodiscard]] bool is_error() const noexcept { return kind_ == kind::error || content_error_; }
    [[nodiscard]] bool is_deferral() const noexcept { return !deferred_question_.empty(); }
    [[nodiscard]] const std::string& deferred_question_id() const noexcept { return deferred_question_; }
    [[nodiscard]] const command_result* command() const noexcept { return command_ ? &*command_ : nullptr; }
    [[nodiscard]] const boost::json::value* json() const noexcept { return kind_ == kind::json ? &json_ : nullptr; }
    [[nodiscard]] const std::string& error_message() const noexcept { return error_; }
    [[nodiscard]] const boost::json::array* content() const noexcept {
        return kind_ == kind::content ? &content_ : nullptr;
    }
    [[nodiscard]] const boost::json::object* structured() const noexcept {
        return structured_ ? &*structured_ : nullptr;
    }

    // The text a model sees: the envelope JSON, the verbatim JSON, the error message, or
    // for content the text blocks joined (other blocks as their JSON).
    [[nodiscard]] std::string render() const;

private:
    kind kind_ = kind::error;
    std::optional<command_result> command_;
    boost::json::value json_;
    std::string error_;
    boost::json::array content_;
    std::optional<boost::json::object> structured_;
    bool content_error_ = false;
    std::string deferred_question_;
};

}  // namespace fiskai::toolkit
