//! Where the player can go once one more box stands on the board, for every square at
//! once: a depth-first search (Hopcroft–Tarjan articulation points) over the area
//! reachable from a start square, other boxes as walls. Putting a box on a square
//! splits that area into the pieces the square's removal leaves, which the search
//! tree names in O(1). One search per moving box replaces a flood fill per push.

use super::Direction;
use super::board::{Board, NONE};
use super::domain::has_box;

/// One piece of the area after a square is taken: the subtree under one child of the
/// taken square in the search tree, or the rest (everything above it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Piece {
    Subtree(u16),
    Rest,
}

#[derive(Default)]
pub struct Cuts {
    stamp: Vec<u32>,
    generation: u32,
    /// Per square: discovery index, lowest index reachable from its subtree by one
    /// back edge, last index in its subtree, parent, smallest square in its subtree.
    order: Vec<u16>,
    low: Vec<u16>,
    end: Vec<u16>,
    parent: Vec<u16>,
    subtree_min: Vec<u16>,
    /// By discovery index: the smallest square among the first i + 1, and among the
    /// index i and after.
    prefix_min: Vec<u16>,
    suffix_min: Vec<u16>,
    by_order: Vec<u16>,
    /// The search's path: a square and the next direction to try from it.
    stack: Vec<(u16, u8)>,
}

impl Cuts {
    /// Searches the area reachable from `start` around `walls`.
    pub fn analyse(&mut self, board: &Board, walls: &[u64], start: u16) {
        let n = board.n_squares();
        if self.stamp.len() != n || self.generation == u32::MAX {
            self.stamp = vec![0; n];
            self.order = vec![0; n];
            self.low = vec![0; n];
            self.end = vec![0; n];
            self.parent = vec![NONE; n];
            self.subtree_min = vec![0; n];
            self.generation = 0;
        }
        self.generation += 1;
        self.by_order.clear();
        self.visit(start, NONE);
        self.stack.clear();
        self.stack.push((start, 0));
        while let Some(top) = self.stack.last_mut() {
            let (square, tried) = *top;
            if let Some(&direction) = Direction::ALL.get(usize::from(tried)) {
                top.1 += 1;
                let next = board.neighbour(square, direction);
                if next == NONE || has_box(walls, next) {
                    continue;
                }
                if !self.reached(next) {
                    self.visit(next, square);
                    self.stack.push((next, 0));
                } else if next != self.parent[square as usize] {
                    let back = self.order[next as usize];
                    let low = &mut self.low[square as usize];
                    *low = (*low).min(back);
                }
                continue;
            }
            self.stack.pop();
            let s = square as usize;
            self.end[s] = (self.by_order.len() - 1) as u16;
            let parent = self.parent[s];
            if parent != NONE {
                let p = parent as usize;
                self.low[p] = self.low[p].min(self.low[s]);
                self.subtree_min[p] = self.subtree_min[p].min(self.subtree_min[s]);
            }
        }
        let len = self.by_order.len();
        self.prefix_min.clear();
        self.suffix_min.clear();
        self.suffix_min.resize(len, 0);
        let mut smallest = NONE;
        for &square in &self.by_order {
            smallest = smallest.min(square);
            self.prefix_min.push(smallest);
        }
        smallest = NONE;
        for (i, &square) in self.by_order.iter().enumerate().rev() {
            smallest = smallest.min(square);
            self.suffix_min[i] = smallest;
        }
    }

    fn visit(&mut self, square: u16, parent: u16) {
        let s = square as usize;
        let index = self.by_order.len() as u16;
        self.stamp[s] = self.generation;
        self.order[s] = index;
        self.low[s] = index;
        self.parent[s] = parent;
        self.subtree_min[s] = square;
        self.by_order.push(square);
    }

    /// Whether the last search reached `square`.
    #[inline]
    pub fn reached(&self, square: u16) -> bool {
        self.stamp[square as usize] == self.generation
    }

    /// The children of `taken` in the search tree whose subtrees it cuts off.
    fn cut_children<'a>(&'a self, board: &'a Board, taken: u16) -> impl Iterator<Item = u16> + 'a {
        let order = self.order[taken as usize];
        self.children(board, taken)
            .filter(move |&child| self.low[child as usize] >= order)
    }

    fn children<'a>(&'a self, board: &'a Board, square: u16) -> impl Iterator<Item = u16> + 'a {
        Direction::ALL.into_iter().filter_map(move |direction| {
            let next = board.neighbour(square, direction);
            (next != NONE && self.reached(next) && self.parent[next as usize] == square)
                .then_some(next)
        })
    }

    /// The piece that `square`, a reached neighbour of the reached square `taken`, is
    /// in once a box stands on `taken`.
    pub fn piece(&self, board: &Board, taken: u16, square: u16) -> Piece {
        let at = self.order[square as usize];
        if at < self.order[taken as usize] {
            // Not below `taken`: an undirected search's edges join only a square's
            // ancestors and descendants.
            return Piece::Rest;
        }
        self.cut_children(board, taken)
            .find(|&child| {
                let c = child as usize;
                self.order[c] <= at && at <= self.end[c]
            })
            .map_or(Piece::Rest, Piece::Subtree)
    }

    /// The smallest square of a piece left by `taken`: the region's canonical square.
    pub fn smallest(&self, board: &Board, taken: u16, piece: Piece) -> u16 {
        match piece {
            Piece::Subtree(child) => self.subtree_min[child as usize],
            Piece::Rest => {
                let t = taken as usize;
                let (first, last) = (usize::from(self.order[t]), usize::from(self.end[t]));
                let mut smallest = first
                    .checked_sub(1)
                    .map_or(NONE, |before| self.prefix_min[before]);
                if let Some(&after) = self.suffix_min.get(last + 1) {
                    smallest = smallest.min(after);
                }
                let order = self.order[t];
                self.children(board, taken)
                    .filter(|&child| self.low[child as usize] < order)
                    .fold(smallest, |s, child| s.min(self.subtree_min[child as usize]))
            }
        }
    }

    /// How many separate areas the searched area becomes once a box stands on the
    /// reached square `taken` (0 when it was all of it).
    pub fn pieces(&self, board: &Board, taken: u16) -> u16 {
        let has_rest = self.order[taken as usize] > 0;
        self.cut_children(board, taken).count() as u16 + u16::from(has_rest)
    }
}
