-- Version 28: interactive sessions (issue 43, item 4). Who submitted a job: the submitting
-- token's owner, else its name ("token:<name>"); the scheduler holds each user's sessions
-- to scheduler.sessionGpusPerUser. '' for jobs submitted before this version.
ALTER TABLE jobs ADD COLUMN submitted_by TEXT NOT NULL DEFAULT '';
