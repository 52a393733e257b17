#include <fiskai/toolkit/prompter.hpp>

#include <stdexcept>

namespace fiskai::toolkit {

boost::asio::awaitable<approval> deny_prompter::ask_approval(approval_request) {
    throw std::runtime_error("no operator is available to answer on this path");
    co_return approval::deny;  // makes this a coroutine
}

prompter& default_deny_prompter() noexcept {
    static deny_prompter instance;
    return instance;
}

}  // namespace fiskai::toolkit
