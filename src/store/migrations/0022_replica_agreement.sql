-- Version 22: what every corrald replica on one database must agree on
-- (docs/scale-out.md, docs/security.md).
--
-- data_keys: the keys that seal job secrets, kept here wrapped (AES-256-GCM) under a
-- key-encryption key that is never in the database: the first line of each replica's
-- key file. kek_fingerprint (an HMAC of that key under a fixed label, revealing nothing
-- of it) lets a replica given another file say so by name at start. The first replica
-- on a fresh database makes data key `d1`.
CREATE TABLE data_keys (
  id              TEXT PRIMARY KEY,
  kek_id          TEXT NOT NULL,
  kek_fingerprint TEXT NOT NULL,
  wrapped         TEXT NOT NULL,
  created_at      BIGINT NOT NULL
);

-- sched_config: the fingerprint of the scheduling config (the `scheduler` and `shards`
-- sections) the replicas schedule under. A replica whose own differs takes no lease.
-- Each replica's row says which config it runs, so the stored one is replaced only when
-- no other live replica runs it (a rolling config change).
CREATE TABLE sched_config (
  singleton   INTEGER PRIMARY KEY CHECK (singleton = 1),
  fingerprint TEXT NOT NULL,
  summary     TEXT NOT NULL,
  set_by      TEXT NOT NULL,
  set_at      BIGINT NOT NULL
);
ALTER TABLE replicas ADD COLUMN config_fingerprint TEXT NOT NULL DEFAULT '';
