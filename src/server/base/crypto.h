// The server's two uses of cryptography, through OpenSSL: SHA-256 (token hashes, request
// hashes for idempotency, the audit chain) and random bearer tokens.
//
// Thread safety: free functions, safe to call concurrently.
#pragma once

#include <string>
#include <string_view>

namespace corral::server {

// Lowercase hex SHA-256 of `data`.
std::string sha256_hex(std::string_view data);

// A new bearer token: "crl_" and 64 hex characters from OpenSSL's CSPRNG.
std::string new_token();

}  // namespace corral::server
