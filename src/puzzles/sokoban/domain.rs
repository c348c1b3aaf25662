//! The search domain: one action is one box push; the player's walk in between is left
//! out and filled in by [`super::plan`]. The player is stored as the smallest square
//! of its reachable region, so states that differ only in where the player stands
//! inside one region are one state.

use std::cell::{OnceCell, RefCell};
use std::rc::Rc;

use smallvec::smallvec;

use super::board::{Board, NONE, UNREACHABLE};
use super::boxes::{BoxSet, INLINE_WORDS, flip, has_box, squares, words};
use super::corral::{CorralTests, Verdict};
use super::deadlock::freeze_deadlock;
use super::hotspots::Hotspots;
use super::learned::Learned;
use super::matching::{FORBIDDEN, Hungarian};
use super::scratch::{Base, Scratch};
use super::{Direction, Level};
use crate::search::{Cost, Domain, Features, Interrupt, Successor};

/// A position: the boxes as a bitset over the board's squares, and the normalised
/// player. It is also the duplicate key, a real key, not a hash of one: equality and
/// hashing look at the boxes and the player only, as the rest is derived from them.
#[derive(Clone, Debug)]
pub struct State {
    /// Inline up to 192 squares ([`INLINE_WORDS`]), so most states own no heap memory.
    pub boxes: BoxSet,
    pub player: u16,
    /// The estimate, computed once when the state is generated: a push moves one box,
    /// so the matching is repaired in O(n²) from the parent's instead of redone. It is
    /// the lower bound, plus the packing penalty when that is on.
    /// `Cost::MAX` marks a start position without one (a dead end).
    pub bound: Cost,
}

impl PartialEq for State {
    fn eq(&self, other: &State) -> bool {
        self.player == other.player && self.boxes == other.boxes
    }
}

impl Eq for State {}

impl std::hash::Hash for State {
    fn hash<H: std::hash::Hasher>(&self, hasher: &mut H) {
        self.boxes.hash(hasher);
        self.player.hash(hasher);
    }
}

/// Push the box on `square` one step in `direction`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Push {
    pub square: u16,
    pub direction: Direction,
}

/// Which enhancements a search uses: the defaults are all on, packing off (it makes
/// the estimate inadmissible); the switches exist to measure what each one buys.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Techniques {
    pub bound: Bound,
    pub freeze_deadlocks: bool,
    pub pi_corrals: bool,
    /// Prune positions whose corral a small search of its own proves dead.
    pub corral_deadlocks: bool,
    /// Keep what those searches prove as patterns and prune every child holding one
    /// ([`super::Learned`]; needs `corral_deadlocks`).
    pub learned_deadlocks: bool,
    /// Pushes added to the estimate per goal filled while a deeper goal is still empty
    /// ([`Board::packing_faults`]); 0 is off. Guidance into goal rooms for `any`.
    pub packing_penalty: Cost,
    /// Search whole box moves ([`super::BoxMoveDomain`]) instead of single pushes.
    pub box_moves: bool,
    /// Count the [`Hotspots`] among the boxes as a feature (for the feature-space
    /// search).
    pub hotspots: bool,
    /// Over box moves: when a box can be taken onto a goal in packing order, try only
    /// such moves (Rolling Stone's goal cuts). They may cut every way to the goal, so
    /// a search with them that runs out of states gives up rather than say unsolvable.
    pub goal_cuts: bool,
    /// Over box moves, forward: Festival's opener and explorer advise a move each per
    /// expansion ([`super::advisors`]), for the feature-space search.
    pub advisors: bool,
}

impl Techniques {
    /// Pushes per packing fault for the `any` objective (measured: see docs/performance.md).
    pub const PACKING_PENALTY: Cost = 4;

    /// Admissible: for push-optimal searches.
    pub fn optimal(bound: Bound) -> Techniques {
        Techniques {
            bound,
            freeze_deadlocks: true,
            pi_corrals: true,
            corral_deadlocks: true,
            learned_deadlocks: true,
            packing_penalty: 0,
            box_moves: false,
            hotspots: false,
            goal_cuts: false,
            advisors: false,
        }
    }

    /// For finding any solution fast.
    pub fn any(bound: Bound) -> Techniques {
        Techniques {
            packing_penalty: Self::PACKING_PENALTY,
            hotspots: true,
            ..Techniques::optimal(bound)
        }
    }
}

/// The lower bound on the pushes still needed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bound {
    /// Minimum-cost box–goal matching over push distances (Hungarian); also proves
    /// bipartite deadlocks.
    Matching,
    /// Each box's distance to its nearest goal, summed: cheaper, weaker.
    ClosestGoal,
}

/// Sokoban as a [`Domain`] over pushes (unit cost: the search minimises pushes).
pub struct SokobanDomain {
    board: Board,
    techniques: Techniques,
    goal_bits: Box<[u64]>,
    scratch: RefCell<Scratch>,
    /// Built on first use: only the feature-space search asks for it.
    hotspots: OnceCell<Option<Hotspots>>,
    /// Polled inside expansions, which on big levels are long (a matching over
    /// hundreds of boxes per child). A tripped interrupt cuts the expansion short;
    /// the engine sees it ([`crate::search::Budget::cut_short`]) and stops.
    interrupt: Interrupt,
    /// Inner-loop steps one child costs, roughly: the matching's repair (boxes²) and
    /// the player's flood (squares).
    child_work: u32,
    /// Heap bytes a state owns: a bitset too big to sit inline, plus the allocator's
    /// bookkeeping for it.
    state_heap_bytes: usize,
    /// Deadlocks the corral searches proved, shared with the job's other searches
    /// ([`SokobanDomain::sharing`]).
    learned: Rc<RefCell<Learned>>,
}

impl SokobanDomain {
    /// The domain on `level` without limits (tests, tools).
    pub fn new(level: &Level, techniques: Techniques) -> SokobanDomain {
        SokobanDomain::on_board(Board::new(level), techniques, Interrupt::never())
    }

    /// The domain on a compiled board, its expansions polling `interrupt` (the
    /// search's, from [`crate::search::Budget::interrupt`]).
    pub fn on_board(board: Board, techniques: Techniques, interrupt: Interrupt) -> SokobanDomain {
        let n_boxes = board.n_boxes();
        let child_work = u32::try_from(n_boxes * n_boxes + board.n_squares()).unwrap_or(u32::MAX);
        let state_heap_bytes = match words(&board) {
            n if n > INLINE_WORDS => n * 8 + 16,
            _ => 0,
        };
        let mut goal_bits = vec![0; words(&board)].into_boxed_slice();
        for &goal in board.goals() {
            flip(&mut goal_bits, goal);
        }
        SokobanDomain {
            board,
            techniques,
            goal_bits,
            scratch: RefCell::new(Scratch::default()),
            hotspots: OnceCell::new(),
            interrupt,
            child_work,
            state_heap_bytes,
            learned: Rc::default(),
        }
    }

    /// This domain with `learned` as its learned deadlocks, shared with other searches
    /// of the same board (their positions are on the same squares).
    pub fn sharing(self, learned: &Rc<RefCell<Learned>>) -> SokobanDomain {
        SokobanDomain {
            learned: Rc::clone(learned),
            ..self
        }
    }

    /// The deadlocks this domain's corral searches learned (or were lent).
    pub fn learned(&self) -> std::cell::Ref<'_, Learned> {
        self.learned.borrow()
    }

    pub(super) fn techniques(&self) -> &Techniques {
        &self.techniques
    }

    pub(super) fn interrupt(&self) -> &Interrupt {
        &self.interrupt
    }

    /// Polls the interrupt once per child made, the board's tables and the `children`
    /// already made counting against the memory cap (one expansion of a big level can
    /// make millions); `Err` when the expansion must end now.
    #[inline]
    pub(super) fn poll_child(&self, children: usize) -> Result<(), crate::search::Stop> {
        self.interrupt.poll_holding(self.child_work, || {
            let each = size_of::<Successor<State, Push>>() + self.state_heap_bytes;
            (self.board.table_bytes() + children * each) as u64
        })
    }

    pub fn board(&self) -> &Board {
        &self.board
    }

    /// The push distance as a matching cost.
    #[inline]
    fn cost(&self, square: u16, goal: usize) -> i64 {
        match self.board.distance(goal, square) {
            UNREACHABLE => FORBIDDEN,
            d => i64::from(d),
        }
    }

    /// The lower bound for `boxes`, listed in `list` but with one of them moved when
    /// `moved` is `(row, square)`; `None` when the boxes cannot all reach distinct
    /// goals. With the matching bound, a moved box re-solves incrementally from the
    /// last full solve. A full solve cut short by the interrupt says `None` too: the
    /// engine, seeing the interrupt tripped, stops before using it.
    pub(super) fn lower_bound(
        &self,
        hungarian: &mut Hungarian,
        boxes: &[u64],
        list: &[u16],
        moved: Option<(usize, u16)>,
    ) -> Option<Cost> {
        let square = |b: usize| match moved {
            Some((row, to)) if row == b => to,
            _ => list[b],
        };
        let total = match (self.techniques.bound, moved) {
            (Bound::Matching, None) => hungarian
                .solve(list.len(), |b, g| self.cost(square(b), g), &self.interrupt)
                .ok()??,
            (Bound::Matching, Some((row, _))) => {
                hungarian.resolve_row(list.len(), row, |b, g| self.cost(square(b), g))?
            }
            (Bound::ClosestGoal, _) => (0..list.len())
                .map(|b| {
                    (0..self.board.goals().len())
                        .map(|g| self.cost(square(b), g))
                        .min()
                        .filter(|&d| d < FORBIDDEN)
                })
                .sum::<Option<i64>>()?,
        };
        let penalty = self.techniques.packing_penalty;
        let faults = if penalty > 0 {
            self.board.packing_faults(|g| has_box(boxes, g)) * penalty
        } else {
            0
        };
        Cost::try_from(total).ok().map(|h| h + faults)
    }
}

impl SokobanDomain {
    /// What every expansion does first: the player's region (in `scratch.region`), the
    /// PI-corral verdict and the boxes (in `scratch.box_list`); the full matching the
    /// children repair waits for the first child that needs it ([`Base`]). `None` for a
    /// dead end; otherwise whether only the corral's boxes (`scratch.corrals.boxes()`)
    /// may move.
    pub(super) fn prepare(&self, state: &State, scratch: &mut Scratch) -> Option<bool> {
        let board = &self.board;
        scratch.region.fill(board, &state.boxes, state.player);
        let tests = CorralTests {
            pi_pruning: self.techniques.pi_corrals,
            deadlock_search: self.techniques.corral_deadlocks,
            learn_patterns: self.techniques.learned_deadlocks,
        };
        let verdict = if tests.pi_pruning || tests.deadlock_search {
            scratch.corrals.analyse(
                board,
                &state.boxes,
                (&scratch.region, state.player),
                tests,
                &mut self.learned.borrow_mut(),
                &self.interrupt,
            )
        } else {
            Verdict::AllPushes
        };
        // A corral analysis cut short proves nothing; nor will this expansion.
        if self.interrupt.tripped().is_some() {
            return None;
        }
        let learned = || self.learned.borrow().holds(&state.boxes, state.player);
        let only_corral = match verdict {
            Verdict::Deadlock => return None,
            _ if self.techniques.learned_deadlocks && learned() => return None,
            Verdict::OnlyCorral => true,
            Verdict::AllPushes => false,
        };
        scratch.box_list.clear();
        scratch.box_list.extend(squares(&state.boxes));
        scratch.base = Base::Pending;
        Some(only_corral)
    }

    /// The estimate of `child`, made from the parent whose boxes are `list` by moving
    /// one of them, `moved` = (its row in `list`, its new square); `None` when the move
    /// leaves a freeze, learned or bipartite deadlock (or the parent's boxes match no
    /// goals).
    pub(super) fn finish(
        &self,
        scratch: &mut Scratch,
        child: &State,
        list: &[u16],
        moved: (usize, u16),
    ) -> Option<Cost> {
        let boxes = &child.boxes;
        let freeze = self.techniques.freeze_deadlocks
            && freeze_deadlock(&self.board, boxes, moved.1, &mut scratch.frozen);
        if freeze
            || self.techniques.learned_deadlocks
                && self.learned.borrow().is_dead(boxes, moved.1, child.player)
        {
            return None;
        }
        if self.techniques.bound == Bound::Matching && scratch.base == Base::Pending {
            // The parent's boxes are `list`; only whether they match matters here.
            let solved = self.lower_bound(&mut scratch.hungarian, boxes, list, None);
            scratch.base = match solved {
                Some(_) => Base::Ready,
                None => Base::Failed,
            };
        }
        if scratch.base == Base::Failed {
            return None;
        }
        self.lower_bound(&mut scratch.hungarian, boxes, list, Some(moved))
    }

    /// FESS's features, most important first: boxes not yet packed (on a goal, in
    /// packing order), the areas the boxes cut the floor into (`regions` of them),
    /// and (when on) the [`Hotspots`] among them.
    pub(super) fn features_with(&self, state: &State, regions: u16) -> Features {
        let board = &self.board;
        let on_goal = |g: u16| has_box(&state.boxes, g);
        let filled = board.goals().iter().filter(|&&g| on_goal(g)).count() as u32;
        let packed = filled - board.packing_faults(on_goal);
        let unpacked = board.n_boxes() as u32 - packed;
        let scratch = &mut *self.scratch.borrow_mut();
        let table = self
            .techniques
            .hotspots
            // A build cut short leaves no table; the search stops at once anyway.
            .then(|| {
                self.hotspots
                    .get_or_init(|| Hotspots::new(board, &self.interrupt).ok().flatten())
            });
        let hotspots = match table.and_then(Option::as_ref) {
            Some(hotspots) => {
                scratch.loose.clear();
                scratch
                    .loose
                    .extend(squares(&state.boxes).filter(|&b| !board.is_goal(b)));
                hotspots.count(&scratch.loose)
            }
            None => 0,
        };
        [unpacked as u16, regions, hotspots, 0]
    }

    pub(super) fn scratch(&self) -> std::cell::RefMut<'_, Scratch> {
        self.scratch.borrow_mut()
    }
}

impl Domain for SokobanDomain {
    type State = State;
    type Key = State;
    type Action = Push;

    fn initial_state(&self) -> State {
        let mut boxes: BoxSet = smallvec![0; words(&self.board)];
        for &b in self.board.start_boxes() {
            flip(&mut boxes, b);
        }
        let scratch = &mut *self.scratch.borrow_mut();
        let player = scratch
            .region
            .fill(&self.board, &boxes, self.board.start_player());
        let list: Vec<u16> = squares(&boxes).collect();
        let bound = self
            .lower_bound(&mut scratch.hungarian, &boxes, &list, None)
            .unwrap_or(Cost::MAX);
        State {
            boxes,
            player,
            bound,
        }
    }

    fn is_goal(&self, state: &State) -> bool {
        state.boxes[..] == self.goal_bits[..]
    }

    fn key<'s>(&self, state: &'s State) -> &'s State {
        state
    }

    fn expand(&self, state: &State, out: &mut Vec<Successor<State, Push>>) {
        self.expand_unknown(state, out, &mut |_, _| false);
    }

    fn expand_unknown(
        &self,
        state: &State,
        out: &mut Vec<Successor<State, Push>>,
        known: &mut dyn FnMut(&State, Cost) -> bool,
    ) {
        let board = &self.board;
        let scratch = &mut *self.scratch.borrow_mut();
        let Some(only_corral) = self.prepare(state, scratch) else {
            return;
        };
        let list = std::mem::take(&mut scratch.box_list);
        'boxes: for (row, &square) in list.iter().enumerate() {
            if only_corral && !scratch.corrals.boxes().contains(&square) {
                continue;
            }
            for direction in Direction::ALL {
                let to = board.neighbour(square, direction);
                if to == NONE || has_box(&state.boxes, to) || board.is_dead(to) {
                    continue;
                }
                let from = board.neighbour(square, direction.opposite());
                if from == NONE || !scratch.region.reached(from) {
                    continue;
                }
                if self.poll_child(out.len()).is_err() {
                    break 'boxes;
                }
                let mut boxes = state.boxes.clone();
                flip(&mut boxes, square);
                flip(&mut boxes, to);
                let mut child = State {
                    player: scratch.normalise.fill(board, &boxes, square),
                    boxes,
                    bound: 0,
                };
                if known(&child, 1) {
                    continue;
                }
                let Some(bound) = self.finish(scratch, &child, &list, (row, to)) else {
                    continue;
                };
                child.bound = bound;
                out.push(Successor {
                    action: Push { square, direction },
                    state: child,
                    cost: 1,
                });
            }
        }
        scratch.box_list = list;
    }

    fn estimate(&self, state: &State) -> Option<Cost> {
        (state.bound != Cost::MAX).then_some(state.bound)
    }

    fn known_unsolvable(&self) -> bool {
        self.board.is_stranded()
            || self
                .board
                .start_boxes()
                .iter()
                .any(|&b| self.board.is_dead(b))
    }

    fn admissible(&self) -> bool {
        self.techniques.packing_penalty == 0
    }

    fn features(&self, state: &State) -> Features {
        let regions = self
            .scratch
            .borrow_mut()
            .regions
            .count_regions(&self.board, &state.boxes);
        self.features_with(state, regions)
    }

    fn state_heap_bytes(&self) -> usize {
        self.state_heap_bytes
    }
}
