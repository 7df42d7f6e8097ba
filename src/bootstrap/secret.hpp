// The job secret: random for gshmemrun and unique ids, derived from the environment for torchrun-style starts.
#pragma once
#include <string>
#include <vector>

#include "bootstrap/bootstrap.hpp"

namespace gshmem::bootstrap {

// 16 bytes from getrandom(). Throws Error(SYSTEM) if the kernel has none to give.
Secret random_secret();
// Constant-time comparison (the time taken does not depend on where the bytes differ).
bool secret_equal(const std::uint8_t* a, const std::uint8_t* b);
std::string secret_hex(const Secret& s);
// Parses 32 hex digits. Returns false on anything else.
bool parse_secret_hex(const std::string& text, Secret& out);
// A 128-bit hash of the given strings (FNV-1a based, with a domain prefix). Not cryptographic: it makes PEs of
// one environment agree on a value; anyone who can read that environment can compute it too.
Secret derive_secret(const std::vector<std::string>& parts);

}  // namespace gshmem::bootstrap
