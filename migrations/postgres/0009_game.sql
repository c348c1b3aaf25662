-- 2048 jobs: the spec (`game`), the answer or game record (`game_result`), and the
-- latest answer or game so far while one runs (`progress_game`). Encoded by
-- src/jobs/store/game.rs.
ALTER TABLE jobs ADD COLUMN game TEXT;
ALTER TABLE jobs ADD COLUMN game_result TEXT;
ALTER TABLE jobs ADD COLUMN progress_game TEXT;
