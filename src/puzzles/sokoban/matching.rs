//! Minimum-cost perfect matching of boxes to goals (the Hungarian algorithm, O(n³)),
//! the lower bound of the Sokoban search. A square with no path to a goal costs
//! [`FORBIDDEN`]; a matching that needs one proves a bipartite deadlock.

/// Cost of an impossible pair, above any sum of real push distances.
pub const FORBIDDEN: i64 = 1 << 32;

/// Reusable buffers, so the per-node computation allocates nothing.
#[derive(Clone, Debug, Default)]
pub struct Hungarian {
    u: Vec<i64>,
    v: Vec<i64>,
    owner: Vec<usize>,
    way: Vec<usize>,
    min_slack: Vec<i64>,
    used: Vec<bool>,
}

impl Hungarian {
    /// The cheapest assignment of `n` rows to `n` columns under `cost(row, col)`, or
    /// `None` when every perfect assignment uses a [`FORBIDDEN`] pair.
    pub fn solve(&mut self, n: usize, cost: impl Fn(usize, usize) -> i64) -> Option<i64> {
        // 1-based with column 0 as the sentinel, after the classic e-maxx formulation.
        for buffer in [&mut self.u, &mut self.v, &mut self.min_slack] {
            buffer.clear();
            buffer.resize(n + 1, 0);
        }
        self.owner.clear();
        self.owner.resize(n + 1, 0);
        self.way.clear();
        self.way.resize(n + 1, 0);
        for row in 1..=n {
            self.owner[0] = row;
            let mut col0 = 0;
            self.min_slack.iter_mut().for_each(|m| *m = i64::MAX);
            self.used.clear();
            self.used.resize(n + 1, false);
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
        let total = -self.v[0];
        (total < FORBIDDEN).then_some(total)
    }
}
