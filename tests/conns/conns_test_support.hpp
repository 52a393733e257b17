#pragma once
// What the conns tests share: quick connect options and the conns::error a call throws.

#include <fiskai/conns/connection.hpp>
#include <fiskai/conns/error.hpp>

#include <catch2/catch.hpp>

#include <chrono>
#include <functional>
#include <string>
#include <string_view>

namespace fiskai::test {

// A short connect timeout and no reconnects: a test dial fails fast.
inline conns::connect_options quick_dial(std::string_view identity,
                                         std::chrono::milliseconds timeout = std::chrono::milliseconds(1000)) {
    conns::connect_options o;
    o.name = conns::connection_name(identity);
    o.connect_timeout = timeout;
    o.allow_reconnect = false;
    return o;
}

// The code and message of the conns::error `f` throws; fails the test when it throws
// nothing or something else.
struct caught {
    boost::system::error_code code;
    std::string message;
};

inline caught failure_of(const std::function<void()>& f) {
    try {
        f();
    } catch (const conns::error& e) {
        return {e.code(), e.what()};
    }
    FAIL("no conns::error was thrown");
    return {};
}

}  // namespace fiskai::test
