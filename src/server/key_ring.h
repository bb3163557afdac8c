// KeyRing: corrald's keys, kept outside the database (docs/security.md). They encrypt
// job secrets at rest and MAC the audit log's anchored head, so reading or editing the
// database alone yields neither a secret nor an undetectable audit edit.
//
// The key file (DATA_DIR/corrald.key unless `security.keyFile` says otherwise, mode 0600)
// holds one key per line, "<id> <64 hex digits>", the first one current: seal() and mac()
// use it, open() and verify take any key the file holds. Rotation: put a new line first
// and restart every replica; secrets sealed under an older key are sealed again under the
// new one at start (reseal_job_secrets), and the old line may go once every replica has
// restarted and the audit anchors it signed have been verified. Every replica of one
// database needs the same file. A key provider (a KMS, a vault) would be another way to
// fill a KeyRing; only from_file exists today.
//
// Sealed text: "enc:v1:<key id>:<base64 of 12-byte nonce, ciphertext, 16-byte tag>",
// AES-256-GCM under a key derived from the master key for that purpose alone.
//
// Thread safety: immutable after construction; safe for concurrent use.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace corral::server {

class KeyRing {
 public:
  // Reads `path`, or creates it (mode 0600, one new random key) when it does not exist.
  static core::Result<KeyRing> from_file(const std::string& path);
  // One random key that lives as long as the process: for tests.
  static KeyRing ephemeral();

  const std::string& current_id() const { return keys_.front().id; }

  std::string seal(std::string_view plaintext) const;
  // The plaintext of seal()'s output. Text that is not sealed (written before secrets
  // were encrypted) comes back as it is; a sealed text under an unknown key or that does
  // not authenticate is DataLoss.
  core::Result<std::string> open(std::string_view sealed) const;
  // HMAC-SHA256, in hex, of `data` under the key `id` (the current one when empty),
  // derived for the audit anchor; NotFound for a key the file does not hold.
  core::Result<std::string> audit_mac(std::string_view data, std::string_view id = "") const;

 private:
  struct Key {
    std::string id;
    std::string secrets;  // derived, 32 bytes
    std::string audit;    // derived, 32 bytes
  };
  explicit KeyRing(std::vector<Key> keys) : keys_(std::move(keys)) {}
  static Key derive(std::string id, std::string_view master);
  const Key* find(std::string_view id) const;

  std::vector<Key> keys_;  // never empty; the first is current
};

}  // namespace corral::server
