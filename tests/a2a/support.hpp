#pragma once
// Helpers shared by the a2a tests.

#include <fiskai/a2a/codec.hpp>
#include <fiskai/a2a/error.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <string_view>
#include <vector>

namespace a2a_test {

inline std::filesystem::path golden_dir() { return std::filesystem::path(FISKAI_SOURCE_DIR) / "tests/a2a/golden"; }

inline std::string read_file(const std::filesystem::path& p) {
    std::ifstream in(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Every golden body, sorted by name.
inline std::vector<std::filesystem::path> golden_files() {
    std::vector<std::filesystem::path> out;
    for (const auto& e : std::filesystem::directory_iterator(golden_dir())) {
        if (e.path().extension() == ".json") out.push_back(e.path());
    }
    std::sort(out.begin(), out.end());
    return out;
}

// A header as the Go client stamps a request.
inline constexpr const char* header_json =
    R"("id":"2wJ4H0sTQqS7xYvEo1Rm9LkPbZd","request":"2wJ4H0sTQqS7xYvEo1Rm9LkPbZd",)"
    R"("conversation":"2wJ4H0sTQqS7xYvEo1Rm9LkPbZd","sequence":0,"time":"2026-05-04T09:15:27.482913304Z",)"
    R"("sender":{"name":"caller"})";

// A body of `protocol` with the header above and `payload` (",..." or empty).
inline std::string body(std::string_view protocol, std::string_view payload = {}) {
    std::string out = R"({"protocol":")";
    out += protocol;
    out += R"(",)";
    out += header_json;
    out += payload;
    out += "}";
    return out;
}

}  // namespace a2a_test

// Catch prints a result as its error text or the encoded value, and a message as its bytes
// (boost::system::result's own operator<< would need the value type to be streamable).
namespace Catch {
template <class T>
struct StringMaker<boost::system::result<T, fiskai::a2a::error>> {
    static std::string convert(const boost::system::result<T, fiskai::a2a::error>& r) {
        if (!r) return "error{" + r.error().message + "}";
        if constexpr (std::is_same_v<T, fiskai::a2a::message> || std::is_same_v<T, fiskai::a2a::block>) {
            auto text = fiskai::a2a::encode(*r);
            return text ? *text : "value{" + text.error().message + "}";
        } else if constexpr (std::is_same_v<T, std::string>) {
            return "value{" + *r + "}";
        } else {
            return "value";
        }
    }
};
template <>
struct StringMaker<fiskai::a2a::message> {
    static std::string convert(const fiskai::a2a::message& m) {
        auto text = fiskai::a2a::encode(m);
        return text ? *text : "{" + text.error().message + "}";
    }
};
}  // namespace Catch
