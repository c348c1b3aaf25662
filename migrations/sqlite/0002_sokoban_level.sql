-- Sokoban jobs keep their level as XSB text; sliding jobs keep tiles, cols and goal.
ALTER TABLE jobs ADD COLUMN level TEXT;
