#include "bootstrap/secret.hpp"

#include <sys/random.h>

#include <cerrno>
#include <cstring>

#include "bootstrap/net.hpp"
#include "runtime/error.hpp"

namespace gshmem::bootstrap {

Secret random_secret() {
  Secret s{};
  std::size_t got = 0;
  while (got < s.size()) {
    ssize_t n = ::getrandom(s.data() + got, s.size() - got, 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      fail(GSHMEM_ERROR_SYSTEM,
           "creating the job secret: {}. Fix: this kernel must provide getrandom() "
           "(Linux 3.17 or newer).",
           errno_text("getrandom()", errno));
    }
    got += static_cast<std::size_t>(n);
  }
  return s;
}

bool secret_equal(const std::uint8_t* a, const std::uint8_t* b) {
  volatile std::uint8_t diff = 0;
  for (int i = 0; i < 16; ++i) diff = diff | static_cast<std::uint8_t>(a[i] ^ b[i]);
  return diff == 0;
}

std::string secret_hex(const Secret& s) {
  return net::hex(s.data(), s.size());
}

bool parse_secret_hex(const std::string& text, Secret& out) {
  if (text.size() != 32) return false;
  auto val = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  for (int i = 0; i < 16; ++i) {
    int hi = val(text[2 * i]), lo = val(text[2 * i + 1]);
    if (hi < 0 || lo < 0) return false;
    out[i] = static_cast<std::uint8_t>(hi * 16 + lo);
  }
  return true;
}

Secret derive_secret(const std::vector<std::string>& parts) {
  // Two independent FNV-1a 64-bit lanes over "gshmem-env-secret-v1" and each part (with its length, so
  // ("ab","c") and ("a","bc") differ), finished with a splitmix64 mix.
  std::uint64_t h1 = 0xcbf29ce484222325ull, h2 = 0x84222325cbf29ce4ull;
  auto eat = [&](const void* data, std::size_t n) {
    const auto* p = static_cast<const std::uint8_t*>(data);
    for (std::size_t i = 0; i < n; ++i) {
      h1 = (h1 ^ p[i]) * 0x100000001b3ull;
      h2 = (h2 ^ p[i] ^ 0x5a) * 0x100000001b3ull;
    }
  };
  const char domain[] = "gshmem-env-secret-v1";
  eat(domain, sizeof domain);
  for (const auto& s : parts) {
    std::uint64_t n = s.size();
    eat(&n, sizeof n);
    eat(s.data(), s.size());
  }
  auto mix = [](std::uint64_t z) {
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  };
  std::uint64_t a = mix(h1 ^ mix(h2)), b = mix(h2 + a);
  Secret out{};
  for (int i = 0; i < 8; ++i) {
    out[i] = static_cast<std::uint8_t>(a >> (8 * i));
    out[8 + i] = static_cast<std::uint8_t>(b >> (8 * i));
  }
  return out;
}

}  // namespace gshmem::bootstrap
