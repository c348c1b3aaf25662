//! Iterative-deepening A* (Korf 1985): depth-first searches bounded by f = g + w·h,
//! each bound the smallest f that exceeded the previous one. Keeps only the current
//! path; successor buffers are reused per depth, so the hot loop allocates nothing
//! once the deepest depth has been reached.

use super::{Budget, Cost, Domain, Outcome, Solution, Stop, Successor, Weight};

struct Ida<'d, 'b, 'c, D: Domain> {
    domain: &'d D,
    weight: Weight,
    budget: &'b mut Budget<'c>,
    path: Vec<D::Action>,
    /// One successor buffer per depth, taken and returned around each expansion.
    buffers: Vec<Vec<Successor<D::State, D::Action>>>,
    /// Per depth, (estimate, index) of the successors worth visiting, best first.
    orders: Vec<Vec<(Cost, u32)>>,
    /// Smallest f above the current threshold seen in this iteration.
    next_threshold: u64,
}

enum Dfs {
    Found(Cost),
    NotFound,
}

pub fn search<D: Domain>(domain: &D, weight: Weight, budget: &mut Budget) -> Outcome<D::Action> {
    let root = domain.initial_state();
    if let Err(stop) = budget.cut_short() {
        return Outcome::Stopped(stop);
    }
    let Some(h0) = domain.estimate(&root) else {
        return Outcome::Unsolvable;
    };
    let mut ida = Ida::<D> {
        domain,
        weight,
        budget,
        path: Vec::new(),
        buffers: Vec::new(),
        orders: Vec::new(),
        next_threshold: u64::MAX,
    };
    let mut threshold = weight.f(0, h0);
    loop {
        ida.budget.set_bound(threshold_in_moves(threshold));
        ida.next_threshold = u64::MAX;
        match ida.dfs(&root, 0, h0, threshold, None) {
            Ok(Dfs::Found(cost)) => {
                return Outcome::Solved(Solution {
                    actions: std::mem::take(&mut ida.path),
                    cost,
                });
            }
            Ok(Dfs::NotFound) if ida.next_threshold == u64::MAX => return Outcome::Unsolvable,
            Ok(Dfs::NotFound) => threshold = ida.next_threshold,
            Err(stop) => return Outcome::Stopped(stop),
        }
    }
}

/// Thresholds are scaled by 100 (see [`Weight`]); report them in moves.
fn threshold_in_moves(threshold: u64) -> Cost {
    (threshold / 100).min(u64::from(Cost::MAX)) as Cost
}

impl<D: Domain> Ida<'_, '_, '_, D> {
    fn dfs(
        &mut self,
        state: &D::State,
        g: Cost,
        h: Cost,
        threshold: u64,
        last: Option<D::Action>,
    ) -> Result<Dfs, Stop> {
        let f = self.weight.f(g, h);
        if f > threshold {
            self.next_threshold = self.next_threshold.min(f);
            return Ok(Dfs::NotFound);
        }
        if self.domain.is_goal(state) {
            return Ok(Dfs::Found(g));
        }
        self.budget.expand()?;

        let depth = self.path.len();
        if self.buffers.len() <= depth {
            self.buffers.push(Vec::new());
            self.orders.push(Vec::new());
        }
        // Successors are large; they are written once and visited through `order`.
        let mut children = std::mem::take(&mut self.buffers[depth]);
        let mut order = std::mem::take(&mut self.orders[depth]);
        children.clear();
        order.clear();
        self.domain.expand(state, &mut children);
        self.budget.generated(children.len());
        if let Err(stop) = self.budget.cut_short() {
            self.orders[depth] = order;
            self.buffers[depth] = children;
            return Err(stop);
        }
        for (i, successor) in children.iter().enumerate() {
            if last.is_some_and(|prev| self.domain.reverses(prev, successor.action)) {
                continue;
            }
            if let Some(h) = self.domain.estimate(&successor.state) {
                order.push((h, i as u32));
            }
        }
        // Most promising first: the last iteration finds the goal sooner.
        order.sort_unstable();

        let mut result = Ok(Dfs::NotFound);
        for &(child_h, i) in &order {
            let successor = &children[i as usize];
            self.path.push(successor.action);
            match self.dfs(
                &successor.state,
                g + successor.cost,
                child_h,
                threshold,
                Some(successor.action),
            ) {
                Ok(Dfs::NotFound) => {
                    self.path.pop();
                }
                found_or_stopped => {
                    result = found_or_stopped;
                    break;
                }
            }
        }
        self.orders[depth] = order;
        self.buffers[depth] = children;
        result
    }
}
