#include <fiskai/gocompat/json.hpp>
#include <fiskai/toolkit/outcome.hpp>

namespace fiskai::toolkit {

std::string to_json(const command_result& r) {
    // Key order and omission rules of the Go CommandResult struct.
    std::string out = "{\"command\":";
    gocompat::append_json_string(out, r.command);
    if (r.exit_code != 0) {
        out += ",\"exit_code\":";
        out += std::to_string(r.exit_code);
    }
    out += ",\"output\":";
    gocompat::append_json_string(out, r.output);
    if (r.truncated) out += ",\"truncated\":true";
    out += '}';
    return out;
}

boost::json::object to_json_object(const command_result& r) {
    boost::json::object o;
    o["command"] = r.command;
    if (r.exit_code != 0) o["exit_code"] = r.exit_code;
    o["output"] = r.output;
    if (r.truncated) o["truncated"] = true;
    return o;
}

outcome outcome::from_command(command_result r) {
    outcome o;
    o.kind_ = kind::command;
    o.command_ = std::move(r);
    return o;
}

outcome outcome::from_json(boost::json::value v) {
    outcome o;
    o.kind_ = kind::json;
    o.json_ = std::move(v);
    return o;
}

outcome outcome::deferral(boost::json::value v, std::string question_id) {
    outcome o = from_json(std::move(v));
    o.deferred_question_ = question_id.empty() ? std::string("-") : std::move(question_id);
    return o;
}

outcome outcome::failure(std::string message) {
    outcome o;
    o.kind_ = kind::error;
    o.error_ = std::move(message);
    return o;
}

outcome outcome::from_content(boost::json::array blocks, std::optional<boost::json::object> structured, bool is_error) {
    outcome o;
    o.kind_ = kind::content;
    o.content_ = std::move(blocks);
    o.structured_ = std::move(structured);
    o.content_error_ = is_error;
    return o;
}

std::string outcome::render() const {
    switch (kind_) {
        case kind::command: return to_json(*command_);
        case kind::json: return gocompat::to_json(json_);
        case kind::error: return error_;
        case kind::content: {
            std::string text;
            for (const auto& block : content_) {
                if (!text.empty()) text += "\n";
                const auto* t = block.is_object() ? block.get_object().if_contains("text") : nullptr;
                text += t && t->is_string() ? std::string(t->get_string()) : gocompat::to_json(block);
            }
            return text;
        }
    }
    return error_;
}

}  // namespace fiskai::toolkit
