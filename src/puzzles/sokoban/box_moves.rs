//! Sokoban over box moves: one action takes one box to any square it can be pushed to
//! while the others stay put (a macro of pushes, as in Festival's FESS). Trees get
//! shallow and tunnels cost one step. The pushes of a move are its shortest push
//! path, so a move's cost is its push count and push-optimality survives.

use super::Direction;
use super::board::{Board, NONE};
use super::boxes::{flip, has_box};
use super::cuts::Cuts;
use super::domain::{Push, SokobanDomain, State};
use super::flood::Flood;
use crate::search::{Cost, Domain, Features, Successor};

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

/// [`SokobanDomain`]'s positions, bounds and pruning, with box moves as actions.
pub struct BoxMoveDomain {
    pushes: SokobanDomain,
    walk: RefCell<BoxWalk>,
}

impl BoxMoveDomain {
    pub fn new(pushes: SokobanDomain) -> BoxMoveDomain {
        BoxMoveDomain {
            pushes,
            walk: RefCell::default(),
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
        let walk = &mut *self.walk.borrow_mut();
        let mut pushes = Vec::new();
        for m in moves {
            if !has_box(&state.boxes, m.from) {
                return None;
            }
            region.fill(board, &state.boxes, player);
            let mut found = None;
            walk.run(board, &state.boxes, m.from, &region, |landing| {
                let hit = landing.to == m.to && landing.side == m.side;
                if hit {
                    found = Some(());
                }
                !hit
            });
            found?;
            let start = pushes.len();
            let mut node = BoxWalk::node(m.to, m.side);
            while let Some(previous) = walk.came_from(node) {
                let (square, side) = BoxWalk::unpack(previous);
                pushes.push(Push {
                    square,
                    direction: side.opposite(),
                });
                node = previous;
            }
            pushes[start..].reverse();
            flip(&mut state.boxes, m.from);
            flip(&mut state.boxes, m.to);
            player = board.neighbour(m.to, m.side);
        }
        Some(pushes)
    }
}

/// Breadth-first search over one box's positions: nodes are (box square, the side of
/// it the player stands on), edges single pushes, the other boxes fixed.
#[derive(Default)]
struct BoxWalk {
    stamp: Vec<u32>,
    generation: u32,
    /// Per node, the node it was pushed from (`u32::MAX` at the start).
    parent: Vec<u32>,
    pushes: Vec<u16>,
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

    /// Walks the box on `from` (among `boxes`), the player's area being `region`.
    /// Calls `found` for each new area the player stands in beside a new box square;
    /// it returns false to stop.
    fn run(
        &mut self,
        board: &Board,
        boxes: &[u64],
        from: u16,
        region: &Flood,
        mut found: impl FnMut(Landing) -> bool,
    ) {
        let n = board.n_squares() * 4;
        if self.stamp.len() != n || self.generation == u32::MAX {
            self.stamp = vec![0; n];
            self.parent = vec![u32::MAX; n];
            self.pushes = vec![0; n];
            self.generation = 0;
        }
        self.generation += 1;
        let generation = self.generation;
        self.queue.clear();
        for side in Direction::ALL {
            let stand = board.neighbour(from, side);
            if stand != NONE && region.reached(stand) {
                let node = Self::node(from, side);
                self.stamp[node as usize] = generation;
                self.parent[node as usize] = u32::MAX;
                self.pushes[node as usize] = 0;
                self.queue.push(node);
            }
        }
        if self.queue.is_empty() {
            return;
        }
        self.others.clear();
        self.others.extend_from_slice(boxes);
        flip(&mut self.others, from);
        // Every square the box and the player can reach lies in this one area.
        self.cuts.analyse(board, &self.others, from);
        let around = self.cuts.pieces(board, from);
        let mut next = 0;
        while next < self.queue.len() {
            let node = self.queue[next];
            next += 1;
            let (square, side) = Self::unpack(node);
            let direction = side.opposite();
            let to = board.neighbour(square, direction);
            if to == NONE
                || has_box(&self.others, to)
                || board.is_dead(to)
                || self.stamp[Self::node(to, side) as usize] == generation
            {
                continue;
            }
            // The player's area with the box on `to` is the piece `square` falls in:
            // every side of `to` in that piece is a node reached by this push.
            let piece = self.cuts.piece(board, to, square);
            let pushes = self.pushes[node as usize] + 1;
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
            };
            if !found(landing) {
                return;
            }
        }
    }
}

/// Where one walk of a box put it: on `to` with the player on side `side`, after
/// `pushes` pushes; the player's area's smallest square; and the number of areas
/// its own area becomes with the box on its start square and on `to`.
struct Landing {
    to: u16,
    side: Direction,
    pushes: u16,
    player: u16,
    areas: (u16, u16),
}

impl Domain for BoxMoveDomain {
    type State = Placed;
    type Key = State;
    type Action = BoxMove;

    fn initial_state(&self) -> Placed {
        let position = self.pushes.initial_state();
        let regions = Flood::default().count_regions(self.board(), &position.boxes);
        Placed { position, regions }
    }

    fn is_goal(&self, state: &Placed) -> bool {
        self.pushes.is_goal(&state.position)
    }

    fn key(&self, state: &Placed) -> State {
        state.position.clone()
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
                from,
                &region,
                |Landing {
                     to,
                     side,
                     pushes,
                     player,
                     areas: (around, split),
                 }| {
                    if self.pushes.poll_child(out.len()).is_err() {
                        cut_short = true;
                        return false;
                    }
                    packing |= packs(from, to);
                    let mut boxes = state.boxes.clone();
                    flip(&mut boxes, from);
                    flip(&mut boxes, to);
                    let mut child = Placed {
                        position: State {
                            boxes,
                            player,
                            bound: 0,
                        },
                        regions: placed.regions - around + split,
                    };
                    let cost = Cost::from(pushes);
                    if known(&child, cost) {
                        return true;
                    }
                    let pushes = &self.pushes;
                    let boxes = &child.position.boxes;
                    if let Some(bound) = pushes.finish(scratch, boxes, &list, (row, to)) {
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

    fn known_unsolvable(&self) -> bool {
        self.pushes.known_unsolvable()
    }

    fn admissible(&self) -> bool {
        self.pushes.admissible()
    }

    fn exhaustive(&self) -> bool {
        !self.pushes.techniques().goal_cuts
    }

    fn features(&self, state: &Placed) -> Features {
        self.pushes.features_with(&state.position, state.regions)
    }

    fn state_heap_bytes(&self) -> usize {
        self.pushes.state_heap_bytes()
    }
}
