//! Exact values for games whose states can recur (Pig: a turn passed with nothing
//! banked comes round again), where memoised recursion ([`super::exact`]) would never
//! end: every decision state reachable from the root is enumerated once, then valued by
//! value iteration, each state's value recomputed from its successors' in place
//! (Gauss–Seidel) until no value moves by more than the tolerance.

use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::mem::size_of;

use super::{Answer, Game, GameReport, Side, greedy};
use crate::search::{Budget, Stop};

/// A decision state of the enumerated graph: who moves, its moves (a range of
/// `moves`), and its value when the game is over there.
struct Decision {
    side: Side,
    moves: std::ops::Range<u32>,
    over: f64,
}

/// A move: its reward and its outcomes (a range of `outcomes`).
struct Move<M> {
    mv: M,
    reward: f64,
    outcomes: std::ops::Range<u32>,
}

struct Graph<G: Game> {
    decisions: Vec<Decision>,
    moves: Vec<Move<G::Move>>,
    /// Probability, and the index of the decision state it leads to.
    outcomes: Vec<(f64, u32)>,
}

impl<G: Game> Graph<G> {
    fn bytes(&self, states: usize) -> u64 {
        (self.decisions.capacity() * size_of::<Decision>()
            + self.moves.capacity() * size_of::<Move<G::Move>>()
            + self.outcomes.capacity() * size_of::<(f64, u32)>()
            + states * (size_of::<G::State>() + 4 + 16)) as u64
    }

    /// Every decision state reachable from `root`, `root` first.
    fn enumerate(game: &G, root: &G::State, budget: &mut Budget) -> Result<Self, Stop> {
        let mut index: HashMap<G::State, u32> = HashMap::new();
        let mut states = vec![*root];
        index.insert(*root, 0);
        let mut graph = Graph {
            decisions: Vec::new(),
            moves: Vec::new(),
            outcomes: Vec::new(),
        };
        let (mut moves, mut outcomes) = (Vec::new(), Vec::new());
        let mut next = 0;
        while next < states.len() {
            budget.expand()?;
            let s = states[next];
            next += 1;
            moves.clear();
            game.moves(&s, &mut moves);
            budget.generated(moves.len());
            let first_move = graph.moves.len() as u32;
            for &(mv, reward, after) in &moves {
                outcomes.clear();
                game.outcomes(&after, &mut outcomes);
                let first = graph.outcomes.len() as u32;
                for &(p, t) in &outcomes {
                    let i = match index.entry(t) {
                        Entry::Occupied(e) => *e.get(),
                        Entry::Vacant(e) => {
                            states.push(t);
                            *e.insert(states.len() as u32 - 1)
                        }
                    };
                    graph.outcomes.push((p, i));
                }
                graph.moves.push(Move {
                    mv,
                    reward,
                    outcomes: first..graph.outcomes.len() as u32,
                });
            }
            graph.decisions.push(Decision {
                side: game.side(&s),
                moves: first_move..graph.moves.len() as u32,
                over: game.final_value(&s),
            });
            if next % 4096 == 0 {
                budget.check_memory(graph.bytes(states.len()))?;
            }
        }
        Ok(graph)
    }

    fn move_value(&self, m: &Move<G::Move>, values: &[f64]) -> f64 {
        let range = m.outcomes.start as usize..m.outcomes.end as usize;
        m.reward
            + self.outcomes[range]
                .iter()
                .map(|&(p, t)| p * values[t as usize])
                .sum::<f64>()
    }

    fn value(&self, d: &Decision, values: &[f64]) -> f64 {
        let range = d.moves.start as usize..d.moves.end as usize;
        let each = self.moves[range].iter().map(|m| self.move_value(m, values));
        match d.side {
            Side::Max => each.reduce(f64::max),
            Side::Min => each.reduce(f64::min),
        }
        .unwrap_or(d.over)
    }
}

/// The values of `root` and its moves, to within `tolerance`, for any game whose
/// reachable decision states fit the budget; cycles of states are fine. Values start at
/// 0: for games that end with probability 1 whatever the sides do (Pig), the iteration
/// converges to the game's values.
pub fn solve<G: Game>(
    game: &G,
    root: &G::State,
    tolerance: f64,
    budget: &mut Budget,
) -> GameReport<G::Move> {
    let stopped = |budget: &mut Budget, stop| {
        let mut report = greedy(game, root, budget);
        report.stop = Some(stop);
        report
    };
    let graph = match Graph::enumerate(game, root, budget) {
        Ok(graph) => graph,
        Err(stop) => return stopped(budget, stop),
    };
    let mut values = vec![0.0; graph.decisions.len()];
    loop {
        let mut change: f64 = 0.0;
        for (i, d) in graph.decisions.iter().enumerate() {
            if let Err(stop) = budget.expand() {
                return stopped(budget, stop);
            }
            let new = graph.value(d, &values);
            change = change.max((new - values[i]).abs());
            values[i] = new;
        }
        if change <= tolerance {
            break;
        }
    }
    let root_moves = &graph.decisions[0].moves;
    let move_values = graph.moves[root_moves.start as usize..root_moves.end as usize]
        .iter()
        .map(|m| (m.mv, graph.move_value(m, &values)))
        .collect();
    let d = &graph.decisions[0];
    GameReport {
        answer: Answer::choose(d.side, move_values, 0, true, d.over),
        stop: None,
        stats: budget.finish(),
    }
}
