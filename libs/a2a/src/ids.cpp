#include <fiskai/a2a/ids.hpp>

#include <openssl/rand.h>

#include <unistd.h>

#include <cstring>
#include <stdexcept>

namespace fiskai::a2a {

namespace {
constexpr char base62[] = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

// Every reply message mints an id, and one RAND_bytes call costs about as much as the rest
// of the id (OpenSSL 3 dispatches through its provider and takes its DRBG's lock each
// time). So each thread draws the bytes of 32 ids at once and hands them out in order.
// The pid is checked at every draw: a forked child refills instead of repeating its
// parent's next ids.
class random_reserve {
public:
    void take(std::uint8_t* out, std::size_t n) {
        const pid_t pid = ::getpid();
        if (pid != owner_ || used_ + n > bytes_.size()) refill(pid);
        std::memcpy(out, bytes_.data() + used_, n);
        std::memset(bytes_.data() + used_, 0, n);  // handed out once, then gone
        used_ += n;
    }

private:
    void refill(pid_t pid) {
        if (RAND_bytes(bytes_.data(), static_cast<int>(bytes_.size())) != 1) {
            throw std::runtime_error("a2a: the random number generator failed to mint an id");
        }
        owner_ = pid;
        used_ = 0;
    }

    std::array<std::uint8_t, 512> bytes_{};
    std::size_t used_ = 512;
    pid_t owner_ = 0;
};
}  // namespace

std::string make_ksuid(std::uint32_t timestamp, const std::array<std::uint8_t, 16>& payload) {
    // The 20 bytes as five big-endian 32-bit words, divided by 62 until nothing is left.
    std::array<std::uint32_t, 5> words{timestamp, 0, 0, 0, 0};
    for (std::size_t i = 0; i < 16; ++i) {
        words[1 + i / 4] = (words[1 + i / 4] << 8) | payload[i];
    }
    std::string out(ksuid_length, '0');
    std::size_t pos = ksuid_length;
    auto nonzero = [&] {
        for (auto w : words) {
            if (w != 0) return true;
        }
        return false;
    };
    while (nonzero() && pos > 0) {
        std::uint64_t remainder = 0;
        for (auto& w : words) {
            const std::uint64_t value = (remainder << 32) | w;
            w = static_cast<std::uint32_t>(value / 62);
            remainder = value % 62;
        }
        out[--pos] = base62[remainder];
    }
    return out;
}

std::uint32_t ksuid_timestamp(std::chrono::system_clock::time_point t) noexcept {
    const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(t.time_since_epoch()).count();
    return static_cast<std::uint32_t>(seconds - ksuid_epoch);
}

std::string new_id() {
    thread_local random_reserve reserve;
    std::array<std::uint8_t, 16> payload{};
    reserve.take(payload.data(), payload.size());
    return make_ksuid(ksuid_timestamp(std::chrono::system_clock::now()), payload);
}

}  // namespace fiskai::a2a
