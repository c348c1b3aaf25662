//! Murase, Matsubara and Hiraga's placement (PRICAI 1996): goals where a box can be
//! parked, each box where its goal's box could be pulled to, the sets recomputed after
//! each box (placed boxes count as walls), the player anywhere free.

use super::room::{Floor, NO};
use crate::puzzles::sokoban::Direction;
use crate::search::rng::Rng;

/// Wall probability of the seed's maps, which the paper does not give: chosen so that 500
/// maps of 8×8 with 3 boxes split as its table does (benches/generate.py).
pub const WALL_PROBABILITY: f64 = 0.22;

/// Goals, boxes and the player on `floor`, or `None` when some box has nowhere to go
/// (the seed's "dropped while generating").
pub fn place(floor: &Floor, n_boxes: usize, rng: &mut Rng) -> Option<(Vec<u8>, Vec<u8>, u8)> {
    let mut goals: Vec<u8> = Vec::with_capacity(n_boxes);
    let mut boxes: Vec<u8> = Vec::with_capacity(n_boxes);
    for _ in 0..n_boxes {
        let free = |s: u8| s != NO && !boxes.contains(&s);
        let parkable: Vec<u8> = (0..floor.len() as u8)
            .filter(|&s| free(s) && !goals.contains(&s))
            .filter(|&s| {
                Direction::ALL.iter().any(|&d| {
                    let behind = floor.step(s, d.opposite());
                    free(behind) && free(floor.step(behind, d.opposite()))
                })
            })
            .collect();
        if parkable.is_empty() {
            return None;
        }
        let goal = parkable[rng.below(parkable.len())];
        let starts: Vec<u8> = pull_reach(floor, goal, &boxes)
            .into_iter()
            .filter(|&s| s != goal && !goals.contains(&s))
            .collect();
        if starts.is_empty() {
            return None;
        }
        goals.push(goal);
        boxes.push(starts[rng.below(starts.len())]);
    }
    let free: Vec<u8> = (0..floor.len() as u8)
        .filter(|s| !boxes.contains(s))
        .collect();
    let player = *free.get(rng.below(free.len().max(1)))?;
    Some((goals, boxes, player))
}

/// Squares a lone box on `goal` can be pulled to, `walls` (placed boxes) in the way;
/// the player is assumed able to walk anywhere, as in the seed.
fn pull_reach(floor: &Floor, goal: u8, walls: &[u8]) -> Vec<u8> {
    let open = |s: u8| s != NO && !walls.contains(&s);
    let mut seen = vec![false; floor.len()];
    let mut queue = vec![goal];
    seen[goal as usize] = true;
    let mut next = 0;
    while next < queue.len() {
        let at = queue[next];
        next += 1;
        for d in Direction::ALL {
            let to = floor.step(at, d);
            if open(to) && open(floor.step(to, d)) && !seen[to as usize] {
                seen[to as usize] = true;
                queue.push(to);
            }
        }
    }
    queue
}
