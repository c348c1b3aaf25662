//! Where the player can go once one more box stands on the board, for every square at
//! once: a depth-first search (Hopcroft–Tarjan articulation points) over the area
//! reachable from a start square, other boxes as walls. Putting a box on a square
//! splits that area into the pieces the square's removal leaves, which the search
//! tree names in O(1). One search per moving box replaces a flood fill per push.

use super::Direction;
use super::board::{Board, NONE};
use super::boxes::has_box;

/// One piece of the area after a square is taken: the subtree under one child of the
/// taken square in the search tree, or the rest (everything above it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Piece {
    Subtree(u16),
    Rest,
}

/// What the search keeps per square.
#[derive(Clone, Copy, Default)]
struct Visit {
    /// The search that reached the square (stale entries are from earlier searches).
    stamp: u32,
    /// Discovery index; the lowest index its subtree reaches by one back edge; the
    /// last index in its subtree.
    order: u16,
    low: u16,
    end: u16,
    parent: u16,
    /// The smallest square in its subtree.
    subtree_min: u16,
    /// The next direction to try from it while it is on the search's path.
    tried: u8,
}

#[derive(Default)]
pub struct Cuts {
    visits: Vec<Visit>,
    generation: u32,
    by_order: Vec<u16>,
    /// The area's smallest square.
    area_min: u16,
    /// By discovery index: the smallest square among the first i + 1, and among the
    /// index i and after; built on first need, which the area's smallest square,
    /// when outside the subtree asked about, mostly spares.
    prefix_min: Vec<u16>,
    suffix_min: Vec<u16>,
    /// The search's path.
    stack: Vec<u16>,
}

impl Cuts {
    /// Searches the area reachable from `start` around `walls`.
    pub fn analyse(&mut self, board: &Board, walls: &[u64], start: u16) {
        let n = board.n_squares();
        if self.visits.len() != n || self.generation == u32::MAX {
            self.visits = vec![Visit::default(); n];
            self.generation = 0;
        }
        self.generation += 1;
        self.by_order.clear();
        self.visit(start, NONE);
        self.stack.clear();
        self.stack.push(start);
        while let Some(&square) = self.stack.last() {
            let s = square as usize;
            let mut descended = false;
            while let Some(&direction) = Direction::ALL.get(usize::from(self.visits[s].tried)) {
                self.visits[s].tried += 1;
                let next = board.neighbour(square, direction);
                if next == NONE || has_box(walls, next) {
                    continue;
                }
                if !self.reached(next) {
                    self.visit(next, square);
                    self.stack.push(next);
                    descended = true;
                    break;
                }
                if next != self.visits[s].parent {
                    let back = self.visits[next as usize].order;
                    let visit = &mut self.visits[s];
                    visit.low = visit.low.min(back);
                }
            }
            if descended {
                continue;
            }
            self.stack.pop();
            let visit = &mut self.visits[s];
            visit.end = (self.by_order.len() - 1) as u16;
            let (parent, low, subtree_min) = (visit.parent, visit.low, visit.subtree_min);
            if parent != NONE {
                let up = &mut self.visits[parent as usize];
                up.low = up.low.min(low);
                up.subtree_min = up.subtree_min.min(subtree_min);
            }
        }
        self.area_min = self.visits[start as usize].subtree_min;
        self.prefix_min.clear();
        self.suffix_min.clear();
    }

    /// The smallest square outside the discovery indices `first..=last`.
    fn smallest_outside(&mut self, first: usize, last: usize) -> u16 {
        let at = usize::from(self.visits[self.area_min as usize].order);
        if at < first || at > last {
            return self.area_min;
        }
        if self.prefix_min.is_empty() {
            let running_min = |smallest: &mut u16, &square: &u16| {
                *smallest = (*smallest).min(square);
                Some(*smallest)
            };
            let prefix = self.by_order.iter().scan(NONE, running_min);
            self.prefix_min.extend(prefix);
            let suffix = self.by_order.iter().rev().scan(NONE, running_min);
            self.suffix_min.extend(suffix);
            self.suffix_min.reverse();
        }
        let before = first.checked_sub(1).map_or(NONE, |i| self.prefix_min[i]);
        let after = self.suffix_min.get(last + 1).copied().unwrap_or(NONE);
        before.min(after)
    }

    fn visit(&mut self, square: u16, parent: u16) {
        let order = self.by_order.len() as u16;
        self.visits[square as usize] = Visit {
            stamp: self.generation,
            order,
            low: order,
            end: order,
            parent,
            subtree_min: square,
            tried: 0,
        };
        self.by_order.push(square);
    }

    /// Whether the last search reached `square`.
    #[inline]
    pub fn reached(&self, square: u16) -> bool {
        self.visits[square as usize].stamp == self.generation
    }

    /// The children of `taken` in the search tree whose subtrees it cuts off.
    fn cut_children<'a>(&'a self, board: &'a Board, taken: u16) -> impl Iterator<Item = u16> + 'a {
        let order = self.visits[taken as usize].order;
        self.children(board, taken)
            .filter(move |&child| self.visits[child as usize].low >= order)
    }

    fn children<'a>(&'a self, board: &'a Board, square: u16) -> impl Iterator<Item = u16> + 'a {
        Direction::ALL.into_iter().filter_map(move |direction| {
            let next = board.neighbour(square, direction);
            (next != NONE && self.reached(next) && self.visits[next as usize].parent == square)
                .then_some(next)
        })
    }

    /// The piece that `square`, a reached neighbour of the reached square `taken`, is
    /// in once a box stands on `taken`.
    pub fn piece(&self, board: &Board, taken: u16, square: u16) -> Piece {
        let at = self.visits[square as usize].order;
        if at < self.visits[taken as usize].order {
            // Not below `taken`: an undirected search's edges join only a square's
            // ancestors and descendants.
            return Piece::Rest;
        }
        self.cut_children(board, taken)
            .find(|&child| {
                let c = child as usize;
                self.visits[c].order <= at && at <= self.visits[c].end
            })
            .map_or(Piece::Rest, Piece::Subtree)
    }

    /// The smallest square of a piece left by `taken`: the region's canonical square.
    pub fn smallest(&mut self, board: &Board, taken: u16, piece: Piece) -> u16 {
        match piece {
            Piece::Subtree(child) => self.visits[child as usize].subtree_min,
            Piece::Rest => {
                let t = taken as usize;
                let (first, last) = (
                    usize::from(self.visits[t].order),
                    usize::from(self.visits[t].end),
                );
                let outside = self.smallest_outside(first, last);
                let order = self.visits[t].order;
                self.children(board, taken)
                    .filter(|&child| self.visits[child as usize].low < order)
                    .fold(outside, |s, child| {
                        s.min(self.visits[child as usize].subtree_min)
                    })
            }
        }
    }

    /// How many separate areas the searched area becomes once a box stands on the
    /// reached square `taken` (0 when it was all of it).
    pub fn pieces(&self, board: &Board, taken: u16) -> u16 {
        let has_rest = self.visits[taken as usize].order > 0;
        self.cut_children(board, taken).count() as u16 + u16::from(has_rest)
    }
}
