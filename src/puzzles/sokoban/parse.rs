//! XSB text to a validated [`Level`], and multi-level collection files.

use super::{Level, LevelError, MAX_BOXES, MAX_COLS, MAX_ROWS};

/// Characters a board row may hold before run-length expansion.
fn is_board_char(c: char) -> bool {
    matches!(c, '#' | '@' | '+' | '$' | '*' | '.' | ' ' | '-' | '_' | '|') || c.is_ascii_digit()
}

/// Expands run-length counts (`4#` is `####`) and splits rows at `|`. Counts beyond the
/// width limit stop at it, so a huge count cannot allocate much.
fn expand_rows(text: &str) -> Result<Vec<Vec<char>>, LevelError> {
    let mut rows = Vec::new();
    for line in text.lines() {
        // A `;` line is a comment (a level's name in a collection), not a row.
        if line.trim_start().starts_with(';') {
            continue;
        }
        let mut row = Vec::new();
        let mut count: Option<usize> = None;
        for c in line.trim_end_matches('\r').chars() {
            if let Some(digit) = c.to_digit(10) {
                count = Some(
                    count
                        .unwrap_or(0)
                        .saturating_mul(10)
                        .saturating_add(digit as usize),
                );
                continue;
            }
            if c == '|' {
                if count.is_some() {
                    return Err(LevelError::DanglingCount {
                        row: rows.len() + 1,
                        col: row.len() + 1,
                    });
                }
                rows.push(std::mem::take(&mut row));
                continue;
            }
            let n = count.take().unwrap_or(1).min(MAX_COLS + 1);
            row.extend(std::iter::repeat_n(c, n));
        }
        if count.is_some() {
            return Err(LevelError::DanglingCount {
                row: rows.len() + 1,
                col: row.len() + 1,
            });
        }
        rows.push(row);
    }
    // Blank rows around the board are not part of it, nor are rows of floor alone
    // (`---`): outside the walls, they would print as blank lines that parse to a
    // smaller board (the fuzzer found this).
    let blank = |row: &Vec<char>| {
        row.iter()
            .all(|&c| c.is_whitespace() || c == '-' || c == '_')
    };
    while rows.last().is_some_and(blank) {
        rows.pop();
    }
    let leading = rows.iter().take_while(|row| blank(row)).count();
    rows.drain(..leading);
    Ok(rows)
}

impl Level {
    /// Parses one level in XSB (or run-length XSB) and validates it.
    pub fn parse(text: &str) -> Result<Level, LevelError> {
        let grid = expand_rows(text)?;
        if grid.is_empty() {
            return Err(LevelError::Empty);
        }
        let rows = grid.len();
        let cols = grid.iter().map(Vec::len).max().unwrap_or(0);
        if rows > MAX_ROWS || cols > MAX_COLS {
            return Err(LevelError::TooLarge { rows, cols });
        }
        let cells = rows * cols;
        let mut walls = vec![false; cells];
        let mut goals = vec![false; cells];
        let mut boxes = vec![false; cells];
        let mut player = None;
        for (r, row) in grid.iter().enumerate() {
            for (c, &character) in row.iter().enumerate() {
                let cell = r * cols + c;
                match character {
                    '#' => walls[cell] = true,
                    '.' => goals[cell] = true,
                    '$' => boxes[cell] = true,
                    '*' => (goals[cell], boxes[cell]) = (true, true),
                    '@' | '+' => {
                        if player.is_some() {
                            return Err(LevelError::ManyPlayers {
                                row: r + 1,
                                col: c + 1,
                            });
                        }
                        player = Some(cell);
                        goals[cell] = character == '+';
                    }
                    ' ' | '-' | '_' => {}
                    _ => {
                        return Err(LevelError::UnknownCharacter {
                            character,
                            row: r + 1,
                            col: c + 1,
                        });
                    }
                }
            }
        }
        let player = player.ok_or(LevelError::NoPlayer)?;
        let n_boxes = boxes.iter().filter(|&&b| b).count();
        let n_goals = goals.iter().filter(|&&g| g).count();
        if n_boxes == 0 {
            return Err(LevelError::NoBoxes);
        }
        if n_boxes > MAX_BOXES {
            return Err(LevelError::TooManyBoxes { boxes: n_boxes });
        }
        if n_boxes != n_goals {
            return Err(LevelError::BoxGoalMismatch {
                boxes: n_boxes,
                goals: n_goals,
            });
        }
        let level = Level {
            rows,
            cols,
            walls,
            goals,
            boxes,
            player,
        };
        level.check_closed()?;
        Ok(level)
    }

    /// With the boxes taken away, the player must not reach the edge of the grid
    /// (missing squares of short rows count as open floor).
    fn check_closed(&self) -> Result<(), LevelError> {
        let mut seen = vec![false; self.rows * self.cols];
        let mut stack = vec![self.player];
        seen[self.player] = true;
        while let Some(cell) = stack.pop() {
            let (row, col) = (cell / self.cols, cell % self.cols);
            if row == 0 || col == 0 || row + 1 == self.rows || col + 1 == self.cols {
                return Err(LevelError::Open {
                    row: row + 1,
                    col: col + 1,
                });
            }
            for direction in super::Direction::ALL {
                if let Some(next) = self.step(cell, direction)
                    && !self.walls[next]
                    && !std::mem::replace(&mut seen[next], true)
                {
                    stack.push(next);
                }
            }
        }
        Ok(())
    }
}

/// One level of a collection file, before validation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LevelText {
    /// 1-based position in the file.
    pub index: usize,
    /// A `Title:` line after the board, else the last `;` comment before it.
    pub title: Option<String>,
    pub text: String,
    /// 1-based line of the board's first row.
    pub line: usize,
}

/// Splits a collection (`.xsb`, `.sok`, `.txt`) into levels. A board row is a line of
/// board characters that holds a wall (Festival's rule); every other line is metadata.
/// A `Title:` right under a board names it; one after a blank line, or a `;` comment,
/// names the next board.
pub fn read_collection(text: &str) -> Vec<LevelText> {
    let mut levels: Vec<LevelText> = Vec::new();
    let mut pending: Option<String> = None;
    let mut in_board = false;
    // Still in the metadata block right under the last board (no blank line yet).
    let mut under_board = false;
    for (number, line) in text.lines().enumerate() {
        let line = line.trim_end_matches('\r');
        // A row without a wall (`---`) only continues a board already begun.
        let is_row = line.chars().all(is_board_char)
            && (line.contains('#') || (in_board && !line.trim().is_empty()));
        if is_row {
            if !in_board {
                levels.push(LevelText {
                    index: levels.len() + 1,
                    title: pending.take(),
                    text: String::new(),
                    line: number + 1,
                });
                in_board = true;
            }
            if let Some(level) = levels.last_mut() {
                level.text.push_str(line);
                level.text.push('\n');
            }
            continue;
        }
        under_board = (in_board || under_board) && !line.trim().is_empty();
        in_board = false;
        let trimmed = line.trim();
        if let Some(title) = trimmed.strip_prefix("Title:") {
            let title = Some(title.trim().to_string());
            match levels.last_mut() {
                Some(level) if under_board => level.title = title,
                _ => pending = title,
            }
        } else if let Some(remark) = trimmed.strip_prefix(';') {
            pending = Some(remark.trim().to_string());
        }
    }
    levels
}
