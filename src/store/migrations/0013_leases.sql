-- Version 13: shard leases and replicas (docs/scale-out.md). A shard's lease lapses at
-- expires_at unless its holder renews it; another replica then claims it, bumping the
-- epoch, which fences every later write of the old holder (check_epoch). Each corrald
-- replica keeps a row in `replicas` alive the same way, so replicas can count each other
-- and spread the shards among themselves.
ALTER TABLE scheduler_lease ADD COLUMN expires_at BIGINT NOT NULL DEFAULT 0;

CREATE TABLE replicas (
  name       TEXT PRIMARY KEY,
  address    TEXT NOT NULL,
  started_at BIGINT NOT NULL,
  expires_at BIGINT NOT NULL
);
