#pragma once
// fiskai-fake-llm's logic, free of I/O: the script (conversations, steps, faults), choosing
// the conversation and step for a request, and rendering a scripted reply in the shape of
// the endpoint that was called (Anthropic Messages or OpenAI chat completions).

#include <boost/json.hpp>
#include <boost/system/result.hpp>

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace fiskai::fake_llm {

using header_list = std::vector<std::pair<std::string, std::string>>;

enum class endpoint { anthropic, openai };

// One failed attempt: an error status (headers, body), a delay before answering, a hang
// (never answer), or a close (drop the connection without a response).
struct fault {
    int status = 0;
    header_list headers;
    std::optional<std::string> body;
    int delay_ms = 0;
    bool hang = false;
    bool close = false;
};

struct expectation {
    std::vector<std::string> tools_include;
    std::optional<std::string> last_tool_result_contains;
    std::optional<std::string> system_contains;
};

struct step {
    expectation expect;
    std::vector<fault> faults;
    boost::json::object reply;
};

struct conversation {
    std::string name;
    std::optional<std::string> prompt_contains;
    std::vector<step> steps;
};

struct script {
    std::vector<conversation> conversations;
    int unmatched_status = 500;
    std::optional<std::string> unmatched_body;
};

// The error names the bad value and where it is.
[[nodiscard]] boost::system::result<script, std::string> parse_script(std::string_view json);

// What the fake reads from a request body.
struct request_view {
    std::string model;
    std::string first_user_text;
    int assistant_turns = 0;
    std::vector<std::string> tools;
    std::optional<std::string> last_tool_result;
    std::string system;
};

[[nodiscard]] boost::system::result<request_view, std::string> analyze(endpoint where, std::string_view body);

// What to do for one attempt.
struct action {
    enum class kind { respond, hang, close };
    kind what = kind::respond;
    int delay_ms = 0;
    int status = 200;
    header_list headers;
    std::string body;
    std::optional<std::string> conversation;
    int step = -1;
    int attempt = 0;
};

// The script plus the attempts seen per (conversation, step). One thread.
class engine {
public:
    explicit engine(script s = {}) : script_(std::move(s)) {}
    void replace(script s);
    [[nodiscard]] action handle(endpoint where, std::string_view body);

private:
    script script_;
    std::map<std::pair<std::string, int>, int> attempts_;
    long long sequence_ = 0;
};

// A scripted reply (`content`, `stop_reason`, `usage`) as the endpoint's success body.
[[nodiscard]] std::string render_reply(endpoint where, const boost::json::object& reply,
                                       const std::string& conversation, int step, const std::string& model);

// An error body in the endpoint's shape.
[[nodiscard]] std::string error_body(endpoint where, std::string_view type, std::string_view message);

}  // namespace fiskai::fake_llm
