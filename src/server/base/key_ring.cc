#include "server/base/key_ring.h"

#include <array>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <unistd.h>

#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include "core/check.h"

namespace corral::server {
namespace {

constexpr std::string_view kPrefix = "enc:v1:";
constexpr std::size_t kNonce = 12;
constexpr std::size_t kTag = 16;

std::string random_bytes(std::size_t n) {
  std::string out(n, '\0');
  CORRAL_CHECK(RAND_bytes(reinterpret_cast<unsigned char*>(out.data()), static_cast<int>(n)) == 1);
  return out;
}

std::string hex(std::string_view bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  for (const unsigned char b : bytes) {
    out += kDigits[b >> 4];
    out += kDigits[b & 0xf];
  }
  return out;
}

bool unhex(std::string_view text, std::string& out) {
  auto nibble = [](char c) {
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
  };
  if (text.size() % 2 != 0) return false;
  out.clear();
  for (std::size_t i = 0; i < text.size(); i += 2) {
    const int hi = nibble(text[i]), lo = nibble(text[i + 1]);
    if (hi < 0 || lo < 0) return false;
    out += static_cast<char>(hi * 16 + lo);
  }
  return true;
}

std::string hmac(std::string_view key, std::string_view data) {
  std::array<unsigned char, EVP_MAX_MD_SIZE> out{};
  unsigned int size = 0;
  CORRAL_CHECK(HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
                    reinterpret_cast<const unsigned char*>(data.data()), data.size(), out.data(),
                    &size) != nullptr);
  return std::string(reinterpret_cast<const char*>(out.data()), size);
}

std::string base64(std::string_view bytes) {
  std::string out(4 * ((bytes.size() + 2) / 3) + 1, '\0');
  const int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                reinterpret_cast<const unsigned char*>(bytes.data()),
                                static_cast<int>(bytes.size()));
  out.resize(static_cast<std::size_t>(n));
  return out;
}

bool unbase64(std::string_view text, std::string& out) {
  if (text.size() % 4 != 0) return false;
  out.assign(3 * text.size() / 4 + 1, '\0');
  const int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                reinterpret_cast<const unsigned char*>(text.data()),
                                static_cast<int>(text.size()));
  if (n < 0) return false;
  std::size_t size = static_cast<std::size_t>(n);
  // DecodeBlock counts the padding's zero bytes as data.
  for (std::size_t i = text.size(); i > 0 && text[i - 1] == '='; --i) --size;
  out.resize(size);
  return true;
}

core::Status data_loss(std::string m) {
  return core::Status(core::StatusCode::kDataLoss, std::move(m));
}

// AES-256-GCM under `key` (32 bytes): nonce, ciphertext, tag.
std::string aead_seal(std::string_view key, std::string_view plaintext) {
  const std::string nonce = random_bytes(kNonce);
  std::string out = nonce + std::string(plaintext.size() + kTag, '\0');
  EVP_CIPHER_CTX* ctx = EVP_CIPHER_CTX_new();
  CORRAL_CHECK(ctx != nullptr);
  int n = 0, tail = 0;
  auto* data = reinterpret_cast<unsigned char*>(out.data());
  const bool ok =
      EVP_EncryptInit_ex(ctx, EVP_aes_256_gcm(), nullptr,
                         reinterpret_cast<const unsigned char*>(key.data()),
                         reinterpret_cast<const unsigned char*>(nonce.data())) == 1 &&
      EVP_EncryptUpdate(ctx, data + kNonce, &n,
                        reinterpret_cast<const unsigned char*>(plaintext.data()),
                        static_cast<int>(plaintext.size())) == 1 &&
      EVP_EncryptFinal_ex(ctx, data + kNonce + n, &tail) == 1 &&
      EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_GET_TAG, kTag, data + kNonce + plaintext.size()) == 1;
  EVP_CIPHER_CTX_free(ctx);
  CORRAL_CHECK(ok);  // AES-GCM with a valid key cannot fail but for a broken OpenSSL
  return out;
}

// aead_seal's plaintext; nullopt when `raw` is malformed or does not authenticate.
std::optional<std::string> aead_open(std::string_view key, std::string raw) {
  if (raw.size() < kNonce + kTag) return std::nullopt;
  const std::size_t size = raw.size() - kNonce - kTag;
  std::string out(size, '\0');
  EVP_CIPHER_CTX* ctx = EVP_CIPHER_CTX_new();
  CORRAL_CHECK(ctx != nullptr);
  int n = 0, tail = 0;
  auto* data = reinterpret_cast<unsigned char*>(raw.data());
  const bool ok =
      EVP_DecryptInit_ex(ctx, EVP_aes_256_gcm(), nullptr,
                         reinterpret_cast<const unsigned char*>(key.data()), data) == 1 &&
      EVP_DecryptUpdate(ctx, reinterpret_cast<unsigned char*>(out.data()), &n, data + kNonce,
                        static_cast<int>(size)) == 1 &&
      EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_TAG, kTag, data + kNonce + size) == 1 &&
      EVP_DecryptFinal_ex(ctx, reinterpret_cast<unsigned char*>(out.data()) + n, &tail) == 1;
  EVP_CIPHER_CTX_free(ctx);
  if (!ok) return std::nullopt;
  return out;
}

}  // namespace

KeyRing::Key KeyRing::derive(std::string id, std::string_view master) {
  return Key{.id = std::move(id),
             .secrets = hmac(master, "corral secrets v1"),
             .audit = hmac(master, "corral audit anchor v1"),
             .wrap = hmac(master, "corral data key wrap v1"),
             .fingerprint = hex(hmac(master, "corral key fingerprint v1")).substr(0, 16)};
}

core::Status KeyRing::create_file(const std::string& path) {
  // Written whole under a private name, then linked into place: link() fails with
  // EEXIST like O_EXCL, and a replica that loses the race on a shared directory reads
  // the winner's complete file, never a half-written one.
  const std::string tmp = path + ".tmp." + hex(random_bytes(6));
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) {
    return core::invalid_argument("security.keyFile",
                                  "cannot create " + path + ": " + std::strerror(errno));
  }
  // A random id: keys are named in messages ("wrapped by key k3f9a…").
  const std::string line = "k" + hex(random_bytes(4)) + " " + hex(random_bytes(32)) + "\n";
  const bool ok = ::write(fd, line.data(), line.size()) == static_cast<ssize_t>(line.size()) &&
                  ::fsync(fd) == 0;
  ::close(fd);
  if (!ok) {
    ::unlink(tmp.c_str());
    return core::Status(core::StatusCode::kUnavailable, "cannot write " + path);
  }
  const int linked = ::link(tmp.c_str(), path.c_str());
  const int link_errno = errno;
  ::unlink(tmp.c_str());
  if (linked != 0) {
    if (link_errno == EEXIST) return core::Status(core::StatusCode::kAlreadyExists, path);
    return core::invalid_argument("security.keyFile",
                                  "cannot create " + path + ": " + std::strerror(link_errno));
  }
  return core::Status();
}

core::Result<KeyRing> KeyRing::from_file(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec) && !ec) return core::not_found("no key file at " + path);
  std::ifstream in(path);
  if (!in) return core::invalid_argument("security.keyFile", "cannot read " + path);
  std::vector<Key> keys;
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    std::string id, master_hex, master;
    fields >> id >> master_hex;
    if (id.empty() || id.find(':') != std::string::npos || !unhex(master_hex, master) ||
        master.size() != 32) {
      return core::invalid_argument(
          "security.keyFile", path + ":" + std::to_string(n) + ": want \"<id> <64 hex digits>\"");
    }
    keys.push_back(derive(id, master));
  }
  if (keys.empty()) return core::invalid_argument("security.keyFile", path + " holds no key");
  return KeyRing(std::move(keys));
}

KeyRing KeyRing::ephemeral() {
  KeyRing ring({derive("test", random_bytes(32))});
  ring.add_data_key("dtest", new_data_key());
  return ring;
}

std::string KeyRing::new_data_key() { return random_bytes(32); }

const std::string& KeyRing::current_id() const {
  CORRAL_CHECK(!data_keys_.empty());
  return data_keys_.back().id;
}

std::string KeyRing::describe_file_keys() const {
  std::string out;
  for (const Key& k : keys_) {
    out += (out.empty() ? "" : ", ") + k.id + " (fingerprint " + k.fingerprint + ")";
  }
  return out;
}

std::string KeyRing::fingerprint(std::string_view id) const {
  const Key* key = find_file_key(id);
  return key == nullptr ? "" : key->fingerprint;
}

std::string KeyRing::wrap(std::string_view data_key) const {
  return base64(aead_seal(keys_.front().wrap, data_key));
}

core::Result<std::string> KeyRing::unwrap(std::string_view kek_id, std::string_view wrapped) const {
  const Key* key = find_file_key(kek_id);
  if (key == nullptr) return core::not_found("key " + std::string(kek_id) + " is not in the file");
  std::string raw;
  std::optional<std::string> opened;
  if (unbase64(wrapped, raw)) opened = aead_open(key->wrap, std::move(raw));
  if (!opened || opened->size() != 32) {
    return data_loss("data key does not authenticate under key " + key->id);
  }
  return *std::move(opened);
}

void KeyRing::add_data_key(std::string id, std::string_view data_key) {
  Key key = derive(std::move(id), data_key);
  key.audit.clear();  // data keys seal secrets only; the file keys MAC the audit anchor
  data_keys_.push_back(std::move(key));
}

const KeyRing::Key* KeyRing::find_file_key(std::string_view id) const {
  for (const Key& k : keys_) {
    if (k.id == id) return &k;
  }
  return nullptr;
}

std::string KeyRing::seal(std::string_view plaintext) const {
  CORRAL_CHECK(!data_keys_.empty());
  const Key& key = data_keys_.back();
  return std::string(kPrefix) + key.id + ":" + base64(aead_seal(key.secrets, plaintext));
}

core::Result<std::string> KeyRing::open(std::string_view sealed) const {
  if (!sealed.starts_with(kPrefix)) return std::string(sealed);
  const std::string_view rest = sealed.substr(kPrefix.size());
  const auto colon = rest.find(':');
  if (colon == std::string_view::npos) return data_loss("sealed secret without a key id");
  const std::string_view id = rest.substr(0, colon);
  // A data key, or a file key for what was sealed before data keys existed.
  const Key* key = nullptr;
  for (const Key& k : data_keys_) {
    if (k.id == id) key = &k;
  }
  if (key == nullptr) key = find_file_key(id);
  if (key == nullptr) {
    return data_loss("secret sealed under key " + std::string(id) +
                     ", which neither the database's data keys nor the key file hold");
  }
  std::string raw;
  if (!unbase64(rest.substr(colon + 1), raw)) return data_loss("sealed secret is malformed");
  auto opened = aead_open(key->secrets, std::move(raw));
  if (!opened) return data_loss("sealed secret does not authenticate under key " + key->id);
  return *std::move(opened);
}

core::Result<std::string> KeyRing::audit_mac(std::string_view data, std::string_view id) const {
  const Key* key = id.empty() ? &keys_.front() : find_file_key(id);
  if (key == nullptr) {
    return core::Status(core::StatusCode::kNotFound,
                        "key " + std::string(id) + " is not in the key file");
  }
  return hex(hmac(key->audit, data));
}

}  // namespace corral::server
