//! Minimum-cost perfect matching of boxes to goals (the Hungarian algorithm, O(n³)),
//! the lower bound of the Sokoban search. A square with no path to a goal costs
//! [`FORBIDDEN`]; a matching that needs one proves a bipartite deadlock.

use crate::search::{Interrupt, Stop};

/// Cost of an impossible pair, above any sum of real push distances.
pub const FORBIDDEN: i64 = 1 << 32;

/// Reusable buffers, so the per-node computation allocates nothing. After
/// [`Hungarian::solve`] the optimal duals are kept, and [`Hungarian::resolve_row`] finds
/// the optimum again after one row's costs change (one box pushed) in O(n²).
#[derive(Clone, Debug, Default)]
pub struct Hungarian {
    u: Vec<i64>,
    v: Vec<i64>,
    /// `owner[col]`: the row matched to `col` (1-based; 0 = none).
    owner: Vec<usize>,
    base_u: Vec<i64>,
    base_v: Vec<i64>,
    base_owner: Vec<usize>,
    /// Per row (1-based), the column the base optimum gives it and that pair's cost.
    base_pair: Vec<(usize, i64)>,
    base_total: i64,
    way: Vec<usize>,
    min_slack: Vec<i64>,
    used: Vec<bool>,
}

impl Hungarian {
    /// The cheapest assignment of `n` rows to `n` columns under `cost(row, col)`, or
    /// `None` when every perfect assignment uses a [`FORBIDDEN`] pair. O(n³): with
    /// hundreds of boxes that is long, so `interrupt` is polled once per row, and an
    /// `Err` leaves the solver without a base for [`Hungarian::resolve_row`].
    pub fn solve(
        &mut self,
        n: usize,
        cost: impl Fn(usize, usize) -> i64,
        interrupt: &Interrupt,
    ) -> Result<Option<i64>, Stop> {
        let row_work = u32::try_from(n * n).unwrap_or(u32::MAX);
        for buffer in [&mut self.u, &mut self.v] {
            buffer.clear();
            buffer.resize(n + 1, 0);
        }
        self.owner.clear();
        self.owner.resize(n + 1, 0);
        for row in 1..=n {
            interrupt.poll(row_work)?;
            self.augment(n, row, &cost);
        }
        self.base_u.clone_from(&self.u);
        self.base_v.clone_from(&self.v);
        self.base_owner.clone_from(&self.owner);
        self.base_pair.clear();
        self.base_pair.resize(n + 1, (0, 0));
        for col in 1..=n {
            let row = self.owner[col];
            self.base_pair[row] = (col, cost(row - 1, col - 1));
        }
        self.base_total = self.base_pair.iter().map(|&(_, c)| c).sum();
        Ok((self.base_total < FORBIDDEN).then_some(self.base_total))
    }

    /// The optimum when only `row`'s costs differ from those of the last
    /// [`Hungarian::solve`]: the row's dual is made feasible again (its least reduced
    /// cost). When that least is at the column the row already holds, the old
    /// assignment is still optimal (every pair tight, every dual feasible), which is
    /// the usual case and costs O(n); otherwise the row is unmatched and one augmenting
    /// path from the stored duals finds the optimum in O(n²).
    pub fn resolve_row(
        &mut self,
        n: usize,
        row: usize,
        cost: impl Fn(usize, usize) -> i64,
    ) -> Option<i64> {
        let row = row + 1;
        let (held, old) = self.base_pair[row];
        let least = (1..=n)
            .map(|col| cost(row - 1, col - 1) - self.base_v[col])
            .min()
            .unwrap_or(0);
        let own = cost(row - 1, held - 1);
        if own - self.base_v[held] == least {
            let total = self.base_total - old + own;
            return (total < FORBIDDEN).then_some(total);
        }
        self.u.clone_from(&self.base_u);
        self.v.clone_from(&self.base_v);
        self.owner.clone_from(&self.base_owner);
        self.owner[held] = 0;
        self.u[row] = least;
        self.augment(n, row, &cost);
        self.total(n, &cost)
    }

    fn total(&self, n: usize, cost: &impl Fn(usize, usize) -> i64) -> Option<i64> {
        let total: i64 = (1..=n).map(|col| cost(self.owner[col] - 1, col - 1)).sum();
        (total < FORBIDDEN).then_some(total)
    }

    /// One phase of the e-maxx formulation (1-based, column 0 the sentinel): a
    /// shortest augmenting path from the free `row`, keeping the duals feasible.
    fn augment(&mut self, n: usize, row: usize, cost: &impl Fn(usize, usize) -> i64) {
        self.way.clear();
        self.way.resize(n + 1, 0);
        self.min_slack.clear();
        self.min_slack.resize(n + 1, i64::MAX);
        self.used.clear();
        self.used.resize(n + 1, false);
        self.owner[0] = row;
        let mut col0 = 0;
        loop {
            self.used[col0] = true;
            let row0 = self.owner[col0];
            let mut delta = i64::MAX;
            let mut col1 = 0;
            for col in 1..=n {
                if self.used[col] {
                    continue;
                }
                let slack = cost(row0 - 1, col - 1) - self.u[row0] - self.v[col];
                if slack < self.min_slack[col] {
                    self.min_slack[col] = slack;
                    self.way[col] = col0;
                }
                if self.min_slack[col] < delta {
                    delta = self.min_slack[col];
                    col1 = col;
                }
            }
            for col in 0..=n {
                if self.used[col] {
                    self.u[self.owner[col]] += delta;
                    self.v[col] -= delta;
                } else {
                    self.min_slack[col] -= delta;
                }
            }
            col0 = col1;
            if self.owner[col0] == 0 {
                break;
            }
        }
        loop {
            let col1 = self.way[col0];
            self.owner[col0] = self.owner[col1];
            col0 = col1;
            if col0 == 0 {
                break;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Brute force over all permutations, for small matrices.
    fn brute(costs: &[Vec<i64>]) -> Option<i64> {
        fn go(costs: &[Vec<i64>], row: usize, used: &mut Vec<bool>) -> i64 {
            if row == costs.len() {
                return 0;
            }
            let mut best = i64::MAX;
            for c in 0..costs.len() {
                if !used[c] {
                    used[c] = true;
                    best = best.min(costs[row][c].saturating_add(go(costs, row + 1, used)));
                    used[c] = false;
                }
            }
            best
        }
        let best = go(costs, 0, &mut vec![false; costs.len()]);
        (best < FORBIDDEN).then_some(best)
    }

    proptest::proptest! {
        #[test]
        fn full_and_incremental_solves_match_brute_force(
            cells in proptest::collection::vec(0i64..12, 25),
            changed in proptest::collection::vec(0i64..12, 5),
        ) {
            let n = 5;
            let cost = |v: i64| if v >= 10 { FORBIDDEN } else { v };
            let costs: Vec<Vec<i64>> =
                cells.chunks(n).map(|r| r.iter().map(|&v| cost(v)).collect()).collect();
            let mut hungarian = Hungarian::default();
            let solved = hungarian.solve(n, |r, c| costs[r][c], &Interrupt::never());
            proptest::prop_assert_eq!(solved, Ok(brute(&costs)));
            // Each row changed in turn, from the same base: the old assignment kept
            // (a cheap repair) or an augmenting path needed.
            for row in 0..n {
                let mut new = costs.clone();
                new[row] = changed.iter().map(|&v| cost(v)).collect();
                proptest::prop_assert_eq!(
                    hungarian.resolve_row(n, row, |r, c| new[r][c]),
                    brute(&new)
                );
            }
        }
    }
}
