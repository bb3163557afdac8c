-- Version 18: feature sets and their values (docs/features.md). A feature set version's
-- content (schema, source) is written once as JSON; values are appended, each with its
-- entity, event time and write order (id); watermarks keep, per source, the newest
-- instant up to which the source says it has delivered everything.
CREATE TABLE feature_sets (
  name TEXT NOT NULL,
  version TEXT NOT NULL,
  tenant TEXT NOT NULL,
  content TEXT NOT NULL,
  created_by TEXT NOT NULL,
  created_at BIGINT NOT NULL,
  PRIMARY KEY (name, version)
);
CREATE TABLE feature_values (
  id {{ID}},
  name TEXT NOT NULL,
  version TEXT NOT NULL,
  entity TEXT NOT NULL,
  event_time BIGINT NOT NULL,
  value_json TEXT NOT NULL,
  written_at BIGINT NOT NULL
);
CREATE INDEX feature_values_by_entity ON feature_values (name, version, entity, event_time);
CREATE TABLE feature_watermarks (
  name TEXT NOT NULL,
  version TEXT NOT NULL,
  source TEXT NOT NULL,
  watermark BIGINT NOT NULL,
  PRIMARY KEY (name, version, source)
);
