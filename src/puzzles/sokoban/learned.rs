//! Learned deadlocks (Rolling Stone's pattern search, Festival's deadlock cache): what
//! the corral searches of one job find out, shared by every search of the job that
//! pushes boxes forward.
//!
//! A corral search proves a group of boxes `B` dead with the player in area `A` (its
//! flood with only `B` on the board): no sequence of pushes of `B`'s boxes, every other
//! box lifted off, ever puts them all on goals. Other boxes only block, so any position
//! whose boxes include `B`, its player standing in `A`, is dead as well. Such a
//! pattern, shrunk box by box while the proof still holds, is kept and tested against
//! every child a search makes, through the boxes it holds: a child is dead if a pattern
//! holding the box just moved lies within its boxes. A position stored before a
//! pattern was learned meets it when it is expanded, tested against every pattern.
//! Verdicts for whole corrals, dead or not, are kept too, so no search of the job
//! repeats another's corral search.

use std::collections::HashMap;

use rustc_hash::FxBuildHasher;

use super::board::Board;
use super::boxes::{BoxSet, has_box, squares};
use super::flood::Flood;

/// Corral verdicts kept before the cache starts afresh, to bound its memory.
const VERDICT_LIMIT: usize = 200_000;
/// Patterns kept at most; later proofs are still cached as verdicts.
const PATTERN_LIMIT: usize = 20_000;
/// Patterns one square's list may hold: testing a child reads the moved box's list.
const PER_SQUARE_LIMIT: usize = 256;

/// A corral position: its boxes (no others on the board) and the player's area, named
/// by its smallest square.
pub type Corral = (BoxSet, u16);

/// One job's learned deadlocks.
#[derive(Default)]
pub struct Learned {
    verdicts: HashMap<Corral, bool, FxBuildHasher>,
    /// Bitset words per square set.
    words: usize,
    /// Per pattern, its boxes then the player's area, `words` each.
    patterns: Vec<u64>,
    /// Per square, the patterns holding a box there.
    by_square: Vec<Vec<u32>>,
    /// Per square, the patterns whose first box stands there.
    by_first: Vec<Vec<u32>>,
}

impl Learned {
    /// The cached verdict for `corral`: `Some(true)` when it is dead.
    pub fn verdict(&self, corral: &Corral) -> Option<bool> {
        self.verdicts.get(corral).copied()
    }

    pub fn remember(&mut self, corral: Corral, dead: bool) {
        if self.verdicts.len() >= VERDICT_LIMIT {
            self.verdicts.clear();
        }
        self.verdicts.insert(corral, dead);
    }

    /// Keeps the pattern: `boxes` dead with the player anywhere `area` reached.
    pub fn learn(&mut self, board: &Board, boxes: &[u64], area: &Flood) {
        let n = board.n_squares();
        if self.by_square.len() != n {
            self.words = boxes.len();
            self.by_square = vec![Vec::new(); n];
            self.by_first = vec![Vec::new(); n];
        }
        let count = self.patterns.len() / (2 * self.words);
        if count >= PATTERN_LIMIT
            || squares(boxes).any(|b| self.by_square[b as usize].len() >= PER_SQUARE_LIMIT)
        {
            return;
        }
        let at = self.patterns.len();
        self.patterns.extend_from_slice(boxes);
        self.patterns.resize(at + 2 * self.words, 0);
        let reached = &mut self.patterns[at + self.words..];
        for square in (0..n as u16).filter(|&s| area.reached(s)) {
            reached[square as usize / 64] |= 1 << (square % 64);
        }
        for b in squares(boxes) {
            self.by_square[b as usize].push(count as u32);
        }
        if let Some(first) = squares(boxes).next() {
            self.by_first[first as usize].push(count as u32);
        }
    }

    /// Whether any learned pattern lies within `boxes`, the player on `player` in its
    /// area: for positions stored before the pattern was learned.
    pub fn holds(&self, boxes: &[u64], player: u16) -> bool {
        if self.by_first.is_empty() {
            return false;
        }
        squares(boxes).any(|b| {
            self.by_first[b as usize]
                .iter()
                .any(|&p| self.matches(p, boxes, player))
        })
    }

    fn matches(&self, p: u32, boxes: &[u64], player: u16) -> bool {
        let words = self.words;
        let at = p as usize * 2 * words;
        let (pattern, area) = self.patterns[at..at + 2 * words].split_at(words);
        has_box(area, player) && pattern.iter().zip(boxes).all(|(&p, &b)| p & !b == 0)
    }

    /// Whether a learned pattern holding a box on `moved` lies within `boxes`, the
    /// player on `player` in its area.
    pub fn is_dead(&self, boxes: &[u64], moved: u16, player: u16) -> bool {
        let Some(list) = self.by_square.get(moved as usize) else {
            return false;
        };
        list.iter().any(|&p| self.matches(p, boxes, player))
    }

    /// The patterns kept so far.
    pub fn patterns(&self) -> usize {
        match self.words {
            0 => 0,
            words => self.patterns.len() / (2 * words),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::boxes::{flip, words};
    use super::super::{Board, Level, SokobanDomain, State, Techniques};
    use super::*;
    use crate::search::{Domain, Successor};

    /// Two boxes seal the top-left corner (as in the corral deadlock test); a third
    /// stands beside them on the top row.
    const LEVEL: &str = "#########\n# $$   .#\n#$      #\n#   @   #\n#.     .#\n#########";

    fn at(lvl: &Level, row: usize, col: usize) -> usize {
        row * lvl.cols() + col
    }

    /// The position with boxes on `cells` and the player on `player`.
    fn position(board: &Board, cells: &[usize], player: usize) -> State {
        let mut boxes: BoxSet = smallvec::smallvec![0; words(board)];
        for &cell in cells {
            flip(&mut boxes, board.square(cell));
        }
        let player = Flood::default().fill(board, &boxes, board.square(player));
        State {
            boxes,
            player,
            bound: 0,
        }
    }

    fn children(
        domain: &SokobanDomain,
        state: &State,
    ) -> Vec<Successor<State, super::super::Push>> {
        let mut out = Vec::new();
        domain.expand(state, &mut out);
        out
    }

    /// The start's corral holds three boxes; its proof needs two, and that pattern is
    /// what is learned. Another position, its third box elsewhere, then never makes the
    /// child that seals the corner again, where a domain without the pattern does.
    #[test]
    fn a_pattern_learned_in_one_position_prunes_another_position_holding_it() {
        let lvl = Level::parse(LEVEL).expect("level");
        let domain = SokobanDomain::new(&lvl, Techniques::optimal(super::super::Bound::Matching));
        let board = domain.board().clone();
        assert!(
            children(&domain, &domain.initial_state()).is_empty(),
            "dead"
        );
        assert_eq!(domain.learned().patterns(), 1);
        let (top, side, third) = (at(&lvl, 1, 2), at(&lvl, 2, 1), at(&lvl, 1, 3));
        let learned = domain.learned();
        for cells in [[top, side, third], [top, side, at(&lvl, 3, 6)]] {
            let holding = position(&board, &cells, at(&lvl, 4, 3));
            let moved = board.square(side);
            assert!(learned.is_dead(&holding.boxes, moved, holding.player));
            // Whichever box moved last, as for a position stored before the pattern.
            assert!(learned.holds(&holding.boxes, holding.player));
        }
        // Not with one of the two boxes missing.
        let apart = position(&board, &[top, at(&lvl, 2, 2), third], at(&lvl, 3, 4));
        assert!(!learned.is_dead(&apart.boxes, board.square(top), apart.player));
        assert!(!learned.holds(&apart.boxes, apart.player));
        drop(learned);

        // The box at (2, 2) pushed left seals the corner, the third box now on (3, 3).
        let before = position(
            &board,
            &[top, at(&lvl, 2, 2), at(&lvl, 3, 3)],
            at(&lvl, 2, 3),
        );
        let sealed = position(&board, &[top, side, at(&lvl, 3, 3)], at(&lvl, 2, 2));
        let makes_sealed = |domain: &SokobanDomain| {
            children(domain, &before)
                .iter()
                .any(|child| child.state == sealed)
        };
        assert!(!makes_sealed(&domain));
        let unlearned =
            SokobanDomain::new(&lvl, Techniques::optimal(super::super::Bound::Matching));
        assert!(makes_sealed(&unlearned));
    }

    /// Patterns are on the board's squares, which are numbered from the player's start:
    /// the level drawn two rows lower and three columns further right learns the very
    /// same pattern.
    #[test]
    fn a_translated_copy_of_a_level_learns_the_same_pattern() {
        let shifted: String = std::iter::repeat_n("\n", 2)
            .chain(LEVEL.lines().flat_map(|row| ["   ", row, "\n"]))
            .collect();
        let learned = |text: &str| {
            let lvl = Level::parse(text).expect("level");
            let domain =
                SokobanDomain::new(&lvl, Techniques::optimal(super::super::Bound::Matching));
            assert!(
                children(&domain, &domain.initial_state()).is_empty(),
                "dead"
            );
            let learned = domain.learned();
            (learned.patterns(), learned.patterns.clone())
        };
        let (count, patterns) = learned(LEVEL);
        assert_eq!(count, 1);
        assert_eq!(learned(&shifted), (count, patterns));
    }

    /// A pattern holds only with the player in its area: inside the sealed corner the
    /// same boxes are no deadlock.
    #[test]
    fn a_pattern_needs_the_player_in_its_area() {
        let lvl = Level::parse(LEVEL).expect("level");
        let board = Board::new(&lvl);
        let (top, side) = (at(&lvl, 1, 2), at(&lvl, 2, 1));
        let outside = position(&board, &[top, side], at(&lvl, 3, 4));
        let mut area = Flood::default();
        area.fill(&board, &outside.boxes, outside.player);
        let mut learned = Learned::default();
        learned.learn(&board, &outside.boxes, &area);
        let inside = position(&board, &[top, side], at(&lvl, 1, 1));
        assert!(!learned.is_dead(&inside.boxes, board.square(top), inside.player));
        assert!(!learned.holds(&inside.boxes, inside.player));
        assert!(learned.is_dead(&outside.boxes, board.square(top), outside.player));
        assert!(learned.holds(&outside.boxes, outside.player));
    }
}
