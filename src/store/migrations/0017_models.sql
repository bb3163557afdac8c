-- Version 17: the model registry (docs/models.md). A version's content (its run,
-- artifact, digest, schemas and gates) is written once as JSON; approvals are rows of
-- their own; an alias's state (version, canary, endpoint, gated) is replaced on each
-- move, compared-and-set on the version it moves from; every move is kept in
-- model_alias_moves with who, when, from, to, why and the gate evaluation.
CREATE TABLE model_versions (
  model_id TEXT NOT NULL,
  version TEXT NOT NULL,
  tenant TEXT NOT NULL,
  content TEXT NOT NULL,
  created_by TEXT NOT NULL,
  created_at BIGINT NOT NULL,
  PRIMARY KEY (model_id, version)
);
CREATE TABLE model_approvals (
  model_id TEXT NOT NULL,
  version TEXT NOT NULL,
  name TEXT NOT NULL,
  approved_by TEXT NOT NULL,
  reason TEXT NOT NULL,
  at BIGINT NOT NULL,
  PRIMARY KEY (model_id, version, name)
);
CREATE TABLE model_aliases (
  model_id TEXT NOT NULL,
  alias TEXT NOT NULL,
  version TEXT NOT NULL,
  state TEXT NOT NULL,
  updated_at BIGINT NOT NULL,
  PRIMARY KEY (model_id, alias)
);
CREATE TABLE model_alias_moves (
  id {{ID}},
  model_id TEXT NOT NULL,
  alias TEXT NOT NULL,
  kind TEXT NOT NULL,
  from_version TEXT NOT NULL,
  to_version TEXT NOT NULL,
  record TEXT NOT NULL,
  moved_by TEXT NOT NULL,
  at BIGINT NOT NULL
);
CREATE INDEX model_alias_moves_by_alias ON model_alias_moves (model_id, alias, id);
