// The credentials a context connects with: an nkey seed, a creds file, an inline JWT and
// seed. Their parsing and the nonce's signature as units, and the whole connect against a
// NATS server that chooses its nonces, so that the one nonce in 256 whose signature starts
// with a zero byte (which nats.c 3.4.1 drops from CONNECT) comes on the first connect.

#include <fiskai/conns/connection.hpp>

#include "temp_dir.hpp"
#include "conns_test_support.hpp"
#include "fake_nats_server.hpp"
#include "nkeys.hpp"

#include <nats/nats.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

#include <boost/json.hpp>
#include <fmt/format.h>

#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace fs = std::filesystem;
namespace json = boost::json;
using namespace fiskai::conns;

namespace {

std::string base64url(const std::array<unsigned char, 64>& bytes) {
    std::string out(4 * ((bytes.size() + 2) / 3) + 1, '\0');
    const int n =
        EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()), bytes.data(), static_cast<int>(bytes.size()));
    out.resize(static_cast<std::size_t>(n));
    while (!out.empty() && out.back() == '=') out.pop_back();
    for (auto& c : out) c = c == '+' ? '-' : c == '/' ? '_' : c;
    return out;
}

// A fixed user seed, so that the nonces below are found the same way on every run.
std::string fixed_seed() {
    unsigned char raw[32];
    for (int i = 0; i < 32; ++i) raw[i] = static_cast<unsigned char>(i * 7 + 1);
    return detail::encode_user_seed(raw);
}

// The first nonce `nonce-<i>` whose signature by `seed` does (or does not) start with zero.
std::string nonce_where(const std::string& seed, bool zero_first) {
    for (int i = 0;; ++i) {
        auto nonce = fmt::format("nonce-{}", i);
        const auto sig = detail::sign(seed, nonce);
        REQUIRE(sig);
        if (((*sig)[0] == 0) == zero_first) return nonce;
    }
}

connect_options quick() { return fiskai::test::quick_dial("credentials-test", std::chrono::milliseconds(2000)); }

using fiskai::test::temp_dir;

constexpr std::string_view test_jwt = "eyJ0eXAiOiJKV1QiLCJhbGciOiJlZDI1NTE5LW5rZXkifQ.eyJzdWIiOiJ0ZXN0In0.c2lnbmF0dXJl";

std::string decorated_creds(std::string_view jwt, std::string_view seed) {
    return fmt::format(
        "-----BEGIN NATS USER JWT-----\n{}\n------END NATS USER JWT------\n\n"
        "************************* IMPORTANT *************************\n"
        "NKEY Seed printed below can be used to sign and prove identity.\n\n"
        "-----BEGIN USER NKEY SEED-----\n{}\n------END USER NKEY SEED------\n\n"
        "*************************************************************\n",
        jwt, seed);
}

}  // namespace

TEST_CASE("the nonce's signature is Ed25519 by the user seed, as nats.c signs it", "[conns][credentials]") {
    unsigned char raw[32];
    REQUIRE(RAND_bytes(raw, sizeof raw) == 1);
    const auto seed = detail::encode_user_seed(raw);
    INFO("seed " << seed);
    REQUIRE(nats_Open(-1) == NATS_OK);  // nats_Sign needs the library's crypto set up
    for (const std::string& nonce : std::vector<std::string>{"a", "dGhlIG5vbmNl", std::string(300, 'n')}) {
        const auto ours = detail::sign(seed, nonce);
        REQUIRE(ours);
        unsigned char* theirs = nullptr;
        int length = 0;
        INFO(nats_GetLastError(nullptr));
        REQUIRE(nats_Sign(seed.c_str(), nonce.c_str(), &theirs, &length) == NATS_OK);
        CHECK(std::vector<unsigned char>(ours->begin(), ours->end()) ==
              std::vector<unsigned char>(theirs, theirs + length));
        std::free(theirs);
    }
    std::string corrupt = seed;
    corrupt[20] = corrupt[20] == 'A' ? 'B' : 'A';
    CHECK_FALSE(detail::sign(corrupt, "nonce"));
    CHECK_FALSE(detail::sign("not a seed", "nonce"));
}

TEST_CASE("a credentials file's JWT is its first fenced block, or the whole file when bare", "[conns][credentials]") {
    const auto seed = fixed_seed();
    CHECK(detail::find_user_jwt(decorated_creds(test_jwt, seed)) == std::string(test_jwt));
    CHECK(detail::find_user_seed(decorated_creds(test_jwt, seed)) == seed);
    // Windows line ends, as Go's reader accepts them.
    std::string crlf;
    for (char c : decorated_creds(test_jwt, seed)) {
        if (c == '\n') crlf += '\r';
        crlf += c;
    }
    CHECK(detail::find_user_jwt(crlf) == std::string(test_jwt));
    CHECK(detail::find_user_jwt(fmt::format("\n  {}\n", test_jwt)) == std::string(test_jwt));
    CHECK_FALSE(detail::find_user_jwt(""));
    CHECK_FALSE(detail::find_user_jwt(" \n\t\n"));
    CHECK_FALSE(detail::find_user_jwt("-----BEGIN NATS USER JWT-----\n\n------END NATS USER JWT------\n"));
}

TEST_CASE("a nonce whose signature starts with a zero byte costs one more connect, never a refusal",
          "[conns][credentials][connection]") {
    const auto seed = fixed_seed();
    const auto pub = detail::user_public_key(seed);
    REQUIRE(pub);
    const auto zero_nonce = nonce_where(seed, true);
    const auto plain_nonce = nonce_where(seed, false);
    fiskai::test::fake_nats_server server({zero_nonce, plain_nonce});
    temp_dir dir;

    nats_context ctx;
    ctx.name = "nonce";
    ctx.url = server.url();
    std::string expected_jwt;
    SECTION("an nkey seed file") {
        std::ofstream(dir.path / "user.nk") << seed << "\n";
        ctx.nkey = (dir.path / "user.nk").string();
    }
    SECTION("a creds file") {
        std::ofstream(dir.path / "user.creds") << decorated_creds(test_jwt, seed);
        ctx.creds = (dir.path / "user.creds").string();
        expected_jwt = test_jwt;
    }
    SECTION("an inline JWT and seed") {
        ctx.user_jwt = test_jwt;
        ctx.user_seed = seed;
        expected_jwt = test_jwt;
    }
    auto c = connection::dial(ctx, quick());
    CHECK(c->is_connected());
    const auto seen = server.seen();
    REQUIRE(seen.size() == 2);
    // The first connect went before CONNECT: no CONNECT without a signature ever left.
    CHECK(seen[0].nonce == zero_nonce);
    CHECK_FALSE(seen[0].connect);
    CHECK(seen[1].nonce == plain_nonce);
    REQUIRE(seen[1].connect);
    const auto& connect = *seen[1].connect;
    REQUIRE(connect.contains("sig"));
    CHECK(connect.at("sig").as_string() == base64url(*detail::sign(seed, plain_nonce)));
    if (expected_jwt.empty()) {
        CHECK(connect.at("nkey").as_string() == *pub);
    } else {
        CHECK(connect.at("jwt").as_string() == expected_jwt);
    }
}

TEST_CASE("a creds file without a JWT or a seed is refused before dialling, naming the file", "[conns][credentials]") {
    temp_dir dir;
    nats_context ctx;
    ctx.name = "creds";
    ctx.url = "nats://127.0.0.1:1";
    const auto path = (dir.path / "user.creds").string();
    ctx.creds = path;
    std::ofstream(path) << decorated_creds(test_jwt, "SUNOTASEED");
    const auto dial = [&] { (void)connection::dial(ctx, quick()); };
    auto bad_seed = fiskai::test::failure_of(dial);
    CHECK(bad_seed.code == make_error_code(errc::malformed_context));
    CHECK(bad_seed.message ==
          fmt::format("NATS context \"creds\": credentials file {} holds no valid user seed (SU...)", path));
    std::ofstream(path) << "   \n";
    auto no_jwt = fiskai::test::failure_of(dial);
    CHECK(no_jwt.code == make_error_code(errc::malformed_context));
    CHECK(no_jwt.message == fmt::format("NATS context \"creds\": credentials file {} holds no user JWT", path));
    ctx.creds = (dir.path / "missing.creds").string();
    auto missing = fiskai::test::failure_of(dial);
    CHECK(missing.code == make_error_code(errc::unreadable_file));
    CHECK(missing.message.find("missing.creds") != std::string::npos);
}
