-- Version 7: a job spec's `resources.gpusPerNode: 0` is refused now (leaving the field out
-- lets the scheduler choose the split, as 0 did), and the normalized form corrald stores
-- leaves it out too. Stored specs written before say `"gpusPerNode": 0,` (always followed
-- by cpusPerGpu, so always with its comma); dropping it keeps them readable. The pattern
-- cannot match inside a user's string: there its quotes would be escaped.
UPDATE jobs SET spec_json = REPLACE(spec_json, '"gpusPerNode": 0,', '')
  WHERE spec_json LIKE '%"gpusPerNode": 0,%';
