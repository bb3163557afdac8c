-- Version 24: each tenant's submit-rate token bucket (issue 38), taken from in the
-- submission's own transaction, so that replicas on one database share one bucket: a
-- tenant gets its rate once, not once per replica it sends to.
CREATE TABLE submit_buckets (
  tenant TEXT PRIMARY KEY,
  tokens DOUBLE PRECISION NOT NULL,  -- as of as_of
  as_of  BIGINT NOT NULL
);
