//! Heap-ordered anytime best-first search (Mel'nikov, Mel'nikova and Radionov 2014):
//! the tree grows one vertex at a time, taken from one of two binary heaps, one of
//! decision leaves and one of chance vertices, in turn. A decision leaf is expanded into
//! its moves' afterstates; a chance vertex is expanded into its outcomes the first time
//! it is taken, and refined (its likeliest unexpanded outcome expanded) each time after,
//! re-keyed rather than removed. Values back up as max or min at decision vertices and
//! the probability-weighted mean at chance vertices, so at every moment the root holds a
//! value and a best move. A tree expanded to its ends is exact.
//!
//! Preference values, lower first, with `u` the depth, `E` the estimate as a share of
//! the root's (so the coefficients do not depend on the game's units) and `k` how many
//! times a chance vertex was refined:
//! - decision leaves: `u + decision_weight · |E − E_root|`: shallow leaves whose value is
//!   near the root's, where the answer is unclear, first;
//! - chance vertices: `u ∓ chance_weight · E + (k + 1)`, minus for the side that wants
//!   large values, plus for the other: each side's most promising moves first.

use std::cmp::Ordering;
use std::collections::BinaryHeap;
use std::mem::size_of;

use super::{Answer, Game, GameReport, Side};
use crate::search::{Budget, Stop};

/// The preference functions' coefficients (the seed's: 1 and 1.5), how many chance
/// vertices are taken per decision vertex (the seed found 1:1 best), and the risk
/// weighting of chance backups.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Preferences {
    pub decision_weight: f64,
    pub chance_weight: f64,
    pub chance_per_decision: u32,
    /// 0: a chance vertex is worth the expectation of its outcomes (the game's value).
    /// Up to 1: the seed's pessimistic "risk function", `(1 − risk)·mean + risk·worst`,
    /// the worst outcome for the side that moved into the chance; values are then no
    /// longer the game's, and never exact.
    pub risk: f64,
}

impl Default for Preferences {
    fn default() -> Self {
        Preferences {
            decision_weight: 1.0,
            chance_weight: 1.5,
            chance_per_decision: 1,
            risk: 0.0,
        }
    }
}

const NONE: u32 = u32::MAX;

struct Vertex<S, M> {
    state: S,
    chance: bool,
    parent: u32,
    first_child: u32,
    children: u32,
    /// A decision vertex's probability under its chance parent.
    prob: f64,
    /// A chance vertex's move, and the reward of that move.
    mv: Option<M>,
    reward: f64,
    value: f64,
    depth: u32,
    /// Times a chance vertex was expanded or refined.
    level: u32,
    /// Its subtree is expanded to the game's end: its value is exact.
    solved: bool,
    /// The key it is in a heap under, to skip stale entries.
    key: f64,
}

impl<S, M> Vertex<S, M> {
    /// An unexpanded vertex valued `value`; a decision vertex of probability 1 and a
    /// chance vertex of no move until the caller says otherwise.
    fn leaf(state: S, chance: bool, parent: u32, depth: u32, value: f64) -> Self {
        Vertex {
            state,
            chance,
            parent,
            first_child: NONE,
            children: 0,
            prob: 1.0,
            mv: None,
            reward: 0.0,
            value,
            depth,
            level: 0,
            solved: false,
            key: 0.0,
        }
    }
}

#[derive(PartialEq)]
struct Entry(f64, u32);

impl Eq for Entry {}
impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Entry {
    /// Reversed, so the max-heap pops the smallest key.
    fn cmp(&self, other: &Self) -> Ordering {
        other.0.total_cmp(&self.0).then(other.1.cmp(&self.1))
    }
}

struct Tree<'g, G: Game> {
    game: &'g G,
    prefs: Preferences,
    vertices: Vec<Vertex<G::State, G::Move>>,
    decisions: BinaryHeap<Entry>,
    chances: BinaryHeap<Entry>,
    root_value: f64,
    root_side: Side,
    moves: Vec<(G::Move, f64, G::State)>,
    outcomes: Vec<(f64, G::State)>,
}

impl<G: Game> Tree<'_, G> {
    fn share(&self, value: f64) -> f64 {
        value / self.root_value.abs().max(1e-9)
    }

    fn decision_key(&self, v: &Vertex<G::State, G::Move>) -> f64 {
        f64::from(v.depth)
            + self.prefs.decision_weight * (self.share(v.value) - self.share(self.root_value)).abs()
    }

    fn chance_key(&self, v: &Vertex<G::State, G::Move>) -> f64 {
        let parent = &self.vertices[v.parent as usize];
        let sign = match self.game.side(&parent.state) {
            Side::Max => -1.0,
            Side::Min => 1.0,
        };
        f64::from(v.depth)
            + sign * self.prefs.chance_weight * self.share(v.value)
            + f64::from(v.level + 1)
    }

    fn push_decision(&mut self, id: u32) {
        let key = self.decision_key(&self.vertices[id as usize]);
        self.vertices[id as usize].key = key;
        self.decisions.push(Entry(key, id));
    }

    fn push_chance(&mut self, id: u32) {
        let key = self.chance_key(&self.vertices[id as usize]);
        self.vertices[id as usize].key = key;
        self.chances.push(Entry(key, id));
    }

    /// Expands decision vertex `id` into its moves' afterstates, valued by estimate.
    fn expand_decision(&mut self, id: u32) {
        let (state, depth) = {
            let v = &self.vertices[id as usize];
            (v.state, v.depth)
        };
        self.moves.clear();
        self.game.moves(&state, &mut self.moves);
        let first = self.vertices.len() as u32;
        let n = self.moves.len() as u32;
        for i in 0..self.moves.len() {
            let (mv, reward, after) = self.moves[i];
            let value = self.game.estimate(&after);
            self.vertices.push(Vertex {
                mv: Some(mv),
                reward,
                ..Vertex::leaf(after, true, id, depth + 1, value)
            });
        }
        let v = &mut self.vertices[id as usize];
        v.first_child = first;
        v.children = n;
        if n == 0 {
            v.value = self.game.final_value(&state);
            v.solved = true;
        }
        for child in first..first + n {
            self.push_chance(child);
        }
    }

    /// Expands chance vertex `id` into its outcomes, each valued by a preliminary
    /// estimate (the game's estimate of the position itself).
    fn expand_chance(&mut self, id: u32) {
        let (state, depth) = {
            let v = &self.vertices[id as usize];
            (v.state, v.depth)
        };
        self.outcomes.clear();
        self.game.outcomes(&state, &mut self.outcomes);
        let first = self.vertices.len() as u32;
        let n = self.outcomes.len() as u32;
        for i in 0..self.outcomes.len() {
            let (prob, next) = self.outcomes[i];
            let value = self.game.estimate(&next);
            self.vertices.push(Vertex {
                prob,
                ..Vertex::leaf(next, false, id, depth, value)
            });
        }
        let v = &mut self.vertices[id as usize];
        v.first_child = first;
        v.children = n;
        for child in first..first + n {
            self.push_decision(child);
        }
    }

    /// Recomputes values and solved flags from `id` up to the root.
    fn back_up(&mut self, mut id: u32) {
        while id != NONE {
            let v = &self.vertices[id as usize];
            if v.children > 0 {
                let children = v.first_child as usize..(v.first_child + v.children) as usize;
                let solved = children.clone().all(|c| self.vertices[c].solved);
                let value = if v.chance {
                    let mean = children
                        .clone()
                        .map(|c| self.vertices[c].prob * self.vertices[c].value)
                        .sum::<f64>();
                    if self.prefs.risk > 0.0 {
                        let outcomes = children.map(|c| self.vertices[c].value);
                        let worst = match self.game.side(&self.vertices[v.parent as usize].state) {
                            Side::Max => outcomes.fold(f64::INFINITY, f64::min),
                            Side::Min => outcomes.fold(f64::NEG_INFINITY, f64::max),
                        };
                        (1.0 - self.prefs.risk) * mean + self.prefs.risk * worst
                    } else {
                        mean
                    }
                } else {
                    let values = children.map(|c| self.vertices[c].reward + self.vertices[c].value);
                    match self.game.side(&v.state) {
                        Side::Max => values.fold(f64::NEG_INFINITY, f64::max),
                        Side::Min => values.fold(f64::INFINITY, f64::min),
                    }
                };
                let v = &mut self.vertices[id as usize];
                v.value = value;
                v.solved = solved;
            }
            id = self.vertices[id as usize].parent;
        }
    }

    /// Takes a chance vertex: expands it, or refines it by expanding its likeliest
    /// unexpanded outcome; it goes back in its heap while anything below it is open.
    fn take_chance(&mut self, id: u32, budget: &mut Budget) -> Result<(), Stop> {
        budget.expand()?;
        let v = &self.vertices[id as usize];
        let expanded = if v.children == 0 {
            self.expand_chance(id);
            id
        } else {
            let children = v.first_child..v.first_child + v.children;
            let open = children
                .filter(|&c| {
                    self.vertices[c as usize].children == 0 && !self.vertices[c as usize].solved
                })
                .max_by(|&a, &b| {
                    self.vertices[a as usize]
                        .prob
                        .total_cmp(&self.vertices[b as usize].prob)
                });
            match open {
                Some(child) => {
                    self.expand_decision(child);
                    child
                }
                None => return Ok(()),
            }
        };
        self.back_up(expanded);
        let v = &mut self.vertices[id as usize];
        v.level += 1;
        if !v.solved {
            self.push_chance(id);
        }
        Ok(())
    }

    fn take_decision(&mut self, id: u32, budget: &mut Budget) -> Result<(), Stop> {
        budget.expand()?;
        self.expand_decision(id);
        self.back_up(id);
        Ok(())
    }

    /// The next vertex of a heap, stale and already expanded entries skipped.
    fn pop(&mut self, chance: bool) -> Option<u32> {
        loop {
            let heap = if chance {
                &mut self.chances
            } else {
                &mut self.decisions
            };
            let Entry(key, id) = heap.pop()?;
            let v = &self.vertices[id as usize];
            let live = v.key == key && !v.solved && (chance || v.children == 0);
            if live {
                return Some(id);
            }
        }
    }

    fn answer(&self) -> Answer<G::Move> {
        let root = &self.vertices[0];
        let values: Vec<(G::Move, f64)> = (root.first_child..root.first_child + root.children)
            .filter_map(|c| {
                let v = &self.vertices[c as usize];
                v.mv.map(|m| (m, v.reward + v.value))
            })
            .collect();
        let depth = self.vertices.iter().map(|v| v.depth).max().unwrap_or(0);
        Answer::choose(
            self.root_side,
            values,
            depth,
            root.solved && self.prefs.risk == 0.0,
            self.game.final_value(&root.state),
        )
    }
}

/// Bytes one vertex holds.
fn vertex_bytes<S, M>() -> u64 {
    (size_of::<Vertex<S, M>>() + 2 * size_of::<Entry>()) as u64
}

/// Grows the tree from `root` until the budget stops it or it is expanded to the end;
/// `on_answer` hears the root's answer every `report_every` vertices.
pub fn search<G: Game>(
    game: &G,
    root: &G::State,
    prefs: Preferences,
    budget: &mut Budget,
    report_every: u64,
    on_answer: &mut dyn FnMut(&Answer<G::Move>),
) -> GameReport<G::Move> {
    let mut tree = Tree {
        game,
        prefs,
        vertices: Vec::new(),
        decisions: BinaryHeap::new(),
        chances: BinaryHeap::new(),
        root_value: game.estimate(root),
        root_side: game.side(root),
        moves: Vec::new(),
        outcomes: Vec::new(),
    };
    let root_vertex = Vertex::leaf(*root, false, NONE, 0, tree.root_value);
    tree.vertices.push(root_vertex);
    let mut stop = budget.expand().err();
    tree.expand_decision(0);
    tree.back_up(0);
    tree.root_value = tree.vertices[0].value;
    on_answer(&tree.answer());
    let mut turn = 0u32;
    let mut grown = 0u64;
    while stop.is_none() && !tree.vertices[0].solved {
        // Chance vertices `chance_per_decision` times, then a decision leaf.
        let want_chance = turn < prefs.chance_per_decision;
        turn = (turn + 1) % (prefs.chance_per_decision + 1);
        let taken = match tree.pop(want_chance) {
            Some(id) => Some((id, want_chance)),
            None => tree.pop(!want_chance).map(|id| (id, !want_chance)),
        };
        let Some((id, chance)) = taken else { break };
        let result = if chance {
            tree.take_chance(id, budget)
        } else {
            tree.take_decision(id, budget)
        };
        if let Err(s) = result.and_then(|()| {
            budget.check_memory(tree.vertices.len() as u64 * vertex_bytes::<G::State, G::Move>())
        }) {
            stop = Some(s);
        }
        grown += 1;
        if grown % report_every.max(1) == 0 {
            on_answer(&tree.answer());
        }
    }
    let answer = tree.answer();
    on_answer(&answer);
    GameReport {
        answer,
        stop,
        stats: budget.finish(),
    }
}
