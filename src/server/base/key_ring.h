// KeyRing: corrald's keys (docs/security.md). They encrypt job secrets at rest and MAC
// the audit log's anchored head, so reading or editing the database alone yields neither
// a secret nor an undetectable audit edit.
//
// Two kinds of key:
//   - The key file's keys (DATA_DIR/corrald.key unless --key-file or `security.keyFile`
//     says otherwise, mode 0600): one per line, "<id> <64 hex digits>", the first one
//     current. They never enter the database. The current one wraps the data keys and
//     MACs audit anchors; every line is tried to unwrap and to verify. Every replica of
//     one database is given the same file.
//   - Data keys: random, kept in the database wrapped under a file key (key_material.h
//     loads them). seal() uses the newest; open() takes any, and also a file key, for
//     secrets sealed before data keys existed (they are sealed again at start).
// So a key-file rotation re-wraps a few rows instead of every secret.
//
// Sealed text: "enc:v1:<key id>:<base64 of 12-byte nonce, ciphertext, 16-byte tag>",
// AES-256-GCM under a key derived from the key for that purpose alone. A wrapped data key
// is the same without the prefix, under the file key's wrapping key.
//
// Thread safety: immutable once loaded (add_data_key is for the loader only); safe for
// concurrent use.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace corral::server {

class KeyRing {
 public:
  // Reads the key file at `path`; NotFound when there is none.
  static core::Result<KeyRing> from_file(const std::string& path);
  // Writes a key file at `path` with one new random key (mode 0600); AlreadyExists when
  // there is one (of two replicas starting on one shared directory, one writes it).
  static core::Status create_file(const std::string& path);
  // One random file key and one data key that live as long as the process: for tests.
  static KeyRing ephemeral();

  // The data key seal() uses. REQUIRES: a data key was added.
  const std::string& current_id() const;
  // The key file's current key: it wraps data keys and MACs audit anchors.
  const std::string& kek_id() const { return keys_.front().id; }
  // "k1 (fingerprint f1), k2 (fingerprint f2)": every key of the file, for messages.
  std::string describe_file_keys() const;
  // 16 hex digits of an HMAC of file key `id` under a fixed label: it names the key
  // without revealing it. "" when the file does not hold `id`.
  std::string fingerprint(std::string_view id) const;

  // 32 random bytes: a new data key.
  static std::string new_data_key();
  // `data_key` wrapped under the current file key; unwrap() under file key `kek_id`
  // (NotFound when the file does not hold it, DataLoss when it does not authenticate).
  std::string wrap(std::string_view data_key) const;
  core::Result<std::string> unwrap(std::string_view kek_id, std::string_view wrapped) const;
  // Adds data key `id` (32 bytes); the last added is current. For the loader.
  void add_data_key(std::string id, std::string_view data_key);

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
    std::string secrets;      // derived, 32 bytes
    std::string audit;        // derived, 32 bytes
    std::string wrap;         // derived, 32 bytes
    std::string fingerprint;  // derived, 16 hex digits
  };
  explicit KeyRing(std::vector<Key> keys) : keys_(std::move(keys)) {}
  static Key derive(std::string id, std::string_view master);
  const Key* find_file_key(std::string_view id) const;

  std::vector<Key> keys_;       // the file's; never empty; the first is current
  std::vector<Key> data_keys_;  // the database's; the last is current
};

}  // namespace corral::server
