#include "server/base/crypto.h"

#include <array>
#include <cstdlib>

#include <openssl/evp.h>
#include <openssl/rand.h>

#include "core/check.h"

namespace corral::server {
namespace {

std::string hex(const unsigned char* bytes, std::size_t n) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(n * 2);
  for (std::size_t i = 0; i < n; ++i) {
    out += kDigits[bytes[i] >> 4];
    out += kDigits[bytes[i] & 0xf];
  }
  return out;
}

}  // namespace

std::string sha256_hex(std::string_view data) {
  std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
  unsigned int size = 0;
  CORRAL_CHECK(EVP_Digest(data.data(), data.size(), digest.data(), &size, EVP_sha256(), nullptr) ==
               1);
  return hex(digest.data(), size);
}

std::string new_token() {
  std::array<unsigned char, 32> bytes{};
  // Without randomness there is no safe token to give; that is not a recoverable state.
  CORRAL_CHECK(RAND_bytes(bytes.data(), static_cast<int>(bytes.size())) == 1);
  return "crl_" + hex(bytes.data(), bytes.size());
}

}  // namespace corral::server
