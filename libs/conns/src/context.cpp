#include <fiskai/conns/context.hpp>

#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <pwd.h>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

namespace fiskai::conns {

namespace {

std::string trim(std::string_view s) {
    const auto* ws = " \t\r\n\v\f";
    const auto b = s.find_first_not_of(ws);
    if (b == std::string_view::npos) return {};
    const auto e = s.find_last_not_of(ws);
    return std::string(s.substr(b, e - b + 1));
}

std::string lower(std::string_view s) {
    std::string out(s);
    std::transform(out.begin(), out.end(), out.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return out;
}

// Go's os.ExpandEnv: `$NAME` and `${NAME}`, unset variables expand to nothing.
std::string expand_env(std::string_view s) {
    std::string out;
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (s[i] != '$' || i + 1 >= s.size()) {
            out.push_back(s[i]);
            continue;
        }
        std::string name;
        std::size_t j = i + 1;
        if (s[j] == '{') {
            const auto close = s.find('}', j);
            if (close == std::string_view::npos) {  // Go drops a bad `${`; keep it readable instead
                out.append(s.substr(i));
                break;
            }
            name = std::string(s.substr(j + 1, close - j - 1));
            i = close;
        } else {
            while (j < s.size() && (std::isalnum(static_cast<unsigned char>(s[j])) || s[j] == '_')) ++j;
            if (j == i + 1) {
                out.push_back('$');
                continue;
            }
            name = std::string(s.substr(i + 1, j - i - 1));
            i = j - 1;
        }
        if (const char* v = std::getenv(name.c_str())) out.append(v);
    }
    return out;
}

std::string expand_path(std::string_view s, const context_environment& env) {
    auto out = expand_env(s);
    if (!out.empty() && out.front() == '~' && !env.home.empty()) out.replace(0, 1, env.home);
    return out;
}

bool file_exists(const std::string& path) {
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

}  // namespace

context_environment context_environment::from_process() {
    context_environment env;
    if (const char* x = std::getenv("XDG_CONFIG_HOME")) env.xdg_config_home = x;
    // The account database first, as Go's user.Current does; $HOME when it has no entry.
    long size = ::sysconf(_SC_GETPW_R_SIZE_MAX);
    std::string buf(size > 0 ? static_cast<std::size_t>(size) : 16384, '\0');
    passwd pw{};
    passwd* found = nullptr;
    if (::getpwuid_r(::getuid(), &pw, buf.data(), buf.size(), &found) == 0 && found && found->pw_dir) {
        env.home = found->pw_dir;
    }
    if (env.home.empty()) {
        if (const char* h = std::getenv("HOME")) env.home = h;
    }
    return env;
}

std::string context_environment::config_root() const {
    if (!xdg_config_home.empty()) return xdg_config_home;
    if (home.empty()) {
        throw context_error(errc::no_context_directory,
                            "cannot locate NATS contexts: the home directory is unknown; set XDG_CONFIG_HOME or HOME");
    }
    return home + "/.config";
}

std::string context_environment::context_dir() const { return config_root() + "/nats/context"; }

std::string context_environment::context_file(std::string_view name) const {
    return fmt::format("{}/{}.json", context_dir(), name);
}

std::string context_environment::selection_file() const { return config_root() + "/nats/context.txt"; }

std::string nats_context::effective_url() const { return url.empty() ? "nats://127.0.0.1:4222" : url; }

bool is_valid_context_name(std::string_view name) noexcept {
    return !name.empty() && name.find("..") == std::string_view::npos && name.find('/') == std::string_view::npos &&
           name.find('\\') == std::string_view::npos;
}

std::string selected_context(const context_environment& env) {
    std::ifstream in(env.selection_file());
    if (!in) return {};
    std::stringstream ss;
    ss << in.rdbuf();
    return trim(ss.str());
}

nats_context parse_context(std::string_view json_text, std::string_view origin, const context_environment& env) {
    boost::system::error_code ec;
    const auto doc = boost::json::parse(json_text, ec);
    if (ec)
        throw context_error(errc::malformed_context, fmt::format("parsing NATS context {}: {}", origin, ec.message()));
    if (!doc.is_object())
        throw context_error(errc::malformed_context, fmt::format("parsing NATS context {}: not a JSON object", origin));

    nats_context c;
    const auto text = [&](const boost::json::value& v, std::string_view key) -> std::string {
        if (v.is_null()) return {};
        if (!v.is_string()) {
            throw context_error(errc::malformed_context,
                                fmt::format("parsing NATS context {}: \"{}\" must be a string", origin, key));
        }
        return std::string(v.get_string());
    };
    for (const auto& [raw_key, v] : doc.get_object()) {
        const auto key = lower(raw_key);
        if (key == "url")
            c.url = text(v, key);
        else if (key == "user")
            c.user = text(v, key);
        else if (key == "password")
            c.password = text(v, key);
        else if (key == "creds")
            c.creds = expand_path(text(v, key), env);
        else if (key == "nkey")
            c.nkey = expand_path(text(v, key), env);
        else if (key == "user_jwt")
            c.user_jwt = text(v, key);
        else if (key == "user_seed")
            c.user_seed = text(v, key);
        else if (key == "token")
            c.token = text(v, key);
        else if (key == "cert")
            c.cert = expand_path(text(v, key), env);
        else if (key == "key")
            c.key = expand_path(text(v, key), env);
        else if (key == "ca")
            c.ca = expand_path(text(v, key), env);
        else if (key == "inbox_prefix")
            c.inbox_prefix = text(v, key);
        else if (key == "description")
            c.description = text(v, key);
        else if (key == "socks_proxy")
            c.socks_proxy = text(v, key);
        else if (key == "nsc")
            c.nsc = text(v, key);
        else if (key == "tls_first") {
            if (!v.is_bool() && !v.is_null()) {
                throw context_error(errc::malformed_context,
                                    fmt::format("parsing NATS context {}: \"tls_first\" must be a boolean", origin));
            }
            c.tls_first = v.is_bool() && v.get_bool();
        }
        // Everything else (name, color_scheme, jetstream_domain, windows_* ...) is not used
        // by a core connection, and unknown keys are ignored as the CLI ignores them.
    }
    return c;
}

nats_context load_context(std::string_view requested, const context_environment& env) {
    std::string name = trim(requested);
    if (name.empty()) name = selected_context(env);
    if (name.empty()) return {};  // nothing selected: the default context

    if (!is_valid_context_name(name)) throw context_error(errc::invalid_context_name, "invalid context name " + name);
    const auto path = env.context_file(name);
    if (!file_exists(path)) {
        throw context_error(
            errc::context_not_found,
            fmt::format(
                "unknown context \"{}\": {} does not exist; create it with `nats context add {} --server <url>` or set "
                "nats_context (or --context) to an existing context in {}",
                name, path, name, env.context_dir()));
    }
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        throw context_error(errc::unreadable_file,
                            fmt::format("reading NATS context \"{}\": open {}: {}", name, path, std::strerror(errno)));
    }
    std::stringstream ss;
    ss << in.rdbuf();
    auto c = parse_context(ss.str(), path, env);
    c.name = name;
    c.path = path;
    return c;
}

}  // namespace fiskai::conns
