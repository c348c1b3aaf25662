//! The sliding-tile search domain and its heuristics. Each state carries its
//! heuristic's parts, updated incrementally: a move shifts one tile, so only that
//! tile's distance, its two lines' conflicts or its patterns' entries change.

use std::sync::Arc;

use super::exact::ExactTable;
use super::pdb::{Partition, PatternDb, PdbError};
use super::{Geometry, MAX_CELLS, MAX_SIDE, Move, SlidingPuzzle};
use crate::search::{Cost, Domain, Successor};

/// Patterns per lookup (normal and mirrored each get this many parts in a state).
pub const MAX_PATTERNS: usize = 4;
const NO_PATTERN: u8 = u8::MAX;

/// How states are scored.
#[derive(Clone, Debug)]
pub enum Evaluator {
    /// Tiles not on their goal cell.
    Misplaced,
    /// Sum of the tiles' Manhattan distances.
    Manhattan,
    /// Manhattan distance plus two moves per tile that must leave its row or column
    /// to let others in that line pass (Hansson, Mayer & Yung 1992).
    LinearConflict,
    /// Additive pattern databases, maxed with the diagonal-mirror lookup on square boards.
    PatternDatabase(Arc<PdbSet>),
    /// The exact distance (boards of at most 9 cells).
    Exact(Arc<ExactTable>),
}

/// A partition's tables arranged for one goal: which tile goes to which pattern slot,
/// directly and in the mirrored board.
#[derive(Debug)]
pub struct PdbSet {
    partition: Partition,
    tables: Vec<Arc<PatternDb>>,
    /// Per tile: its pattern, or `NO_PATTERN` for the blank and tiles in no pattern.
    direct: [u8; MAX_CELLS],
    /// Per tile, in the board reflected about the main diagonal; `None` when unusable.
    mirrored: Option<[u8; MAX_CELLS]>,
    /// Per pattern, the tile in each slot: directly, and in the mirrored board.
    direct_tiles: Vec<Vec<u8>>,
    mirrored_tiles: Vec<Vec<u8>>,
    /// Cell reflected about the main diagonal.
    transpose: [u8; MAX_CELLS],
}

impl PdbSet {
    /// `tables[i]` must be the database for `partition.patterns[i]`.
    pub fn new(
        geometry: Geometry,
        goal: &[u8],
        partition: Partition,
        tables: Vec<Arc<PatternDb>>,
    ) -> Result<PdbSet, PdbError> {
        let consistent = tables.len() == partition.patterns.len()
            && tables.len() <= MAX_PATTERNS
            && tables
                .iter()
                .zip(&partition.patterns)
                .all(|(t, p)| t.goal_cells() == p.as_slice() && t.geometry() == geometry);
        if !consistent {
            return Err(PdbError::BadPartition);
        }
        let mut tile_at_goal = [0u8; MAX_CELLS];
        for (cell, &tile) in goal.iter().enumerate() {
            tile_at_goal[cell] = tile;
        }
        let mut direct = [NO_PATTERN; MAX_CELLS];
        let mut mirrored = [NO_PATTERN; MAX_CELLS];
        let mut transpose = [0u8; MAX_CELLS];
        if geometry.is_square() {
            for (cell, t) in transpose.iter_mut().enumerate().take(geometry.cells()) {
                *t = geometry.transpose(cell) as u8;
            }
        }
        let mut direct_tiles = Vec::new();
        let mut mirrored_tiles = Vec::new();
        for (p, pattern) in partition.patterns.iter().enumerate() {
            direct_tiles.push(
                pattern
                    .iter()
                    .map(|&cell| tile_at_goal[cell as usize])
                    .collect(),
            );
            // In the mirrored board, the tile whose goal mirrors to `cell` plays its slot.
            mirrored_tiles.push(
                pattern
                    .iter()
                    .map(|&cell| tile_at_goal[transpose[cell as usize] as usize])
                    .collect(),
            );
            for &cell in pattern {
                direct[tile_at_goal[cell as usize] as usize] = p as u8;
                if geometry.is_square() {
                    mirrored[tile_at_goal[transpose[cell as usize] as usize] as usize] = p as u8;
                }
            }
        }
        // The mirrored lookup is a relabelled copy of the puzzle only when the blank's
        // goal stays the blank's: no pattern cell may mirror onto it.
        let blank_goal = goal.iter().position(|&t| t == 0).unwrap_or(0);
        let mirror_valid = geometry.is_square()
            && partition
                .patterns
                .iter()
                .flatten()
                .all(|&c| geometry.transpose(c as usize) != blank_goal);
        Ok(PdbSet {
            partition,
            tables,
            direct,
            mirrored: mirror_valid.then_some(mirrored),
            direct_tiles,
            mirrored_tiles,
            transpose,
        })
    }

    pub fn partition(&self) -> &Partition {
        &self.partition
    }

    fn patterns(&self) -> usize {
        self.tables.len()
    }

    /// True when the mirrored lookup is used (square board, blank goal on a fixed cell).
    pub fn mirrors(&self) -> bool {
        self.mirrored.is_some()
    }

    /// Entry of `pattern` for the tile positions `pos`, directly or mirrored.
    #[inline]
    fn entry(&self, pos: &[u8; MAX_CELLS], pattern: u8, mirror: bool) -> u8 {
        let table = &self.tables[pattern as usize];
        let mut positions = [0u8; MAX_CELLS];
        let slots = if mirror {
            &self.mirrored_tiles[pattern as usize]
        } else {
            &self.direct_tiles[pattern as usize]
        };
        for (position, &tile) in positions.iter_mut().zip(slots) {
            let cell = pos[tile as usize];
            *position = if mirror {
                self.transpose[cell as usize]
            } else {
                cell
            };
        }
        table.lookup(&positions[..slots.len()])
    }
}

/// A board position with its heuristic parts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Tiles {
    cells: [u8; MAX_CELLS],
    /// Cell of each tile (kept only for pattern databases, which look tiles up by slot).
    pos: [u8; MAX_CELLS],
    blank: u8,
    h: u16,
    /// Manhattan sum, or the misplaced count.
    distance: u16,
    /// Linear-conflict moves.
    conflicts: u16,
    /// Pattern entries: direct in `0..MAX_PATTERNS`, mirrored after.
    parts: [u8; 2 * MAX_PATTERNS],
}

impl Tiles {
    const EMPTY: Tiles = Tiles {
        cells: [0; MAX_CELLS],
        pos: [0; MAX_CELLS],
        blank: 0,
        h: 0,
        distance: 0,
        conflicts: 0,
        parts: [0; 2 * MAX_PATTERNS],
    };

    pub fn cells(&self, geometry: Geometry) -> &[u8] {
        &self.cells[..geometry.cells()]
    }
    pub fn estimate(&self) -> Cost {
        Cost::from(self.h)
    }
}

/// The sliding-tile domain for one puzzle and one evaluator.
pub struct SlidingDomain {
    geometry: Geometry,
    goal: [u8; MAX_CELLS],
    goal_cell: [u8; MAX_CELLS],
    /// `distance[tile * cells + cell]`: Manhattan distance of `tile` standing on `cell`.
    distance: Vec<u8>,
    evaluator: Evaluator,
    start: Tiles,
    solvable: bool,
}

impl SlidingDomain {
    pub fn new(puzzle: &SlidingPuzzle, evaluator: Evaluator) -> SlidingDomain {
        let geometry = puzzle.geometry();
        let cells = geometry.cells();
        let mut goal = [0u8; MAX_CELLS];
        goal[..cells].copy_from_slice(puzzle.goal());
        let mut goal_cell = [0u8; MAX_CELLS];
        for (cell, &tile) in puzzle.goal().iter().enumerate() {
            goal_cell[tile as usize] = cell as u8;
        }
        let mut distance = vec![0u8; cells * cells];
        for tile in 1..cells {
            for cell in 0..cells {
                distance[tile * cells + cell] =
                    geometry.distance(goal_cell[tile] as usize, cell) as u8;
            }
        }
        let mut domain = SlidingDomain {
            geometry,
            goal,
            goal_cell,
            distance,
            evaluator,
            start: Tiles::EMPTY,
            solvable: puzzle.is_solvable(),
        };
        domain.start = domain.score(puzzle.start());
        domain
    }

    pub fn geometry(&self) -> Geometry {
        self.geometry
    }
    pub fn evaluator(&self) -> &Evaluator {
        &self.evaluator
    }

    /// A state for `board`, every heuristic part computed from scratch.
    pub fn score(&self, board: &[u8]) -> Tiles {
        let cells_n = self.geometry.cells();
        let mut state = Tiles::EMPTY;
        state.cells[..cells_n].copy_from_slice(board);
        state.blank = board.iter().position(|&t| t == 0).unwrap_or(0) as u8;
        match &self.evaluator {
            Evaluator::Misplaced => {
                state.distance = (0..cells_n)
                    .filter(|&c| self.misplaced(board[c], c))
                    .count() as u16;
            }
            Evaluator::Manhattan | Evaluator::LinearConflict => {
                state.distance = (0..cells_n)
                    .map(|c| u16::from(self.tile_distance(board[c], c)))
                    .sum();
                if let Evaluator::LinearConflict = self.evaluator {
                    let rows: u16 = (0..self.geometry.rows)
                        .map(|r| self.row_conflicts(&state.cells, r))
                        .sum();
                    let cols: u16 = (0..self.geometry.cols)
                        .map(|c| self.col_conflicts(&state.cells, c))
                        .sum();
                    state.conflicts = rows + cols;
                }
            }
            Evaluator::PatternDatabase(set) => {
                for (cell, &tile) in board.iter().enumerate() {
                    state.pos[tile as usize] = cell as u8;
                }
                for p in 0..set.patterns() {
                    state.parts[p] = set.entry(&state.pos, p as u8, false);
                    if set.mirrors() {
                        state.parts[MAX_PATTERNS + p] = set.entry(&state.pos, p as u8, true);
                    }
                }
            }
            Evaluator::Exact(_) => {}
        }
        state.h = self.total(&state);
        state
    }

    #[inline]
    fn tile_distance(&self, tile: u8, cell: usize) -> u8 {
        self.distance[tile as usize * self.geometry.cells() + cell]
    }

    #[inline]
    fn misplaced(&self, tile: u8, cell: usize) -> bool {
        tile != 0 && self.goal_cell[tile as usize] as usize != cell
    }

    #[inline]
    fn total(&self, state: &Tiles) -> u16 {
        match &self.evaluator {
            Evaluator::Misplaced | Evaluator::Manhattan => state.distance,
            Evaluator::LinearConflict => state.distance + state.conflicts,
            Evaluator::PatternDatabase(set) => {
                let n = set.patterns();
                let direct: u16 = state.parts[..n].iter().map(|&v| u16::from(v)).sum();
                let mirrored: u16 = state.parts[MAX_PATTERNS..MAX_PATTERNS + n]
                    .iter()
                    .map(|&v| u16::from(v))
                    .sum();
                direct.max(mirrored)
            }
            Evaluator::Exact(table) => table
                .distance(&state.cells[..self.geometry.cells()])
                .map_or(u16::MAX, u16::from),
        }
    }

    /// Two moves for each tile that must leave this line: the tiles whose goal is in the
    /// line, minus the longest run already in goal order (those can stay).
    #[inline]
    fn line_conflicts(goal_positions: &[u8]) -> u16 {
        let n = goal_positions.len();
        if n < 2 {
            return 0;
        }
        let mut longest = [1u8; MAX_SIDE];
        for i in 1..n {
            for j in 0..i {
                if goal_positions[j] < goal_positions[i] && longest[j] + 1 > longest[i] {
                    longest[i] = longest[j] + 1;
                }
            }
        }
        let keep = longest[..n].iter().copied().max().unwrap_or(1) as u16;
        2 * (n as u16 - keep)
    }

    fn row_conflicts(&self, cells: &[u8; MAX_CELLS], row: usize) -> u16 {
        let cols = self.geometry.cols;
        let mut goal_cols = [0u8; MAX_SIDE];
        let mut n = 0;
        for &tile in &cells[row * cols..(row + 1) * cols] {
            let goal = self.goal_cell[tile as usize] as usize;
            if tile != 0 && goal / cols == row {
                goal_cols[n] = (goal % cols) as u8;
                n += 1;
            }
        }
        Self::line_conflicts(&goal_cols[..n])
    }

    fn col_conflicts(&self, cells: &[u8; MAX_CELLS], col: usize) -> u16 {
        let cols = self.geometry.cols;
        let mut goal_rows = [0u8; MAX_SIDE];
        let mut n = 0;
        for row in 0..self.geometry.rows {
            let tile = cells[row * cols + col];
            let goal = self.goal_cell[tile as usize] as usize;
            if tile != 0 && goal % cols == col {
                goal_rows[n] = (goal / cols) as u8;
                n += 1;
            }
        }
        Self::line_conflicts(&goal_rows[..n])
    }

    /// Updates `next` (already moved) after `tile` went from `from` to `to`.
    #[inline]
    fn rescore(
        &self,
        before: &Tiles,
        next: &mut Tiles,
        tile: u8,
        from: usize,
        to: usize,
        step: Move,
    ) {
        match &self.evaluator {
            Evaluator::Misplaced => {
                next.distance = next.distance + u16::from(self.misplaced(tile, to))
                    - u16::from(self.misplaced(tile, from));
            }
            Evaluator::Manhattan | Evaluator::LinearConflict => {
                next.distance = next.distance + u16::from(self.tile_distance(tile, to))
                    - u16::from(self.tile_distance(tile, from));
                if let Evaluator::LinearConflict = self.evaluator {
                    // A vertical move changes the tile's row; its column keeps its order.
                    let (old, new) = if matches!(step, Move::Up | Move::Down) {
                        let (a, b) = (self.geometry.row(from), self.geometry.row(to));
                        (
                            self.row_conflicts(&before.cells, a)
                                + self.row_conflicts(&before.cells, b),
                            self.row_conflicts(&next.cells, a) + self.row_conflicts(&next.cells, b),
                        )
                    } else {
                        let (a, b) = (self.geometry.col(from), self.geometry.col(to));
                        (
                            self.col_conflicts(&before.cells, a)
                                + self.col_conflicts(&before.cells, b),
                            self.col_conflicts(&next.cells, a) + self.col_conflicts(&next.cells, b),
                        )
                    };
                    next.conflicts = next.conflicts + new - old;
                }
            }
            Evaluator::PatternDatabase(set) => {
                next.pos[tile as usize] = to as u8;
                next.pos[0] = from as u8;
                let p = set.direct[tile as usize];
                if p != NO_PATTERN {
                    next.parts[p as usize] = set.entry(&next.pos, p, false);
                }
                if let Some(mirrored) = &set.mirrored {
                    let p = mirrored[tile as usize];
                    if p != NO_PATTERN {
                        next.parts[MAX_PATTERNS + p as usize] = set.entry(&next.pos, p, true);
                    }
                }
            }
            Evaluator::Exact(_) => {}
        }
        next.h = self.total(next);
    }
}

impl Domain for SlidingDomain {
    type State = Tiles;
    type Key = [u8; MAX_CELLS];
    type Action = Move;

    fn initial_state(&self) -> Tiles {
        self.start
    }

    #[inline]
    fn is_goal(&self, state: &Tiles) -> bool {
        state.cells == self.goal
    }

    fn key<'s>(&self, state: &'s Tiles) -> &'s [u8; MAX_CELLS] {
        &state.cells
    }

    #[inline]
    fn expand(&self, state: &Tiles, out: &mut Vec<Successor<Tiles, Move>>) {
        let blank = state.blank as usize;
        for step in Move::ALL {
            let Some(target) = self.geometry.neighbour(blank, step) else {
                continue;
            };
            let tile = state.cells[target];
            let mut next = *state;
            next.cells[blank] = tile;
            next.cells[target] = 0;
            next.blank = target as u8;
            // The tile moves opposite to the blank: from `target` into `blank`.
            self.rescore(state, &mut next, tile, target, blank, step);
            out.push(Successor {
                action: step,
                state: next,
                cost: 1,
            });
        }
    }

    #[inline]
    fn estimate(&self, state: &Tiles) -> Option<Cost> {
        // Only an exact table marks states that cannot reach the goal.
        (state.h != u16::MAX).then_some(Cost::from(state.h))
    }

    fn reverses(&self, earlier: Move, later: Move) -> bool {
        later == earlier.opposite()
    }

    fn known_unsolvable(&self) -> bool {
        !self.solvable
    }
}
