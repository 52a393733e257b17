#include <fiskai/net/url.hpp>

#include <boost/asio/ip/address.hpp>
#include <boost/url/parse.hpp>
#include <boost/url/url.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>

namespace fiskai::net {

namespace urls = boost::urls;

namespace {

std::string lower(std::string_view text) {
    std::string out(text);
    std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
    return out;
}

std::uint16_t default_port(std::string_view scheme) { return (scheme == "https" || scheme == "wss") ? 443 : 80; }

bool scheme_listed(std::string_view scheme, std::string_view schemes) {
    while (!schemes.empty()) {
        const auto space = schemes.find(' ');
        if (schemes.substr(0, space) == scheme) return true;
        if (space == std::string_view::npos) break;
        schemes.remove_prefix(space + 1);
    }
    return false;
}

// The URL with its password replaced by xxxxx (Go's url.Redacted), so a refusal can be logged.
std::string redacted(std::string_view url) {
    auto parsed = urls::parse_uri(url);
    if (!parsed || !parsed->has_password()) return std::string(url);
    urls::url copy(*parsed);
    copy.set_password("xxxxx");
    return std::string(copy.buffer());
}

using url_result = boost::system::result<parsed_url, std::string>;

url_result failure(std::string text) { return url_result(boost::system::in_place_error, std::move(text)); }

}  // namespace

std::string parsed_url::authority() const {
    if (host.find(':') != std::string::npos) return fmt::format("[{}]:{}", host, port);
    return fmt::format("{}:{}", host, port);
}

std::string parsed_url::origin() const { return fmt::format("{}://{}", scheme, authority()); }

boost::system::result<parsed_url, std::string> parse_url(std::string_view url, std::string_view schemes) {
    auto parsed = urls::parse_uri(url);
    if (!parsed) {
        // Boost.URL names the grammar rule that failed ("mismatch", "leftover"): say what a user can fix.
        if (url.find("://") == std::string_view::npos)
            return failure("it does not start with a scheme such as https://");
        return failure("it is not a well-formed URL (spaces and other special characters must be percent-encoded)");
    }
    parsed_url out;
    out.scheme = lower(parsed->scheme());
    if (!scheme_listed(out.scheme, schemes)) {
        return failure(fmt::format("its scheme \"{}\" is not one of {}", out.scheme, schemes));
    }
    out.tls = out.scheme == "https" || out.scheme == "wss";
    out.has_userinfo = parsed->has_userinfo();
    switch (parsed->host_type()) {
        case urls::host_type::ipv4:
            out.host = parsed->host_ipv4_address().to_string();
            out.host_is_ip = true;
            break;
        case urls::host_type::ipv6:
            out.host = parsed->host_ipv6_address().to_string();
            out.host_is_ip = true;
            break;
        case urls::host_type::name: out.host = lower(parsed->host_name()); break;
        default: break;
    }
    if (out.host.empty()) return failure("it has no host");
    out.port = default_port(out.scheme);
    if (parsed->has_port() && !parsed->port().empty()) {
        const auto text = parsed->port();
        unsigned value = 0;
        const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
        if (ec != std::errc{} || end != text.data() + text.size() || value == 0 || value > 65535) {
            return failure(fmt::format("its port \"{}\" is not a number from 1 to 65535", std::string_view(text)));
        }
        out.port = static_cast<std::uint16_t>(value);
    }
    // After an authority a path is empty or starts with '/' (RFC 3986 path-abempty). Boost.URL
    // 1.81 stops an IPv4 host or a port at the first character that does not fit and calls the
    // rest a path: `http://127.0.0.1.evil.com:18090` would be 127.0.0.1:80.
    if (const std::string_view path = parsed->encoded_path(); !path.empty() && path.front() != '/') {
        std::string host_port(parsed->encoded_host());
        if (parsed->has_port()) host_port += fmt::format(":{}", std::string_view(parsed->port()));
        return failure(fmt::format(
            "its host and port \"{}\" are followed by \"{}\", which is not a path starting with /", host_port, path));
    }
    // Built whole rather than with insert(0, "/"): GCC 12 at -O2 warns falsely (-Wrestrict) on that.
    const std::string_view target = parsed->encoded_target();
    out.target = (target.empty() || target.front() != '/') ? fmt::format("/{}", target) : std::string(target);
    return out;
}

bool is_loopback_host(std::string_view host) {
    if (lower(host) == "localhost") return true;
    if (host.size() > 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
    boost::system::error_code ec;
    const auto address = boost::asio::ip::make_address(std::string(host), ec);
    return !ec && address.is_loopback();
}

std::optional<std::string> check_url(std::string_view url, std::string_view key, bool insecure_http) {
    auto parsed = parse_url(url);
    if (!parsed) {
        // An absolute URL of another scheme (ftp://, ws://) gets the policy text: it names the fix.
        auto other = urls::parse_uri(url);
        if (other && !other->encoded_host().empty() && !scheme_listed(lower(other->scheme()), "http https")) {
            return fmt::format(
                "{} \"{}\" must use https (http is allowed only to a loopback host, or with llm.insecure_http: true)",
                key, redacted(url));
        }
        return fmt::format("{} \"{}\" is not a valid URL: {}; write it as https://host[:port][/path]", key,
                           redacted(url), parsed.error());
    }
    if (parsed->has_userinfo) {
        return fmt::format("{} \"{}\" must not contain user information", key, redacted(url));
    }
    if (parsed->scheme == "http" && !insecure_http && !is_loopback_host(parsed->host)) {
        return fmt::format(
            "{} \"{}\" must use https (http is allowed only to a loopback host, or with llm.insecure_http: true)", key,
            url);
    }
    return std::nullopt;
}

}  // namespace fiskai::net
