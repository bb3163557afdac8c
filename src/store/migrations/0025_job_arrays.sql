-- Version 25: job arrays (issue 43). A task of an array names its array (the id of the
-- array's first task, which names itself) and its index; 0 and 0 for a job in no array.
ALTER TABLE jobs ADD COLUMN array_job BIGINT NOT NULL DEFAULT 0;
ALTER TABLE jobs ADD COLUMN array_index INTEGER NOT NULL DEFAULT 0;
CREATE INDEX jobs_by_array ON jobs (array_job, array_index);
-- Dependencies by name resolve to the tenant's latest job of that name.
CREATE INDEX jobs_by_name ON jobs (tenant, name, id);
