//! Feature-space search, after Shoham & Schaeffer's FESS (IEEE CoG 2020): every state
//! is projected onto a small feature vector ([`Domain::features`]), and the search
//! visits the cells of equal features in turn, expanding one state from each, so no
//! single region of the space (the one the estimate likes best) can starve the rest.
//! A cell that an expansion opens is visited next, as in Festival, so the search
//! follows new ground at once and the cycle goes on from there.
//! Within a cell the state with the least weight goes first. Each expansion names
//! the children it is advised to follow ([`Advice`], and the domain's own advisors,
//! [`Domain::advise`]): their moves weigh 0, any other
//! move 1, so plans that keep taking advice stay cheap however long they are. Ties go
//! to the smaller estimate.
//!
//! Complete (every new state is queued once), not optimal.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::time::{Duration, Instant};

use rustc_hash::FxBuildHasher;

use super::chunked::Chunked;
use super::node_table::{Inserted, NodeId, NodeTable};
use super::{
    Advice, Budget, Candidate, Cost, Domain, Features, Interrupt, Origin, Outcome, Solution, Stop,
    Successor,
};

/// Queue entry, smallest first: (weight, estimate, node). Nodes are numbered as they
/// are stored, so the id breaks ties in insertion order.
type Entry = Reverse<(Cost, Cost, NodeId)>;

/// Bytes a stored state costs beside its node: its entry in a cell's queue and its
/// progress record, the queue's vector counted as if just doubled.
const OPEN_BYTES: usize =
    2 * std::mem::size_of::<Entry>() + std::mem::size_of::<(Features, Cost)>();

#[derive(Default)]
struct Cells {
    queues: Vec<BinaryHeap<Entry>>,
    index: HashMap<Features, usize, FxBuildHasher>,
}

impl Cells {
    /// Queues `entry` in its cell; the cell's index if this opened it.
    fn push(&mut self, features: Features, entry: Entry) -> Option<usize> {
        let next = self.queues.len();
        let cell = *self.index.entry(features).or_insert(next);
        if cell == next {
            self.queues.push(BinaryHeap::new());
        }
        self.queues[cell].push(entry);
        (cell == next).then_some(cell)
    }
}

pub fn search<D: Domain>(domain: &D, advice: Advice, budget: &mut Budget) -> Outcome<D::Action> {
    let mut search = Fess::new(domain, advice);
    let outcome = loop {
        match search.run(budget, u64::MAX) {
            Turn::Ended(outcome) => break outcome,
            Turn::Paused => {}
        }
    };
    budget.stats.unique_states = Some(search.stored() as u64);
    outcome
}

/// How a turn of a [`Fess`] search ended.
pub enum Turn<A> {
    /// Its expansions were spent; it can go on.
    Paused,
    Ended(Outcome<A>),
}

/// A feature-space search that runs in turns of a given number of expansions, so
/// that several can share one thread ([`interleave`]).
pub struct Fess<'d, D: Domain> {
    domain: &'d D,
    advice: Advice,
    table: NodeTable<D>,
    /// Per node, its features and weight: what its children are measured against.
    progress: Chunked<(Features, Cost)>,
    cells: Cells,
    /// The next cell to visit. A new cell is visited next (as Festival does), then the
    /// cycle goes on from it.
    cell: usize,
    /// Empty cells visited since the last expansion: once every cell is, none has a state.
    empty_visits: usize,
    /// The least first feature of any state stored: how far it got.
    reached: u16,
    successors: Vec<Successor<D::State, D::Action>>,
    /// The new children of the expansion under way, and their nodes.
    children: Vec<Candidate<D::Action>>,
    child_ids: Vec<NodeId>,
}

impl<'d, D: Domain> Fess<'d, D> {
    pub fn new(domain: &'d D, advice: Advice) -> Fess<'d, D> {
        Fess {
            domain,
            advice,
            table: NodeTable::with_open_bytes(OPEN_BYTES),
            progress: Chunked::new(),
            cells: Cells::default(),
            cell: 0,
            empty_visits: 0,
            reached: u16::MAX,
            successors: Vec::new(),
            children: Vec::new(),
            child_ids: Vec::new(),
        }
    }

    /// States stored so far.
    pub fn stored(&self) -> usize {
        self.table.len()
    }

    /// Bytes its stored states take.
    pub fn held_bytes(&self) -> u64 {
        self.table.bytes(self.domain)
    }

    /// Runs until `expansions` more states are expanded or the search ends.
    pub fn run(&mut self, budget: &mut Budget, expansions: u64) -> Turn<D::Action> {
        match self.turn(budget, expansions) {
            Ok(Some(outcome)) => Turn::Ended(outcome),
            Ok(None) => Turn::Paused,
            Err(stop) => Turn::Ended(Outcome::Stopped(stop)),
        }
    }

    fn start(&mut self, budget: &mut Budget) -> Result<Option<Outcome<D::Action>>, Stop> {
        let domain = self.domain;
        let root = domain.initial_state();
        budget.cut_short()?;
        let Some(h0) = domain.estimate(&root) else {
            return Ok(Some(Outcome::Unsolvable));
        };
        let root_features = domain.features(&root);
        let root_is_goal = domain.is_goal(&root);
        let Inserted::New(root_id) = self.table.insert(domain, root, None, 0, budget)? else {
            unreachable!("the table starts empty");
        };
        if root_is_goal {
            return Ok(Some(Outcome::Solved(self.table.solution(root_id))));
        }
        self.reached = root_features[0];
        self.progress.push((root_features, 0));
        self.cells.push(root_features, Reverse((0, h0, root_id)));
        Ok(None)
    }

    fn turn(
        &mut self,
        budget: &mut Budget,
        mut expansions: u64,
    ) -> Result<Option<Outcome<D::Action>>, Stop> {
        if self.table.len() == 0
            && let Some(outcome) = self.start(budget)?
        {
            return Ok(Some(outcome));
        }
        let domain = self.domain;
        loop {
            if self.empty_visits == self.cells.queues.len() {
                return Ok(Some(Outcome::Unsolvable));
            }
            if expansions == 0 {
                return Ok(None);
            }
            let cell = self.cell;
            self.cell = (cell + 1) % self.cells.queues.len();
            let Some(Reverse((_, _, id))) = self.cells.queues[cell].pop() else {
                self.empty_visits += 1;
                continue;
            };
            expansions -= 1;
            self.empty_visits = 0;
            budget.expand()?;
            let (parent_features, parent_weight) = self.progress[id as usize];
            let g = self.table.node(id).g;
            self.successors.clear();
            budget.generated(self.table.expand(domain, id, &mut self.successors));
            budget.cut_short()?;
            self.children.clear();
            self.child_ids.clear();
            for successor in self.successors.drain(..) {
                let Some(h) = domain.estimate(&successor.state) else {
                    continue;
                };
                let is_goal = domain.is_goal(&successor.state);
                let parent = Some((id, successor.action));
                let child_g = g + successor.cost;
                let Inserted::New(child) =
                    self.table
                        .insert(domain, successor.state, parent, child_g, budget)?
                else {
                    continue;
                };
                if is_goal {
                    return Ok(Some(Outcome::Solved(self.table.solution(child))));
                }
                let features = domain.features(&self.table.node(child).state);
                self.children.push(Candidate {
                    action: successor.action,
                    features,
                    h,
                    advised: false,
                });
                self.child_ids.push(child);
            }
            // Features may need a table built on first use, which an interrupt can cut.
            budget.cut_short()?;
            advise(self.advice, &parent_features, &mut self.children);
            domain.advise(
                &self.table.node(id).state,
                &parent_features,
                &mut self.children,
            );
            for (child, &child_id) in self.children.iter().zip(&self.child_ids) {
                let weight = parent_weight + Cost::from(!child.advised);
                self.reached = self.reached.min(child.features[0]);
                self.progress.push((child.features, weight));
                if let Some(opened) = self
                    .cells
                    .push(child.features, Reverse((weight, child.h, child_id)))
                {
                    self.cell = opened;
                }
            }
        }
    }
}

/// Expansions per turn and weight of [`interleave`]: about a few milliseconds of work
/// over box moves, so turns are fair without costing much to switch.
pub const TURN_EXPANSIONS: u64 = 256;

/// How many times its weight's turn a search of [`interleave`] gets while it leads the
/// searches of its direction, its first feature strictly below all of theirs.
pub const LEAD_FACTOR: u64 = 4;

/// Feature-space searches of `domains` (each with its advice and a weight) take turns
/// of `weight × TURN_EXPANSIONS` expansions in one thread under one budget (times
/// [`LEAD_FACTOR`] for one that leads its direction), until one
/// solves, one proves there is no solution, or all give up. A search that runs out of
/// states, or fills the memory cap while others still run, drops out; the others go
/// on. Searches from the goal ([`Origin::Goal`]) meet forward ones: after each turn
/// the states it stored are looked up in the tables of the other direction, and a state
/// both hold joins the two paths into a plan.
/// With a [`Sprint`], that search runs alone first.
/// Returns the outcome and which search ended it.
pub fn interleave<D: Domain>(
    searches: &[(&D, Advice, u32)],
    sprint: Option<Sprint>,
    budget: &mut Budget,
) -> (Outcome<D::Action>, usize) {
    let mut running: Vec<Runner<D>> = searches
        .iter()
        .enumerate()
        .map(|(index, &(domain, advice, weight))| Runner {
            search: Fess::new(domain, advice),
            weight,
            index,
            checked: 0,
        })
        .collect();
    let both_ways = [Origin::Start, Origin::Goal]
        .iter()
        .all(|&origin| searches.iter().any(|s| s.0.origin() == origin));
    let interrupt = budget.interrupt();
    let mut standings = Vec::with_capacity(running.len());
    let mut last = 0;
    let mut stored = 0;
    if let Some(sprint) = sprint {
        last = sprint.search;
        let runner = &mut running[sprint.search];
        if let Some(outcome) = run_sprint(&mut runner.search, sprint, budget) {
            budget.stats.unique_states = Some(runner.search.stored() as u64);
            return (outcome, last);
        }
        stored += runner.search.stored();
        running.remove(sprint.search);
    }
    let ended = 'turns: loop {
        let mut i = 0;
        while i < running.len() {
            let elsewhere: u64 = running
                .iter()
                .enumerate()
                .filter(|&(j, _)| j != i)
                .map(|(_, runner)| runner.search.held_bytes())
                .sum();
            budget.set_held_elsewhere(elsewhere);
            let others = running.len() > 1;
            standings.clear();
            standings.extend(
                running
                    .iter()
                    .map(|r| (r.search.domain.origin(), r.search.reached)),
            );
            let lead = lead_factor(&standings, i);
            let turn = u64::from(running[i].weight) * TURN_EXPANSIONS * lead;
            let runner = &mut running[i];
            last = runner.index;
            let domain = runner.search.domain;
            match runner.search.run(budget, turn) {
                Turn::Paused => {
                    if both_ways && let Some(plan) = meet(&mut running, i, &interrupt) {
                        break 'turns Outcome::Solved(plan);
                    }
                    i += 1;
                }
                Turn::Ended(ref outcome) if drops_out(outcome, domain.exhaustive(), others) => {
                    stored += runner.search.stored();
                    running.remove(i);
                }
                Turn::Ended(outcome) => break 'turns from_origin(outcome, domain),
            }
        }
        if running.is_empty() {
            break Outcome::GaveUp;
        }
    };
    budget.set_held_elsewhere(0);
    stored += running
        .iter()
        .map(|runner| runner.search.stored())
        .sum::<usize>();
    budget.stats.unique_states = Some(stored as u64);
    (ended, last)
}

/// Whether a search of [`interleave`] that ended with `outcome` leaves the others to go
/// on: it ran out of states without proving anything (its domain cuts moves), or it
/// filled the memory cap while `others` run, which go on in the memory it held.
fn drops_out<A>(outcome: &Outcome<A>, exhaustive: bool, others: bool) -> bool {
    match outcome {
        Outcome::Unsolvable => !exhaustive,
        Outcome::Stopped(Stop::MemoryLimit) => others,
        _ => false,
    }
}

/// [`LEAD_FACTOR`] if search `i` of `standings` (each search's direction and the least
/// first feature it reached) got further than every other search of its direction,
/// else 1: a search that is getting somewhere gets more of the time, the others keep
/// theirs against each other.
fn lead_factor(standings: &[(Origin, u16)], i: usize) -> u64 {
    let (origin, reached) = standings[i];
    let mut rivals = standings
        .iter()
        .enumerate()
        .filter(|&(j, &(o, _))| j != i && o == origin)
        .peekable();
    let has_rivals = rivals.peek().is_some();
    if has_rivals && rivals.all(|(_, &(_, r))| r > reached) {
        LEAD_FACTOR
    } else {
        1
    }
}

/// Inner-loop steps one lookup of a state in another search's table costs, roughly
/// (its key, its hash, a probe), for [`Interrupt::poll`].
const LOOKUP_WORK: u32 = 16;

/// A search of [`interleave`] that runs alone before the others start, then drops out
/// unless it ended the job: one that often solves alone what the others share time on
/// solves it sooner, and costs the others a fixed amount.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sprint {
    /// Its index among the searches.
    pub search: usize,
    /// How many expansions it gets at most, and how long.
    pub expansions: u64,
    pub time: Option<Duration>,
    /// It stops as soon as this many expansions brought it no nearer the goal (its
    /// first feature's least value stayed).
    pub patience: u64,
}

/// Runs `sprint`'s search alone, in turns so its time and progress are checked as it
/// goes; the outcome if that ends the job.
fn run_sprint<D: Domain>(
    search: &mut Fess<D>,
    sprint: Sprint,
    budget: &mut Budget,
) -> Option<Outcome<D::Action>> {
    let started = Instant::now();
    // Expansions so far, and when the least first feature last fell.
    let (mut spent, mut gained) = (0, 0);
    while spent < sprint.expansions
        && spent - gained < sprint.patience
        && sprint.time.is_none_or(|time| started.elapsed() < time)
    {
        let turn = (sprint.expansions - spent).min(TURN_EXPANSIONS);
        let reached = search.reached;
        spent += turn;
        if let Turn::Ended(outcome) = search.run(budget, turn) {
            let drops = drops_out(&outcome, search.domain.exhaustive(), true);
            return (!drops).then(|| from_origin(outcome, search.domain));
        }
        if search.reached < reached {
            gained = spent;
        }
    }
    None
}

/// One search of [`interleave`].
struct Runner<'d, D: Domain> {
    search: Fess<'d, D>,
    weight: u32,
    /// Its place among the searches asked for.
    index: usize,
    /// Its stored states looked up in the other direction's tables so far.
    checked: usize,
}

/// Looks up the states search `i` stored since its last turn in the tables of the
/// searches going the other way; the plan through the first state both hold. Polls
/// `interrupt` as it goes: a turn of a big level stores millions of states. Cut short,
/// it finds nothing, and the next turn ends on the stop.
fn meet<D: Domain>(
    running: &mut [Runner<D>],
    i: usize,
    interrupt: &Interrupt,
) -> Option<Solution<D::Action>> {
    let new = running[i].checked..running[i].search.stored();
    running[i].checked = new.end;
    let this = &running[i].search;
    for id in new {
        interrupt.poll(LOOKUP_WORK).ok()?;
        let state = &this.table.node(id as NodeId).state;
        for other in running.iter().map(|runner| &runner.search) {
            if other.domain.origin() == this.domain.origin() {
                continue;
            }
            if let Some(found) = other.table.find_state(other.domain, state) {
                let (forward, backward) = match this.domain.origin() {
                    Origin::Start => ((this, id as NodeId), (other, found)),
                    Origin::Goal => ((other, found), (this, id as NodeId)),
                };
                return Some(joined(
                    forward.0.table.solution(forward.1),
                    backward.0.table.solution(backward.1),
                    backward.0.domain,
                ));
            }
        }
    }
    None
}

/// A search's `outcome` as the job's: a plan found from the goal, turned around.
fn from_origin<D: Domain>(outcome: Outcome<D::Action>, domain: &D) -> Outcome<D::Action> {
    match outcome {
        Outcome::Solved(found) if domain.origin() == Origin::Goal => {
            let start = Solution {
                actions: Vec::new(),
                cost: 0,
            };
            Outcome::Solved(joined(start, found, domain))
        }
        outcome => outcome,
    }
}

/// The plan along `forward` from the start, then back along `backward`, a path found
/// from the goal by `domain` (its actions undone, last first).
fn joined<D: Domain>(
    forward: Solution<D::Action>,
    backward: Solution<D::Action>,
    domain: &D,
) -> Solution<D::Action> {
    let mut actions = forward.actions;
    actions.extend(backward.actions.into_iter().rev().map(|a| domain.undo(a)));
    Solution {
        actions,
        cost: forward.cost + backward.cost,
    }
}

/// Marks the children `advice` names, measured against their `parent`.
fn advise<A>(advice: Advice, parent: &Features, children: &mut [Candidate<A>]) {
    let improves = |child: &Candidate<A>, feature: usize| child.features[feature] < parent[feature];
    match advice {
        Advice::EveryImprovement => {
            for child in children.iter_mut() {
                child.advised = (0..parent.len()).any(|feature| improves(child, feature));
            }
        }
        // Of the children that improve the feature and keep the first, the one with
        // the least features (compared in order), then the least estimate.
        Advice::BestPerFeature => {
            for feature in 0..parent.len() {
                let best = children
                    .iter()
                    .enumerate()
                    .filter(|(_, c)| improves(c, feature) && c.features[0] <= parent[0])
                    .min_by_key(|(_, c)| (c.features, c.h))
                    .map(|(i, _)| i);
                if let Some(i) = best {
                    children[i].advised = true;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_search_strictly_ahead_of_its_own_direction_leads() {
        let (start, goal) = (Origin::Start, Origin::Goal);
        let standings = [(start, 3), (start, 5), (start, 5), (goal, 9)];
        assert_eq!(lead_factor(&standings, 0), LEAD_FACTOR);
        assert_eq!(lead_factor(&standings, 1), 1);
        // Alone in its direction: nobody to lead.
        assert_eq!(lead_factor(&standings, 3), 1);
        // A tie leads nobody.
        assert_eq!(lead_factor(&[(start, 3), (start, 3), (goal, 1)], 0), 1);
    }
}
