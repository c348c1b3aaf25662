//! Enforced hill-climbing (Hoffmann & Nebel 2001): from the current state, a
//! breadth-first search for any state with a strictly smaller estimate; jump there
//! and repeat. Fast and incomplete: a dead end ends it with [`Outcome::GaveUp`].

use super::node_table::NodeTable;
use super::{Budget, Domain, Outcome, Solution, bfs};

pub fn search<D: Domain>(domain: &D, budget: &mut Budget) -> Outcome<D::Action> {
    let mut table = NodeTable::<D>::new();
    let mut plan = Solution {
        actions: Vec::new(),
        cost: 0,
    };
    let mut current = domain.initial_state();
    // Each phase stores its own states; we report the sum as states seen.
    let mut states_seen = 0u64;
    let outcome = loop {
        if domain.is_goal(&current) {
            break Outcome::Solved(plan);
        }
        let Some(h_current) = domain.estimate(&current) else {
            // The start state's estimate may come from a cut-short computation.
            break budget
                .cut_short()
                .map_or_else(Outcome::Stopped, |()| Outcome::Unsolvable);
        };
        table.clear();
        let better = |s: &D::State| domain.estimate(s).is_some_and(|h| h < h_current);
        let found = bfs::search_until(domain, current.clone(), budget, &mut table, better);
        states_seen += table.len() as u64;
        match found {
            Ok(Some(id)) => {
                let step = table.solution(id);
                plan.actions.extend(step.actions);
                plan.cost += step.cost;
                current = table.node(id).state.clone();
            }
            Ok(None) => break Outcome::GaveUp,
            Err(stop) => break Outcome::Stopped(stop),
        }
    };
    budget.stats.unique_states = Some(states_seen);
    outcome
}
