//! Breadth-first search. Nodes enter the table in breadth-first order, so the
//! table itself is the queue: a cursor walks it, no separate frontier is kept.
//! Optimal in the number of actions.

use super::node_table::{Inserted, NodeId, NodeTable};
use super::{Budget, Domain, Outcome, Stop};

pub fn search<D: Domain>(domain: &D, budget: &mut Budget) -> Outcome<D::Action> {
    let mut table = NodeTable::<D>::new();
    let outcome = run(domain, budget, &mut table).unwrap_or_else(Outcome::Stopped);
    budget.stats.unique_states = Some(table.len() as u64);
    outcome
}

/// Breadth-first search from `start` until a state satisfies `target`. Shared with
/// enforced hill-climbing, whose phases are such searches.
pub(super) fn search_until<D: Domain>(
    domain: &D,
    start: D::State,
    budget: &mut Budget,
    table: &mut NodeTable<D>,
    mut target: impl FnMut(&D::State) -> bool,
) -> Result<Option<NodeId>, Stop> {
    let mut successors = Vec::new();
    budget.cut_short()?;
    let Inserted::New(root) = table.insert(domain, start, None, 0, budget)? else {
        unreachable!("callers pass an empty table");
    };
    if target(&table.node(root).state) {
        return Ok(Some(root));
    }
    let mut cursor: NodeId = 0;
    while (cursor as usize) < table.len() {
        let node = table.node(cursor);
        let g = node.g;
        budget.stats.bound = Some(budget.stats.bound.map_or(g, |b| b.max(g)));
        budget.expand()?;
        successors.clear();
        domain.expand(&node.state, &mut successors);
        budget.generated(successors.len());
        budget.cut_short()?;
        for successor in successors.drain(..) {
            if domain.estimate(&successor.state).is_none() {
                continue;
            }
            let hit = target(&successor.state);
            if let Inserted::New(id) = table.insert(
                domain,
                successor.state,
                Some((cursor, successor.action)),
                g + successor.cost,
                budget,
            )? {
                if hit {
                    return Ok(Some(id));
                }
            }
        }
        cursor += 1;
    }
    Ok(None)
}

fn run<D: Domain>(
    domain: &D,
    budget: &mut Budget,
    table: &mut NodeTable<D>,
) -> Result<Outcome<D::Action>, Stop> {
    let found = search_until(domain, domain.initial_state(), budget, table, |s| {
        domain.is_goal(s)
    })?;
    Ok(match found {
        Some(id) => Outcome::Solved(table.solution(id)),
        None => Outcome::Unsolvable,
    })
}
