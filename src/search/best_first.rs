//! Best-first graph search: A* (optionally weighted) and greedy best-first are one
//! engine with two priorities. The open list holds node ids; states live once in
//! the [`NodeTable`]. A* reopens a node when a cheaper path to it turns up, so it
//! stays optimal with admissible but inconsistent heuristics.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::node_table::{Inserted, NodeId, NodeTable};
use super::{Budget, Cost, Domain, Outcome, Stop, Weight};

#[derive(Clone, Copy, Debug)]
pub enum Priority {
    AStar(Weight),
    Greedy,
}

/// Open-list entry, smallest first: (primary, tie-break, g at push time, id).
type Entry = Reverse<(u64, u64, Cost, NodeId)>;

impl Priority {
    fn key(self, g: Cost, h: Cost, sequence: u64) -> (u64, u64) {
        match self {
            // Among equal f, prefer the deeper node (smaller h): it is nearer a goal.
            Priority::AStar(weight) => (weight.f(g, h), u64::from(h)),
            // Among equal h, first in first out.
            Priority::Greedy => (u64::from(h), sequence),
        }
    }
}

/// Searches only for plans costing less than `below`, when given: a child whose `g + h`
/// reaches it is dropped, so with A* running out of states then proves none is cheaper.
pub fn search<D: Domain>(
    domain: &D,
    priority: Priority,
    below: Option<Cost>,
    budget: &mut Budget,
) -> Outcome<D::Action> {
    match run(domain, priority, below, budget) {
        Ok(outcome) => outcome,
        Err(stop) => Outcome::Stopped(stop),
    }
}

fn run<D: Domain>(
    domain: &D,
    priority: Priority,
    below: Option<Cost>,
    budget: &mut Budget,
) -> Result<Outcome<D::Action>, Stop> {
    let too_dear = |f: Cost| below.is_some_and(|below| f >= below);
    let mut table = NodeTable::<D>::new();
    let mut open: BinaryHeap<Entry> = BinaryHeap::new();
    let mut successors = Vec::new();
    let mut sequence = 0u64;
    // Greedy search tests goals on generation; A* must wait until a goal is popped.
    let goal_on_generation = matches!(priority, Priority::Greedy);

    let root = domain.initial_state();
    budget.cut_short()?;
    let Some(h0) = domain.estimate(&root).filter(|&h| !too_dear(h)) else {
        return Ok(Outcome::Unsolvable);
    };
    let root_is_goal = domain.is_goal(&root);
    let Inserted::New(root_id) = table.insert(domain, root, None, 0, budget)? else {
        unreachable!("the table starts empty");
    };
    if root_is_goal {
        budget.stats.unique_states = Some(1);
        return Ok(Outcome::Solved(table.solution(root_id)));
    }
    let (primary, tie) = priority.key(0, h0, sequence);
    open.push(Reverse((primary, tie, 0, root_id)));

    let outcome = loop {
        let Some(Reverse((primary, _, g_at_push, id))) = open.pop() else {
            break Outcome::Unsolvable;
        };
        let node = table.node(id);
        // In A* a cheaper copy was pushed since, so this entry is stale. Greedy search
        // pushes no copy (its priority ignores g): its one entry must still be expanded.
        if !goal_on_generation && node.g < g_at_push {
            continue;
        }
        if !goal_on_generation && domain.is_goal(&node.state) {
            break Outcome::Solved(table.solution(id));
        }
        if let Priority::AStar(_) = priority {
            budget.set_bound((primary / 100) as Cost);
        }
        if let Err(stop) = budget.expand() {
            budget.stats.unique_states = Some(table.len() as u64);
            return Err(stop);
        }
        let g = node.g;
        successors.clear();
        budget.generated(table.expand(domain, id, &mut successors));
        if let Err(stop) = budget.cut_short() {
            budget.stats.unique_states = Some(table.len() as u64);
            return Err(stop);
        }
        for successor in successors.drain(..) {
            let child_g = g + successor.cost;
            let Some(h) = domain
                .estimate(&successor.state)
                .filter(|&h| !too_dear(child_g + h))
            else {
                continue;
            };
            let is_goal = goal_on_generation && domain.is_goal(&successor.state);
            let inserted = table.insert(
                domain,
                successor.state,
                Some((id, successor.action)),
                child_g,
                budget,
            );
            let child = match inserted {
                Ok(Inserted::New(child)) => child,
                // Greedy search does not revisit: it makes no optimality promise.
                Ok(Inserted::Improved(child)) if !goal_on_generation => child,
                Ok(_) => continue,
                Err(stop) => {
                    budget.stats.unique_states = Some(table.len() as u64);
                    return Err(stop);
                }
            };
            if is_goal {
                budget.stats.unique_states = Some(table.len() as u64);
                return Ok(Outcome::Solved(table.solution(child)));
            }
            sequence += 1;
            let (primary, tie) = priority.key(child_g, h, sequence);
            open.push(Reverse((primary, tie, child_g, child)));
        }
    };
    budget.stats.unique_states = Some(table.len() as u64);
    Ok(outcome)
}
