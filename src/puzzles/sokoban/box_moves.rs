//! Sokoban over box moves: one action takes one box to any square it can be pushed to
//! while the others stay put (a macro of pushes, as in Festival's FESS). Trees get
//! shallow and tunnels cost one step. The pushes of a move are its shortest push
//! path, so a move's cost is its push count and push-optimality survives.

use super::Direction;
use super::advisors::Advisors;
use super::board::{Board, NONE};
use super::boxes::{flip, has_box};
use super::cuts::Cuts;
use super::domain::{Push, SokobanDomain, State};
use super::flood::Flood;
use super::pulls::Backward;
use crate::search::{Candidate, Cost, Domain, Features, Origin, Successor};

use std::cell::RefCell;

/// Take the box on `from` to `to`, the player ending beside it on side `side`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BoxMove {
    pub from: u16,
    pub to: u16,
    pub side: Direction,
}

/// A position, with the number of separate areas its boxes cut the floor into (a
/// FESS feature), which a box move updates from its walk at no cost; only the
/// position is the duplicate key.
#[derive(Clone, Debug)]
pub struct Placed {
    pub position: State,
    pub regions: u16,
}

impl Placed {
    /// The position once the box on `from` has walked to `landing`; its bound is left 0.
    pub(super) fn after(&self, from: u16, landing: &Landing) -> Placed {
        let mut boxes = self.position.boxes.clone();
        flip(&mut boxes, from);
        flip(&mut boxes, landing.to);
        let (around, split) = landing.areas;
        Placed {
            position: State {
                boxes,
                player: landing.player,
                bound: 0,
            },
            regions: self.regions - around + split,
        }
    }
}

/// [`SokobanDomain`]'s positions, bounds and pruning, with box moves as actions.
pub struct BoxMoveDomain {
    pub(super) pushes: SokobanDomain,
    pub(super) walk: RefCell<BoxWalk>,
    /// Set when it searches back from the goal, by pulls ([`super::pulls`]).
    backward: Option<Backward>,
    advisors: Advisors,
}

impl BoxMoveDomain {
    pub fn new(pushes: SokobanDomain) -> BoxMoveDomain {
        BoxMoveDomain {
            pushes,
            walk: RefCell::default(),
            backward: None,
            advisors: Advisors::default(),
        }
    }

    /// The same positions searched back from the goal: pulls from the goal position
    /// toward the level's start ([`super::pulls`]).
    pub fn from_goal(pushes: SokobanDomain) -> BoxMoveDomain {
        let backward = Backward::new(pushes.board());
        BoxMoveDomain {
            backward: Some(backward),
            ..BoxMoveDomain::new(pushes)
        }
    }

    pub fn board(&self) -> &Board {
        self.pushes.board()
    }

    /// The single pushes of `moves`, played from the level's start; `None` if a move
    /// cannot be played (which a correct search never produces).
    pub fn to_pushes(&self, moves: &[BoxMove]) -> Option<Vec<Push>> {
        let board = self.board();
        let mut state = self.pushes.initial_state();
        let mut player = board.start_player();
        let mut region = Flood::default();
        let mut after = Flood::default();
        let walk = &mut *self.walk.borrow_mut();
        let mut pushes = Vec::new();
        for m in moves {
            if !has_box(&state.boxes, m.from) {
                return None;
            }
            let stand = board.neighbour(m.to, m.side);
            if stand == NONE || (m.to != m.from && has_box(&state.boxes, m.to)) {
                return None;
            }
            // The move names a side of the box's last square; any push path that ends
            // with the player in that side's area plays it.
            let mut moved = state.boxes.clone();
            flip(&mut moved, m.from);
            flip(&mut moved, m.to);
            let area = after.fill(board, &moved, stand);
            region.fill(board, &state.boxes, player);
            let mut found = None;
            walk.run(
                board,
                &state.boxes,
                (m.from, Way::Push),
                |s| region.reached(s),
                |landing| {
                    let hit = landing.to == m.to && landing.player == area;
                    if hit {
                        found = Some(landing.side);
                    }
                    !hit
                },
            );
            let side = found?;
            let start = pushes.len();
            let mut node = BoxWalk::node(m.to, side);
            while let Some(previous) = walk.came_from(node) {
                let (square, side) = BoxWalk::unpack(previous);
                pushes.push(Push {
                    square,
                    direction: side.opposite(),
                });
                node = previous;
            }
            pushes[start..].reverse();
            state.boxes = moved;
            player = stand;
        }
        Some(pushes)
    }
}

/// Which way a [`BoxWalk`] moves its box.
#[derive(Clone, Copy)]
pub(super) enum Way<'a> {
    Push,
    /// Pulls, for the search back from the goal, onto squares `Backward` keeps.
    Pull(&'a Backward),
}

/// Breadth-first search over one box's positions: nodes are (box square, the side of
/// it the player stands on), edges single pushes (or pulls), the other boxes fixed.
#[derive(Default)]
pub(super) struct BoxWalk {
    stamp: Vec<u32>,
    generation: u32,
    /// Per node, the node it was pushed from (`u32::MAX` at the start).
    parent: Vec<u32>,
    pushes: Vec<u16>,
    /// Per node, the side the player stood on before the first push of its path.
    origin: Vec<Direction>,
    queue: Vec<u32>,
    others: Vec<u64>,
    cuts: Cuts,
}

impl BoxWalk {
    fn node(square: u16, side: Direction) -> u32 {
        u32::from(square) * 4 + side.index() as u32
    }

    fn unpack(node: u32) -> (u16, Direction) {
        ((node / 4) as u16, Direction::ALL[(node % 4) as usize])
    }

    fn came_from(&self, node: u32) -> Option<u32> {
        let parent = self.parent[node as usize];
        (parent != u32::MAX).then_some(parent)
    }

    /// Walks the box on `from` (among `boxes`) the `way` given, from every side the
    /// player `can_stand` on. Calls `found` for each new area the player stands in
    /// beside a new box square; it returns false to stop.
    pub(super) fn run(
        &mut self,
        board: &Board,
        boxes: &[u64],
        (from, way): (u16, Way),
        can_stand: impl Fn(u16) -> bool,
        mut found: impl FnMut(Landing) -> bool,
    ) {
        let n = board.n_squares() * 4;
        if self.stamp.len() != n || self.generation == u32::MAX {
            self.stamp = vec![0; n];
            self.parent = vec![u32::MAX; n];
            self.pushes = vec![0; n];
            self.origin = vec![Direction::Up; n];
            self.generation = 0;
        }
        self.generation += 1;
        let generation = self.generation;
        self.queue.clear();
        for side in Direction::ALL {
            let stand = board.neighbour(from, side);
            if stand != NONE && !has_box(boxes, stand) && can_stand(stand) {
                let node = Self::node(from, side);
                self.stamp[node as usize] = generation;
                self.parent[node as usize] = u32::MAX;
                self.pushes[node as usize] = 0;
                self.origin[node as usize] = side;
                self.queue.push(node);
            }
        }
        self.others.clear();
        self.others.extend_from_slice(boxes);
        flip(&mut self.others, from);
        // Most boxes of a crowded position cannot move at all: spare them the search
        // of the player's area below, the walk's dearest part.
        let moves = |&node: &u32| step(board, &self.others, Self::unpack(node), way).is_some();
        if !self.queue.iter().any(moves) {
            return;
        }
        // Every square the box and the player can reach lies in this one area.
        self.cuts.analyse(board, &self.others, from);
        let around = self.cuts.pieces(board, from);
        let mut next = 0;
        while next < self.queue.len() {
            let node = self.queue[next];
            next += 1;
            let (square, side) = Self::unpack(node);
            let Some((to, after)) = step(board, &self.others, (square, side), way) else {
                continue;
            };
            if self.stamp[Self::node(to, side) as usize] == generation {
                continue;
            }
            // The player's area with the box on `to` is the piece `after` falls in:
            // every side of `to` in that piece is a node reached by this move.
            let piece = self.cuts.piece(board, to, after);
            let pushes = self.pushes[node as usize] + 1;
            let origin = self.origin[node as usize];
            for beside in Direction::ALL {
                let stand = board.neighbour(to, beside);
                if stand != NONE
                    && self.cuts.reached(stand)
                    && self.cuts.piece(board, to, stand) == piece
                {
                    let reached = Self::node(to, beside);
                    if self.stamp[reached as usize] != generation {
                        self.stamp[reached as usize] = generation;
                        self.parent[reached as usize] = node;
                        self.pushes[reached as usize] = pushes;
                        self.origin[reached as usize] = origin;
                        self.queue.push(reached);
                    }
                }
            }
            let landing = Landing {
                to,
                side,
                pushes,
                player: self.cuts.smallest(board, to, piece),
                areas: (around, self.cuts.pieces(board, to)),
                origin,
            };
            if !found(landing) {
                return;
            }
        }
    }
}

/// One step of a box walk from node (`square`, `side`) among the boxes `others`: the
/// square the box goes to and the one the player ends on, beside it on `side` (a push
/// from the box's far side, or a pull stepping back from its near one); `None` when
/// the way is blocked or the box would land dead.
fn step(
    board: &Board,
    others: &[u64],
    (square, side): (u16, Direction),
    way: Way,
) -> Option<(u16, u16)> {
    let (to, after) = match way {
        Way::Push => {
            let to = board.neighbour(square, side.opposite());
            (to != NONE && !board.is_dead(to)).then_some((to, square))?
        }
        Way::Pull(backward) => {
            let to = board.neighbour(square, side);
            let after = board.neighbour(to, side);
            let open = after != NONE && !has_box(others, after) && !backward.is_dead(to);
            open.then_some((to, after))?
        }
    };
    (!has_box(others, to)).then_some((to, after))
}

/// Where one walk of a box put it: on `to` with the player on side `side`, after
/// `pushes` moves; the player's area's smallest square; the number of areas its own
/// area becomes with the box on its start square and on `to`; and the side the player
/// stood on at the start.
pub(super) struct Landing {
    pub to: u16,
    pub side: Direction,
    pub pushes: u16,
    pub player: u16,
    pub areas: (u16, u16),
    pub origin: Direction,
}

impl Domain for BoxMoveDomain {
    type State = Placed;
    type Key = State;
    type Action = BoxMove;

    fn initial_state(&self) -> Placed {
        if let Some(backward) = &self.backward {
            return backward.root(self.board());
        }
        let position = self.pushes.initial_state();
        let regions = Flood::default().count_regions(self.board(), &position.boxes);
        Placed { position, regions }
    }

    fn is_goal(&self, state: &Placed) -> bool {
        if let Some(backward) = &self.backward {
            return backward.is_start(&state.position);
        }
        self.pushes.is_goal(&state.position)
    }

    fn key<'s>(&self, state: &'s Placed) -> &'s State {
        &state.position
    }

    fn expand(&self, state: &Placed, out: &mut Vec<Successor<Placed, BoxMove>>) {
        self.expand_unknown(state, out, &mut |_, _| false);
    }

    fn expand_unknown(
        &self,
        placed: &Placed,
        out: &mut Vec<Successor<Placed, BoxMove>>,
        known: &mut dyn FnMut(&Placed, Cost) -> bool,
    ) {
        if let Some(backward) = &self.backward {
            return self.expand_pulls(backward, placed, out, known);
        }
        let state = &placed.position;
        let board = self.board();
        let scratch = &mut *self.pushes.scratch();
        let Some(only_corral) = self.pushes.prepare(state, scratch) else {
            return;
        };
        let walk = &mut *self.walk.borrow_mut();
        // Lent out while the walks' children are finished with the rest of `scratch`.
        let list = std::mem::take(&mut scratch.box_list);
        let region = std::mem::take(&mut scratch.region);
        // One box's walk visits up to four nodes per square, each landing a child: on
        // a big open level one expansion makes millions, so it polls per box and child.
        let walk_work = 4 * board.n_squares() as u32;
        let mut cut_short = false;
        let deepest_empty = self
            .pushes
            .techniques()
            .goal_cuts
            .then(|| board.deepest_empty_layer(|g| has_box(&state.boxes, g)))
            .flatten();
        let packs = |from: u16, to: u16| {
            !board.is_goal(from)
                && deepest_empty.is_some_and(|deepest| board.layer_of(to) >= Some(deepest))
        };
        let mut packing = false;
        let first = out.len();
        for (row, &from) in list.iter().enumerate() {
            if only_corral && !scratch.corrals.boxes().contains(&from) {
                continue;
            }
            if cut_short || self.pushes.interrupt().poll(walk_work).is_err() {
                break;
            }
            walk.run(
                board,
                &state.boxes,
                (from, Way::Push),
                |s| region.reached(s),
                |landing| {
                    if self.pushes.poll_child(out.len()).is_err() {
                        cut_short = true;
                        return false;
                    }
                    let (to, side) = (landing.to, landing.side);
                    let packs_here = packs(from, to);
                    packing |= packs_here;
                    let mut child = placed.after(from, &landing);
                    let cost = Cost::from(landing.pushes);
                    // Once a child packs, goal cuts drop every child that does not (below):
                    // it needs no bound.
                    if known(&child, cost) || (packing && !packs_here) {
                        return true;
                    }
                    let pushes = &self.pushes;
                    if let Some(bound) = pushes.finish(scratch, &child.position, &list, (row, to)) {
                        child.position.bound = bound;
                        out.push(Successor {
                            action: BoxMove { from, to, side },
                            state: child,
                            cost,
                        });
                    }
                    true
                },
            );
        }
        scratch.box_list = list;
        scratch.region = region;
        if packing {
            let mut index = 0;
            out.retain(|child| {
                index += 1;
                index <= first || packs(child.action.from, child.action.to)
            });
        }
    }

    fn estimate(&self, state: &Placed) -> Option<Cost> {
        self.pushes.estimate(&state.position)
    }

    fn advise(&self, parent: &Placed, features: &Features, children: &mut [Candidate<BoxMove>]) {
        // Going backward, packing means nothing.
        if self.backward.is_none() && self.pushes.techniques().advisors {
            let boxes = &parent.position.boxes;
            let interrupt = self.pushes.interrupt();
            self.advisors
                .advise(self.board(), interrupt, (boxes, features), children);
        }
    }

    fn known_unsolvable(&self) -> bool {
        self.pushes.known_unsolvable()
    }

    fn admissible(&self) -> bool {
        self.pushes.admissible()
    }

    fn exhaustive(&self) -> bool {
        // Running out of pulls proves nothing the forward searches need.
        self.backward.is_none() && !self.pushes.techniques().goal_cuts
    }

    fn features(&self, state: &Placed) -> Features {
        match &self.backward {
            Some(backward) => backward.features(state),
            None => self.pushes.features_with(&state.position, state.regions),
        }
    }

    fn origin(&self) -> Origin {
        match self.backward {
            Some(_) => Origin::Goal,
            None => Origin::Start,
        }
    }

    fn undo(&self, action: BoxMove) -> BoxMove {
        Backward::undo(action)
    }

    fn state_heap_bytes(&self) -> usize {
        self.pushes.state_heap_bytes()
    }
}
