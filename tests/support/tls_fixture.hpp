#pragma once
// A CA and server certificates made with the openssl CLI at test time, once per test
// process: `localhost.pem` is issued for localhost and 127.0.0.1, `elsewhere.pem` for
// example.invalid only (a name mismatch on loopback).

#include <boost/asio/ssl/context.hpp>
#include <fmt/format.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <stdexcept>
#include <string>

namespace fiskai::test {

struct tls_material {
    std::filesystem::path dir;
    std::string ca_file;

    static const tls_material& get() {
        static const tls_material material = make();
        return material;
    }

    // A server context presenting the certificate issued for `name` ("localhost" or "elsewhere").
    [[nodiscard]] std::shared_ptr<boost::asio::ssl::context> server_context(const std::string& name) const {
        auto context = std::make_shared<boost::asio::ssl::context>(boost::asio::ssl::context::tls_server);
        context->use_certificate_chain_file((dir / (name + ".pem")).string());
        context->use_private_key_file((dir / (name + ".key")).string(), boost::asio::ssl::context::pem);
        return context;
    }

private:
    static void run(const std::string& command) {
        if (std::system((command + " >/dev/null 2>&1").c_str()) != 0) {
            throw std::runtime_error("openssl failed: " + command);
        }
    }

    static void issue(const std::filesystem::path& dir, const std::string& name, const std::string& san) {
        const auto base = (dir / name).string();
        const auto ext = base + ".ext";
        std::ofstream(ext) << "subjectAltName=" << san << "\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n";
        run(
            fmt::format("openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout {0}.key "
                        "-out {0}.csr -subj /CN={1}",
                        base, name));
        run(
            fmt::format("openssl x509 -req -in {0}.csr -CA {1}/ca.pem -CAkey {1}/ca.key -CAcreateserial -days 2 "
                        "-out {0}.pem -extfile {2}",
                        base, dir.string(), ext));
    }

    static tls_material make() {
        tls_material material;
        char pattern[] = "/tmp/fiskai-net-tls-XXXXXX";
        if (mkdtemp(pattern) == nullptr) throw std::runtime_error("mkdtemp failed");
        material.dir = pattern;
        static std::filesystem::path made;  // removed when the test process exits
        made = material.dir;
        std::atexit([] {
            std::error_code ignored;
            std::filesystem::remove_all(made, ignored);
        });
        const auto ca = (material.dir / "ca").string();
        run(
            fmt::format("openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout {0}.key "
                        "-out {0}.pem -days 2 -subj '/CN=fisk-ai net test CA'",
                        ca));
        issue(material.dir, "localhost", "DNS:localhost,IP:127.0.0.1");
        issue(material.dir, "elsewhere", "DNS:example.invalid");
        material.ca_file = ca + ".pem";
        return material;
    }
};

}  // namespace fiskai::test
