-- Version 14: named tokens (docs/security.md). A token carries a unique name (what the
-- audit log shows as its actor), an owner, an optional expiry, its last use and its
-- revocation; rows from before get a name from their hash.
ALTER TABLE tokens ADD COLUMN name TEXT NOT NULL DEFAULT '';
ALTER TABLE tokens ADD COLUMN owner TEXT NOT NULL DEFAULT '';
ALTER TABLE tokens ADD COLUMN expires_at BIGINT NOT NULL DEFAULT 0;
ALTER TABLE tokens ADD COLUMN last_used_at BIGINT NOT NULL DEFAULT 0;
ALTER TABLE tokens ADD COLUMN revoked_at BIGINT NOT NULL DEFAULT 0;
ALTER TABLE tokens ADD COLUMN revoked_by TEXT NOT NULL DEFAULT '';
UPDATE tokens SET name = 'token-' || substr(hash, 1, 12) WHERE name = '';
CREATE UNIQUE INDEX tokens_by_name ON tokens (name);
