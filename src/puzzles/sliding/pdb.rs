//! Additive disjoint pattern databases (Korf & Felner 2002).
//!
//! A [`PatternDb`] holds, for every placement of its pattern tiles, the fewest moves
//! *of those tiles* that bring them to their goal cells; the other tiles are
//! indistinguishable and their moves are free. Because each database counts only its
//! own tiles' moves, the values of a [`Partition`]'s disjoint patterns add up to an
//! admissible heuristic. A database depends only on the board and the pattern's goal
//! cells, not on tile labels, so one table serves every goal that puts some tiles there.
//!
//! Building is a breadth-first search over (placement, region of the blank): the blank
//! wanders freely through the non-pattern cells, so a state records which connected
//! region of free cells it is in rather than its exact cell.

use std::sync::atomic::{AtomicBool, Ordering};

use super::{Geometry, MAX_CELLS};

/// Placements stored per table at most (one byte each): beyond 2^30 a build would
/// not fit a sensible memory budget.
pub const MAX_TABLE_ENTRIES: usize = 1 << 30;
/// Pattern databases need the free-cell masks to fit in 32 bits.
pub const MAX_PDB_CELLS: usize = 32;
const UNSEEN: u8 = u8::MAX;
/// A build looks at its stop flag once per this many states: a relaxed load every few
/// thousand expansions costs nothing, and the largest builds still stop within milliseconds.
pub const STOP_CHECK_INTERVAL: usize = 4096;
/// Peak bytes a build holds per placement: the table (1), the blank regions reached (4),
/// and the two breadth-first layers (8 bytes a state; together they peak near 60 % of
/// the placements on 4×4). Measured: 5.3 GB for the 4×4 7-8 tables (518.9 M placements
/// in the 8-tile one).
pub const BUILD_BYTES_PER_ENTRY: u128 = 10;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PdbError {
    #[error("pattern databases need boards of at most {MAX_PDB_CELLS} cells; this one has {0}")]
    BoardTooLarge(usize),
    #[error(
        "a pattern of {tiles} tiles on {cells} cells needs {entries} entries, more than {MAX_TABLE_ENTRIES}"
    )]
    TableTooLarge {
        tiles: usize,
        cells: usize,
        entries: u128,
    },
    #[error("partition {name} is defined for {expected} boards, not {rows}x{cols}")]
    WrongBoard {
        name: &'static str,
        expected: &'static str,
        rows: usize,
        cols: usize,
    },
    #[error("patterns overlap or name a cell outside the board or the blank's goal cell")]
    BadPartition,
    #[error("stored table is damaged or for another pattern")]
    Damaged,
    #[error("the build was stopped")]
    Stopped,
}

/// Number of placements of `tiles` distinct tiles on `cells` cells: cells!/(cells-tiles)!.
pub fn table_entries(cells: usize, tiles: usize) -> u128 {
    (0..tiles).map(|i| (cells - i) as u128).product()
}

/// Index of a placement (a partial permutation) in mixed radix cells, cells-1, ….
#[inline]
pub fn rank(positions: &[u8], cells: usize) -> usize {
    let mut used = 0u64;
    let mut index = 0usize;
    for (slot, &position) in positions.iter().enumerate() {
        let below = (used & ((1u64 << position) - 1)).count_ones() as usize;
        index = index * (cells - slot) + position as usize - below;
        used |= 1 << position;
    }
    index
}

/// Inverse of [`rank`]: writes the placement of `out.len()` tiles with this index.
pub fn unrank(mut index: usize, cells: usize, out: &mut [u8]) {
    let tiles = out.len();
    let mut digits = [0usize; MAX_CELLS];
    for slot in (0..tiles).rev() {
        let radix = cells - slot;
        digits[slot] = index % radix;
        index /= radix;
    }
    let mut used = 0u64;
    for slot in 0..tiles {
        // The digits[slot]-th cell not yet used.
        let mut skip = digits[slot];
        let mut cell = 0;
        loop {
            if used & (1 << cell) == 0 {
                if skip == 0 {
                    break;
                }
                skip -= 1;
            }
            cell += 1;
        }
        out[slot] = cell as u8;
        used |= 1 << cell;
    }
}

/// One pattern's table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PatternDb {
    geometry: Geometry,
    /// Goal cell of each pattern tile, in slot order.
    goal_cells: Vec<u8>,
    values: Vec<u8>,
}

/// What a build reports after each breadth-first layer.
#[derive(Clone, Copy, Debug)]
pub struct BuildProgress {
    pub depth: u8,
    pub layer_states: usize,
    pub placements_filled: usize,
    pub placements_total: usize,
}

/// Bitboard helpers for flood fills over free cells.
struct Bits {
    cols: usize,
    not_first_col: u64,
    not_last_col: u64,
}

impl Bits {
    fn new(geometry: Geometry) -> Bits {
        let mut first = 0u64;
        let mut last = 0u64;
        for row in 0..geometry.rows {
            first |= 1 << (row * geometry.cols);
            last |= 1 << (row * geometry.cols + geometry.cols - 1);
        }
        Bits {
            cols: geometry.cols,
            not_first_col: !first,
            not_last_col: !last,
        }
    }

    /// Cells of `free` connected to `seed` (which must be in `free`).
    #[inline]
    fn flood(&self, seed: u64, free: u64) -> u64 {
        let mut region = seed;
        loop {
            let grown = region
                | (((region << self.cols)
                    | (region >> self.cols)
                    | ((region & self.not_last_col) << 1)
                    | ((region & self.not_first_col) >> 1))
                    & free);
            if grown == region {
                return region;
            }
            region = grown;
        }
    }
}

impl PatternDb {
    pub fn check_size(geometry: Geometry, tiles: usize) -> Result<(), PdbError> {
        let cells = geometry.cells();
        if cells > MAX_PDB_CELLS {
            return Err(PdbError::BoardTooLarge(cells));
        }
        let entries = table_entries(cells, tiles);
        if entries > MAX_TABLE_ENTRIES as u128 {
            return Err(PdbError::TableTooLarge {
                tiles,
                cells,
                entries,
            });
        }
        Ok(())
    }

    /// Memory a build of a `tiles`-tile pattern on this board holds at its peak, roughly.
    pub fn build_bytes(geometry: Geometry, tiles: usize) -> u128 {
        table_entries(geometry.cells(), tiles) * BUILD_BYTES_PER_ENTRY
    }

    /// Builds the table for tiles whose goal cells are `goal_cells` (slot order). Gives
    /// up with [`PdbError::Stopped`] soon after `stop` is set.
    pub fn build(
        geometry: Geometry,
        goal_cells: &[u8],
        mut on_layer: impl FnMut(BuildProgress),
        stop: &AtomicBool,
    ) -> Result<PatternDb, PdbError> {
        Self::check_size(geometry, goal_cells.len())?;
        let cells = geometry.cells();
        let tiles = goal_cells.len();
        let size = table_entries(cells, tiles) as usize;
        let board: u64 = if cells == 64 {
            u64::MAX
        } else {
            (1u64 << cells) - 1
        };
        let bits = Bits::new(geometry);
        let mut values = vec![UNSEEN; size];
        // Which blank cells have been reached for each placement (their whole region).
        let mut reached = vec![0u32; size];
        let mut filled = 0usize;

        let goal_index = rank(goal_cells, cells);
        let goal_occupied = goal_cells.iter().fold(0u64, |m, &c| m | 1 << c);
        let mut layer: Vec<u64> = Vec::new();
        let mut free_left = board & !goal_occupied;
        while free_left != 0 {
            let seed = free_left & free_left.wrapping_neg();
            let region = bits.flood(seed, board & !goal_occupied);
            reached[goal_index] |= region as u32;
            layer.push((goal_index as u64) << 6 | u64::from(seed.trailing_zeros()));
            free_left &= !region;
        }
        values[goal_index] = 0;
        filled += 1;

        let mut next = Vec::new();
        let mut positions = [0u8; MAX_CELLS];
        let mut depth = 0u8;
        let mut until_check = STOP_CHECK_INTERVAL;
        while !layer.is_empty() {
            on_layer(BuildProgress {
                depth,
                layer_states: layer.len(),
                placements_filled: filled,
                placements_total: size,
            });
            for &entry in &layer {
                until_check -= 1;
                if until_check == 0 {
                    until_check = STOP_CHECK_INTERVAL;
                    if stop.load(Ordering::Relaxed) {
                        return Err(PdbError::Stopped);
                    }
                }
                let index = (entry >> 6) as usize;
                let blank = (entry & 63) as u32;
                let placement = &mut positions[..tiles];
                unrank(index, cells, placement);
                let occupied = placement.iter().fold(0u64, |m, &c| m | 1 << c);
                let free = board & !occupied;
                let region = bits.flood(1 << blank, free);
                for slot in 0..tiles {
                    let from = placement[slot];
                    for step in super::Move::ALL {
                        let Some(to) = geometry.neighbour(from as usize, step) else {
                            continue;
                        };
                        if region & (1 << to) == 0 {
                            continue;
                        }
                        placement[slot] = to as u8;
                        let moved = rank(placement, cells);
                        placement[slot] = from;
                        if reached[moved] & (1 << from) != 0 {
                            continue;
                        }
                        let moved_free = (free & !(1u64 << to)) | (1u64 << from);
                        reached[moved] |= bits.flood(1 << from, moved_free) as u32;
                        if values[moved] == UNSEEN {
                            values[moved] = depth + 1;
                            filled += 1;
                        }
                        next.push((moved as u64) << 6 | u64::from(from));
                    }
                }
            }
            std::mem::swap(&mut layer, &mut next);
            next.clear();
            depth += 1;
        }
        // Every placement is reachable when some cell is free; none is left unseen.
        debug_assert!(filled == size);
        Ok(PatternDb {
            geometry,
            goal_cells: goal_cells.to_vec(),
            values,
        })
    }

    pub fn geometry(&self) -> Geometry {
        self.geometry
    }
    pub fn goal_cells(&self) -> &[u8] {
        &self.goal_cells
    }
    pub fn memory_bytes(&self) -> usize {
        self.values.len()
    }
    pub fn max_value(&self) -> u8 {
        self.values.iter().copied().max().unwrap_or(0)
    }

    /// Moves the pattern tiles at `positions` (slot order) need at least.
    #[inline]
    pub fn lookup(&self, positions: &[u8]) -> u8 {
        self.values[rank(positions, self.geometry.cells())]
    }

    /// Serialises the table, with a header naming its pattern and a checksum.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut header = vec![
            self.geometry.rows as u8,
            self.geometry.cols as u8,
            self.goal_cells.len() as u8,
        ];
        header.extend_from_slice(&self.goal_cells);
        crate::framing::frame(PDB_MAGIC, &header, &self.values)
    }

    /// Reads a table written by [`PatternDb::to_bytes`], checking it is the one wanted.
    pub fn from_bytes(
        bytes: &[u8],
        geometry: Geometry,
        goal_cells: &[u8],
    ) -> Result<PatternDb, PdbError> {
        let mut header = vec![
            geometry.rows as u8,
            geometry.cols as u8,
            goal_cells.len() as u8,
        ];
        header.extend_from_slice(goal_cells);
        let values = crate::framing::unframe(PDB_MAGIC, &header, bytes).ok_or(PdbError::Damaged)?;
        if values.len() as u128 != table_entries(geometry.cells(), goal_cells.len()) {
            return Err(PdbError::Damaged);
        }
        Ok(PatternDb {
            geometry,
            goal_cells: goal_cells.to_vec(),
            values: values.to_vec(),
        })
    }
}

const PDB_MAGIC: &[u8; 8] = b"PZLDPDB1";

/// Disjoint groups of goal cells; each group is one pattern database.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Partition {
    pub name: String,
    pub patterns: Vec<Vec<u8>>,
}

crate::named_enum! {
    /// The partitions we know how to lay out.
    pub enum PartitionKind {
        /// 4×4: top and bottom halves (7 and 8 tiles).
        SevenEight = "7-8",
        /// 4×4: the blank's row (3 tiles) and two 3×2 blocks.
        SixSixThree = "6-6-3",
        /// 5×5: four blocks of six tiles.
        SixSixSixSix = "6-6-6-6",
    }
}

impl PartitionKind {
    /// The board side this partition is laid out for.
    pub fn side(self) -> usize {
        match self {
            PartitionKind::SevenEight | PartitionKind::SixSixThree => 4,
            PartitionKind::SixSixSixSix => 5,
        }
    }
}

impl Partition {
    /// Checks `patterns` are disjoint, on the board and clear of the blank's goal cell.
    pub fn new(
        name: &str,
        geometry: Geometry,
        blank_goal: usize,
        patterns: Vec<Vec<u8>>,
    ) -> Result<Partition, PdbError> {
        let mut used = 1u64 << blank_goal;
        for &cell in patterns.iter().flatten() {
            if cell as usize >= geometry.cells() || used & (1 << cell) != 0 {
                return Err(PdbError::BadPartition);
            }
            used |= 1 << cell;
        }
        for pattern in &patterns {
            PatternDb::check_size(geometry, pattern.len())?;
        }
        Ok(Partition {
            name: name.to_string(),
            patterns,
        })
    }

    /// The standard layout of `kind` for a goal whose blank sits at `blank_goal`. The
    /// canonical layouts put the blank top-left; other corners reflect them, and a blank
    /// off the corners takes the cells in row-major chunks of the same sizes.
    pub fn standard(
        kind: PartitionKind,
        geometry: Geometry,
        blank_goal: usize,
    ) -> Result<Partition, PdbError> {
        let side = kind.side();
        if geometry.rows != side || geometry.cols != side {
            let expected = if side == 4 { "4x4" } else { "5x5" };
            return Err(PdbError::WrongBoard {
                name: kind.name(),
                expected,
                rows: geometry.rows,
                cols: geometry.cols,
            });
        }
        let canonical: Vec<Vec<(usize, usize)>> = match kind {
            PartitionKind::SevenEight => vec![
                (0..2).flat_map(|r| (0..4).map(move |c| (r, c))).collect(),
                (2..4).flat_map(|r| (0..4).map(move |c| (r, c))).collect(),
            ],
            PartitionKind::SixSixThree => vec![
                vec![(0, 1), (0, 2), (0, 3)],
                vec![(1, 0), (1, 1), (2, 0), (2, 1), (3, 0), (3, 1)],
                vec![(1, 2), (1, 3), (2, 2), (2, 3), (3, 2), (3, 3)],
            ],
            PartitionKind::SixSixSixSix => vec![
                vec![(0, 1), (0, 2), (1, 1), (1, 2), (2, 1), (2, 2)],
                vec![(0, 3), (0, 4), (1, 3), (1, 4), (2, 3), (2, 4)],
                vec![(1, 0), (2, 0), (3, 0), (4, 0), (3, 1), (4, 1)],
                vec![(3, 2), (3, 3), (3, 4), (4, 2), (4, 3), (4, 4)],
            ],
        };
        let (row, col) = (geometry.row(blank_goal), geometry.col(blank_goal));
        let last = side - 1;
        let patterns = if (row == 0 || row == last) && (col == 0 || col == last) {
            let flip_rows = row == last;
            let flip_cols = col == last;
            canonical
                .iter()
                .map(|pattern| {
                    pattern
                        .iter()
                        .map(|&(r, c)| {
                            let r = if flip_rows { last - r } else { r };
                            let c = if flip_cols { last - c } else { c };
                            (r * side + c) as u8
                        })
                        .filter(|&cell| cell as usize != blank_goal)
                        .collect()
                })
                .collect()
        } else {
            let mut cells = (0..geometry.cells() as u8).filter(|&c| c as usize != blank_goal);
            let mut sizes: Vec<usize> = canonical.iter().map(Vec::len).collect();
            // A canonical layout that counts the blank's cell in a pattern loses one there.
            if sizes.iter().sum::<usize>() == geometry.cells()
                && let Some(largest) = sizes.iter_mut().max()
            {
                *largest -= 1;
            }
            sizes
                .iter()
                .map(|&n| cells.by_ref().take(n).collect())
                .collect()
        };
        Partition::new(kind.name(), geometry, blank_goal, patterns)
    }
}
