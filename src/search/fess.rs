//! Feature-space search, after Shoham & Schaeffer's FESS (IEEE CoG 2020): every state
//! is projected onto a small feature vector ([`Domain::features`]), and the search
//! visits the cells of equal features in turn, expanding one state from each, so no
//! single region of the space (the one the estimate likes best) can starve the rest.
//! Within a cell the state with the least weight goes first. Each expansion names
//! the children it is advised to follow ([`Advice`]): their moves weigh 0, any other
//! move 1, so plans that keep taking advice stay cheap however long they are. Ties go
//! to the smaller estimate.
//!
//! Complete (every new state is queued once), not optimal.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};

use rustc_hash::FxBuildHasher;

use super::node_table::{Inserted, NodeId, NodeTable};
use super::{Advice, Budget, Cost, Domain, Features, Outcome, Stop};

/// Queue entry, smallest first: (weight, estimate, insertion order, node).
type Entry = Reverse<(Cost, Cost, u64, NodeId)>;

#[derive(Default)]
struct Cells {
    queues: Vec<BinaryHeap<Entry>>,
    index: HashMap<Features, usize, FxBuildHasher>,
}

impl Cells {
    fn push(&mut self, features: Features, entry: Entry) {
        let next = self.queues.len();
        let cell = *self.index.entry(features).or_insert(next);
        if cell == next {
            self.queues.push(BinaryHeap::new());
        }
        self.queues[cell].push(entry);
    }
}

pub fn search<D: Domain>(domain: &D, advice: Advice, budget: &mut Budget) -> Outcome<D::Action> {
    let mut table = NodeTable::<D>::new();
    let outcome = run(domain, advice, budget, &mut table).unwrap_or_else(Outcome::Stopped);
    budget.stats.unique_states = Some(table.len() as u64);
    outcome
}

fn run<D: Domain>(
    domain: &D,
    advice: Advice,
    budget: &mut Budget,
    table: &mut NodeTable<D>,
) -> Result<Outcome<D::Action>, Stop> {
    let root = domain.initial_state();
    budget.cut_short()?;
    let Some(h0) = domain.estimate(&root) else {
        return Ok(Outcome::Unsolvable);
    };
    let root_features = domain.features(&root);
    let root_is_goal = domain.is_goal(&root);
    let Inserted::New(root_id) = table.insert(domain, root, None, 0, budget)? else {
        unreachable!("the table starts empty");
    };
    if root_is_goal {
        return Ok(Outcome::Solved(table.solution(root_id)));
    }
    // Per node, its features and weight: what its children are measured against.
    let mut progress: Vec<(Features, Cost)> = vec![(root_features, 0)];
    let mut cells = Cells::default();
    cells.push(root_features, Reverse((0, h0, 0, root_id)));
    let mut successors = Vec::new();
    let mut children: Vec<Child> = Vec::new();
    let mut sequence = 0u64;

    loop {
        let mut expanded_any = false;
        // Cells made during this round wait for the next one.
        for cell in 0..cells.queues.len() {
            let Some(Reverse((_, _, _, id))) = cells.queues[cell].pop() else {
                continue;
            };
            expanded_any = true;
            budget.expand()?;
            let (parent_features, parent_weight) = progress[id as usize];
            let g = table.node(id).g;
            successors.clear();
            budget.generated(table.expand(domain, id, &mut successors));
            budget.cut_short()?;
            children.clear();
            for successor in successors.drain(..) {
                let Some(h) = domain.estimate(&successor.state) else {
                    continue;
                };
                let is_goal = domain.is_goal(&successor.state);
                let parent = Some((id, successor.action));
                let child_g = g + successor.cost;
                let Inserted::New(child) =
                    table.insert(domain, successor.state, parent, child_g, budget)?
                else {
                    continue;
                };
                if is_goal {
                    return Ok(Outcome::Solved(table.solution(child)));
                }
                let features = domain.features(&table.node(child).state);
                children.push(Child {
                    id: child,
                    features,
                    h,
                    advised: false,
                });
            }
            // Features may need a table built on first use, which an interrupt can cut.
            budget.cut_short()?;
            advise(advice, &parent_features, &mut children);
            for child in &children {
                let weight = parent_weight + Cost::from(!child.advised);
                progress.push((child.features, weight));
                sequence += 1;
                cells.push(
                    child.features,
                    Reverse((weight, child.h, sequence, child.id)),
                );
            }
        }
        if !expanded_any {
            return Ok(Outcome::Unsolvable);
        }
    }
}

/// A new child of the state being expanded.
struct Child {
    id: NodeId,
    features: Features,
    h: Cost,
    advised: bool,
}

/// Marks the children `advice` names, measured against their `parent`.
fn advise(advice: Advice, parent: &Features, children: &mut [Child]) {
    let improves = |child: &Child, feature: usize| child.features[feature] < parent[feature];
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
