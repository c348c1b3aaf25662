-- Why a job ran on another heuristic than the one it would have used (its pattern
-- databases were not built yet, or are not built by this service).
ALTER TABLE jobs ADD COLUMN note TEXT;
