-- How many times the job was written terminal. Exactly once is the promise (a crash, a
-- retry or a lost lease may run a search again, never end a job twice); the fault tests
-- read this column to hold the store to it.
ALTER TABLE jobs ADD COLUMN finishes INTEGER NOT NULL DEFAULT 0;
