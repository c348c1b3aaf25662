-- Generate jobs: the parameters (`generate`), the levels made and the counts of
-- candidates (`levels`, `generation`), and the levels made and candidates tried while
-- one runs. Encoded by src/jobs/store/generation.rs.
ALTER TABLE jobs ADD COLUMN generate TEXT;
ALTER TABLE jobs ADD COLUMN levels TEXT;
ALTER TABLE jobs ADD COLUMN generation TEXT;
ALTER TABLE jobs ADD COLUMN progress_made BIGINT;
ALTER TABLE jobs ADD COLUMN progress_tried BIGINT;
