#include <fiskai/toolkit/prompter.hpp>

#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

namespace fiskai::toolkit {
namespace {

namespace asio = boost::asio;
using namespace asio::experimental::awaitable_operators;

constexpr const char* nobody = "no operator is available to answer on this path";

// The reply `inner` gives, or a silent one when `wait` passes first.
template <class Reply>
asio::awaitable<Reply> within(asio::awaitable<Reply> inner, std::chrono::steady_clock::duration wait) {
    asio::steady_timer timer(co_await asio::this_coro::executor, wait);
    auto first = co_await (std::move(inner) || timer.async_wait(asio::use_awaitable));
    if (first.index() == 0) co_return std::get<0>(std::move(first));
    Reply silent;
    silent.status = reply_status::silent;
    co_return silent;
}

}  // namespace

asio::awaitable<approval_reply> deny_prompter::approve(approval_request) {
    co_return approval_reply{reply_status::unavailable, approval::deny, nobody, {}};
}

asio::awaitable<question_reply> deny_prompter::ask(question) {
    question_reply r;
    r.reason = nobody;
    co_return r;
}

prompter& default_deny_prompter() noexcept {
    static deny_prompter instance;
    return instance;
}

asio::awaitable<approval_reply> bounded_prompter::approve(approval_request request) {
    co_return co_await within(inner_.approve(std::move(request)), wait_);
}

asio::awaitable<question_reply> bounded_prompter::ask(question q) {
    co_return co_await within(inner_.ask(std::move(q)), wait_);
}

}  // namespace fiskai::toolkit
