// parse_url and the URL policy (check_url), free of I/O: every refusal text.

#include <fiskai/net/url.hpp>

#include <catch2/catch.hpp>

using fiskai::net::check_url;
using fiskai::net::is_loopback_host;
using fiskai::net::parse_url;

TEST_CASE("parse_url: scheme, host, port, target and TLS", "[url]") {
    auto plain = parse_url("HTTP://Example.COM/v1/chat?x=1#frag");
    REQUIRE(plain.has_value());
    CHECK(plain->scheme == "http");
    CHECK(plain->host == "example.com");
    CHECK(plain->port == 80);
    CHECK(plain->target == "/v1/chat?x=1");
    CHECK_FALSE(plain->tls);
    CHECK(plain->origin() == "http://example.com:80");

    auto secure = parse_url("https://api.anthropic.com");
    REQUIRE(secure.has_value());
    CHECK(secure->port == 443);
    CHECK(secure->target == "/");
    CHECK(secure->tls);

    auto v6 = parse_url("https://[::1]:8443/x");
    REQUIRE(v6.has_value());
    CHECK(v6->host == "::1");
    CHECK(v6->host_is_ip);
    CHECK(v6->authority() == "[::1]:8443");

    auto ws = parse_url("wss://wss-primary.slack.com/link/?ticket=1", "ws wss");
    REQUIRE(ws.has_value());
    CHECK(ws->port == 443);
    CHECK(ws->tls);
    CHECK(ws->target == "/link/?ticket=1");
}

TEST_CASE("parse_url: refusals name the bad part", "[url]") {
    CHECK(parse_url("not a url").error() == "it does not start with a scheme such as https://");
    CHECK(parse_url("/relative/path").error() == "it does not start with a scheme such as https://");
    CHECK(parse_url("https://a b/").error() ==
          "it is not a well-formed URL (spaces and other special characters must be percent-encoded)");
    CHECK(parse_url("ftp://host/").error() == R"(its scheme "ftp" is not one of http https)");
    CHECK(parse_url("ws://host/").error() == R"(its scheme "ws" is not one of http https)");
    CHECK(parse_url("https:///path").error() == "it has no host");
    CHECK(parse_url("https://host:0/").error() == R"(its port "0" is not a number from 1 to 65535)");
    CHECK(parse_url("https://host:70000/").error() == R"(its port "70000" is not a number from 1 to 65535)");
}

TEST_CASE("parse_url: an authority that runs on past its host or port is refused", "[url]") {
    // Boost.URL reads the host as 127.0.0.1 and the rest as a path with no leading '/':
    // the request would go to 127.0.0.1:80, not to the host the URL seems to name.
    CHECK(parse_url("http://127.0.0.1.evil.com:18090").error() ==
          R"(its host and port "127.0.0.1" are followed by ".evil.com:18090", which is not a path starting with /)");
    CHECK(parse_url("http://127.0.0.1x:8080/").error() ==
          R"(its host and port "127.0.0.1" are followed by "x:8080/", which is not a path starting with /)");
    CHECK(parse_url("http://host:80x/").error() ==
          R"(its host and port "host:80" are followed by "x/", which is not a path starting with /)");
    CHECK(parse_url("http://127.0.0.1.nip.io:8080/v1").has_error());
    CHECK(
        check_url("http://127.0.0.1.evil.com:18090", "llm.base_url", false) ==
        R"(llm.base_url "http://127.0.0.1.evil.com:18090" is not a valid URL: its host and port "127.0.0.1" are followed by ".evil.com:18090", which is not a path starting with /; write it as https://host[:port][/path])");
    // A query straight after the authority is still fine.
    auto query = parse_url("http://127.0.0.1:8080?x=1");
    REQUIRE(query.has_value());
    CHECK(query->target == "/?x=1");
}

TEST_CASE("is_loopback_host: localhost, 127.0.0.0/8 and ::1 only", "[url]") {
    for (const auto* host : {"localhost", "LOCALHOST", "127.0.0.1", "127.1.2.3", "::1", "[::1]"}) {
        INFO(host);
        CHECK(is_loopback_host(host));
    }
    for (const auto* host : {"example.com", "128.0.0.1", "10.0.0.1", "::2", "localhost.example.com", "0.0.0.0"}) {
        INFO(host);
        CHECK_FALSE(is_loopback_host(host));
    }
}

TEST_CASE("check_url: the policy table with each text", "[url]") {
    struct row {
        const char* url;
        bool insecure_http;
        std::optional<std::string> refusal;
    };
    const std::string must_use_https =
        "must use https (http is allowed only to a loopback host, or with llm.insecure_http: true)";
    const std::vector<row> table{
        {"https://api.anthropic.com", false, std::nullopt},
        {"https://10.0.0.5:8443/v1", false, std::nullopt},
        {"http://localhost:8080/v1", false, std::nullopt},
        {"http://127.0.0.1:11434", false, std::nullopt},
        {"http://127.8.9.10", false, std::nullopt},
        {"http://[::1]:8000/", false, std::nullopt},
        {"http://gpu-box.lan:8000/v1", true, std::nullopt},
        {"http://gpu-box.lan:8000/v1", false, R"(llm.base_url "http://gpu-box.lan:8000/v1" )" + must_use_https},
        {"http://10.0.0.5/v1", false, R"(llm.base_url "http://10.0.0.5/v1" )" + must_use_https},
        {"ftp://files.example/", false, R"(llm.base_url "ftp://files.example/" )" + must_use_https},
        {"https://user:secret@api.example/", false,
         R"(llm.base_url "https://user:xxxxx@api.example/" must not contain user information)"},
        {"http://user@localhost/", false, R"(llm.base_url "http://user@localhost/" must not contain user information)"},
        {"api.example/v1", false,
         R"(llm.base_url "api.example/v1" is not a valid URL: it does not start with a scheme such as https://; write it as https://host[:port][/path])"},
        {"https://host:99999/", false,
         R"(llm.base_url "https://host:99999/" is not a valid URL: its port "99999" is not a number from 1 to 65535; write it as https://host[:port][/path])"},
    };
    for (const auto& r : table) {
        INFO(r.url << " insecure_http=" << r.insecure_http);
        CHECK(check_url(r.url, "llm.base_url", r.insecure_http) == r.refusal);
    }
}

TEST_CASE("check_url: the key is the caller's", "[url]") {
    CHECK(
        check_url("http://slack.example/api", "slack.api_url", false) ==
        R"(slack.api_url "http://slack.example/api" must use https (http is allowed only to a loopback host, or with llm.insecure_http: true))");
}
