#pragma once
// Runs agent sessions for tests and the run_session tool: the real provider against
// fiskai-fake-llm (or any URL), the file journal in a directory, the demo application's
// command tools plus any extra tools, all on one io_context driven by this thread.

#include <fiskai/agent/agent.hpp>
#include <fiskai/llm/provider.hpp>
#include <fiskai/net/http_client.hpp>
#include <fiskai/runstate/file_store.hpp>
#include <fiskai/runstate/store.hpp>
#include <fiskai/toolkit/application.hpp>
#include <fiskai/toolkit/prompter.hpp>

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/asio/use_future.hpp>

#include <chrono>
#include <functional>
#include <future>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace fiskai::test {

// Drives `ioc` until the future is ready or the deadline passes (the client's idle pool
// keeps the context busy, so run() would not return by itself).
template <class T>
T drive(boost::asio::io_context& ioc, std::future<T>& future, std::chrono::steady_clock::duration deadline,
        const std::function<void()>& each_turn = {}) {
    const auto end = std::chrono::steady_clock::now() + deadline;
    while (future.wait_for(std::chrono::seconds(0)) != std::future_status::ready &&
           std::chrono::steady_clock::now() < end) {
        // A context out of work stops; the journal's blocking pool posts back to it later.
        if (ioc.stopped()) ioc.restart();
        ioc.run_one_for(std::chrono::milliseconds(20));
        if (each_turn) each_turn();
    }
    if (future.wait_for(std::chrono::seconds(0)) != std::future_status::ready) {
        throw std::runtime_error("the session did not finish within the deadline");
    }
    return future.get();
}

template <class T>
T run_on(boost::asio::io_context& ioc, boost::asio::awaitable<T> work,
         std::chrono::steady_clock::duration deadline = std::chrono::seconds(60)) {
    auto future = boost::asio::co_spawn(ioc, std::move(work), boost::asio::use_future);
    return drive(ioc, future, deadline);
}

// Where the real provider finds a fiskai-fake-llm listening on `port`: `name` anthropic, or
// openai (the fake serves that wire under /v1).
inline llm::provider_config fake_model_provider(int port, std::string_view name = "anthropic", int max_retries = 0) {
    llm::provider_config p;
    p.name = std::string(name);
    p.base_url = "http://127.0.0.1:" + std::to_string(port) + (name == "openai" ? "/v1" : "");
    p.api_key = "test-key";
    p.max_retries = max_retries;
    return p;
}

struct session_harness {
    boost::asio::io_context ioc;
    boost::asio::thread_pool blocking{1};
    net::http_client client{ioc.get_executor()};
    std::shared_ptr<runstate::store> store;
    std::shared_ptr<agent::runtime> rt = std::make_shared<agent::runtime>();

    // `journal_dir`: the file store's directory; `provider`: where the model is.
    session_harness(const config::config& cfg, const std::string& journal_dir, const llm::provider_config& provider,
                    toolkit::tool_list extra_tools = {}) {
        rt->cfg = cfg;
        rt->configured = agent::limits::from(cfg);
        rt->provider = llm::make_provider(provider, ioc.get_executor(), client);
        store = runstate::make_file_store(journal_dir, blocking.get_executor());
        rt->sessions = store;
        if (!cfg.application_path.empty()) {
            toolkit::application_options options;
            options.application_path = cfg.application_path;
            options.derive.confirm_tags = cfg.harness.confirm_tags;
            auto loaded = run_on(ioc, toolkit::load_application_tools(std::move(options)));
            rt->tools = std::move(loaded.tools);
        }
        for (auto& t : extra_tools) rt->tools.push_back(std::move(t));
    }
    ~session_harness() { blocking.join(); }

    agent::run_request request(std::string session, std::string prompt,
                               agent::session_mode mode = agent::session_mode::open_or_create) const {
        agent::run_request r;
        r.mode = mode;
        r.session_id = std::move(session);
        r.prompt = std::move(prompt);
        r.effective = rt->configured;
        return r;
    }

    agent::run_result run(agent::run_request r,
                          std::chrono::steady_clock::duration deadline = std::chrono::seconds(60)) {
        agent::agent a(ioc.get_executor(), rt);
        return run_on(ioc, a.run(std::move(r)), deadline);
    }

    // Runs and fires a terminal cancellation (the hard stop) once `when()` holds.
    agent::run_result run_cancelled(agent::run_request r, const std::function<bool()>& when,
                                    std::chrono::steady_clock::duration deadline = std::chrono::seconds(60)) {
        agent::agent a(ioc.get_executor(), rt);
        boost::asio::cancellation_signal signal;
        auto future = boost::asio::co_spawn(
            ioc, a.run(std::move(r)), boost::asio::bind_cancellation_slot(signal.slot(), boost::asio::use_future));
        bool fired = false;
        return drive(ioc, future, deadline, [&] {
            if (!fired && when()) {
                fired = true;
                signal.emit(boost::asio::cancellation_type::terminal);
            }
        });
    }

    std::vector<runstate::record> records(const std::string& session) {
        auto got = run_on(ioc, store->read(session));
        if (!got) throw std::runtime_error(got.error().message);
        return *got;
    }
};

// A prompter with fixed replies that counts what it was asked.
class scripted_prompter final : public toolkit::prompter {
public:
    bool reachable = true;
    toolkit::approval_reply approval{toolkit::reply_status::answered, toolkit::approval::allow_once, {}, {}};
    toolkit::question_reply answer{toolkit::reply_status::answered, true, -1, {}, {}, {}};
    int approvals = 0;
    int questions = 0;

    [[nodiscard]] bool can_prompt() const override { return reachable; }
    boost::asio::awaitable<toolkit::approval_reply> approve(toolkit::approval_request) override {
        ++approvals;
        co_return approval;
    }
    boost::asio::awaitable<toolkit::question_reply> ask(toolkit::question) override {
        ++questions;
        co_return answer;
    }
};

}  // namespace fiskai::test
