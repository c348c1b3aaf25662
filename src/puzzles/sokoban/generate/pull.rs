//! Sokoban played backwards: a breadth-first search of pulls from the solved position.
//! A pull undoes a push, so a position first reached after `d` pulls needs exactly `d`
//! pushes to solve: the search proves the push optimum of every position it reaches,
//! even when it stops early (breadth-first order).

use rustc_hash::FxHashMap;

use super::room::{Floor, NO};
use crate::puzzles::sokoban::Direction;
use crate::search::{Interrupt, Stop};

/// One reached position: boxes (sorted) and the player's region (its least square)
/// packed in a `u128`, the node it was pulled from, and the push that goes back there.
#[derive(Clone, Copy, Debug)]
struct Node {
    key: u128,
    parent: u32,
    depth: u16,
    /// The forward push: the box on `from` pushed in `direction`.
    from: u8,
    direction: u8,
}

/// A push of the box on `from` in `direction`, on the generator's floor numbering.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FloorPush {
    pub from: u8,
    pub direction: Direction,
}

/// What the pull search reached.
pub struct Pulls {
    nodes: Vec<Node>,
}

/// A start position the search chose: boxes, a square of the player's region, the
/// optimal push count and a push-optimal solution.
#[derive(Clone, Debug)]
pub struct Chosen {
    pub boxes: Vec<u8>,
    pub player: u8,
    pub pushes: Vec<FloorPush>,
    pub shape: super::rating::Shape,
}

fn pack(boxes: &[u8], player: u8) -> u128 {
    let mut key = u128::from(player) << 64;
    for (i, &b) in boxes.iter().enumerate() {
        key |= u128::from(b) << (8 * i);
    }
    key
}

fn unpack(key: u128, n: usize, boxes: &mut Vec<u8>) -> u8 {
    boxes.clear();
    boxes.extend((0..n).map(|i| (key >> (8 * i)) as u8));
    (key >> 64) as u8
}

/// Reused buffers of a search: box occupancy and a stamped flood fill.
struct Scratch {
    occupied: Vec<bool>,
    stamp: Vec<u32>,
    generation: u32,
    queue: Vec<u8>,
}

impl Scratch {
    /// The player's region from `start`, left in `self.queue`; returns its least square.
    fn region(&mut self, floor: &Floor, start: u8) -> u8 {
        self.generation += 1;
        self.queue.clear();
        self.queue.push(start);
        self.stamp[start as usize] = self.generation;
        let mut least = start;
        let mut next = 0;
        while next < self.queue.len() {
            let square = self.queue[next];
            next += 1;
            for &s in &floor.next[square as usize] {
                if s != NO
                    && self.stamp[s as usize] != self.generation
                    && !self.occupied[s as usize]
                {
                    self.stamp[s as usize] = self.generation;
                    least = least.min(s);
                    self.queue.push(s);
                }
            }
        }
        least
    }
}

/// Pulls breadth-first from the boxes on `goals` (at most 8), the player in each region
/// of the free floor, until `max_states` positions are stored; polls `interrupt`.
pub fn search(
    floor: &Floor,
    goals: &[u8],
    max_states: usize,
    interrupt: &Interrupt,
) -> Result<Pulls, Stop> {
    let n = goals.len();
    let mut scratch = Scratch {
        occupied: vec![false; floor.len()],
        stamp: vec![0; floor.len()],
        generation: 0,
        queue: Vec::with_capacity(floor.len()),
    };
    let mut goals = goals.to_vec();
    goals.sort_unstable();
    for &g in &goals {
        scratch.occupied[g as usize] = true;
    }
    let mut nodes: Vec<Node> = Vec::new();
    let mut seen: FxHashMap<u128, u32> = FxHashMap::default();
    let mut covered = vec![false; floor.len()];
    for square in 0..floor.len() as u8 {
        if scratch.occupied[square as usize] || covered[square as usize] {
            continue;
        }
        let least = scratch.region(floor, square);
        for &s in &scratch.queue {
            covered[s as usize] = true;
        }
        let key = pack(&goals, least);
        seen.insert(key, nodes.len() as u32);
        nodes.push(Node {
            key,
            parent: u32::MAX,
            depth: 0,
            from: NO,
            direction: 0,
        });
    }
    let mut boxes = Vec::with_capacity(n);
    let mut pulled = Vec::with_capacity(n);
    let mut region = Vec::with_capacity(floor.len());
    let mut next = 0;
    while next < nodes.len() && nodes.len() < max_states {
        let node = nodes[next];
        let player = unpack(node.key, n, &mut boxes);
        for &b in &boxes {
            scratch.occupied[b as usize] = true;
        }
        scratch.region(floor, player);
        region.clear();
        region.extend_from_slice(&scratch.queue);
        for &x in &region {
            for direction in Direction::ALL {
                let b = floor.step(x, direction);
                let y = floor.step(x, direction.opposite());
                if b == NO
                    || y == NO
                    || !scratch.occupied[b as usize]
                    || scratch.occupied[y as usize]
                {
                    continue;
                }
                scratch.occupied[b as usize] = false;
                scratch.occupied[x as usize] = true;
                let least = scratch.region(floor, y);
                scratch.occupied[x as usize] = false;
                scratch.occupied[b as usize] = true;
                pulled.clear();
                pulled.extend_from_slice(&boxes);
                let i = pulled.iter().position(|&s| s == b).unwrap_or(0);
                pulled[i] = x;
                pulled.sort_unstable();
                let key = pack(&pulled, least);
                if let std::collections::hash_map::Entry::Vacant(entry) = seen.entry(key) {
                    entry.insert(nodes.len() as u32);
                    nodes.push(Node {
                        key,
                        parent: next as u32,
                        depth: node.depth + 1,
                        from: x,
                        direction: direction.index() as u8,
                    });
                }
            }
        }
        for &b in &boxes {
            scratch.occupied[b as usize] = false;
        }
        interrupt.poll(region.len() as u32 * 4)?;
        next += 1;
    }
    Ok(Pulls { nodes })
}

impl Pulls {
    pub fn states(&self) -> usize {
        self.nodes.len()
    }

    /// The deepest push optimum reached.
    pub fn depth(&self) -> u16 {
        self.nodes.last().map_or(0, |n| n.depth)
    }

    /// The pushes that solve the position of node `i`, in order.
    fn pushes(&self, mut i: usize) -> Vec<FloorPush> {
        let mut pushes = Vec::with_capacity(self.nodes[i].depth as usize);
        while self.nodes[i].parent != u32::MAX {
            let node = self.nodes[i];
            pushes.push(FloorPush {
                from: node.from,
                direction: Direction::ALL[node.direction as usize],
            });
            i = node.parent as usize;
        }
        pushes
    }

    /// Among the deepest positions (at most `look` of them), the one whose solution
    /// changes boxes most often, then has most box lines: the start of a level.
    /// `None` when no pull was possible.
    pub fn choose(&self, floor: &Floor, n_boxes: usize, look: usize) -> Option<Chosen> {
        let depth = self.depth();
        if depth == 0 {
            return None;
        }
        let mut best: Option<((u32, u32), super::rating::Shape, usize)> = None;
        for i in (0..self.nodes.len()).rev().take(look) {
            if self.nodes[i].depth != depth {
                break;
            }
            let pushes = self.pushes(i);
            let shape = super::rating::lines_and_changes(pushes.iter().map(|p| {
                (
                    usize::from(p.from),
                    usize::from(floor.step(p.from, p.direction)),
                    p.direction,
                )
            }));
            let score = (shape.box_changes, shape.box_lines);
            if best.is_none_or(|(b, ..)| score > b) {
                best = Some((score, shape, i));
            }
        }
        let (_, shape, i) = best?;
        let mut boxes = Vec::with_capacity(n_boxes);
        let player = unpack(self.nodes[i].key, n_boxes, &mut boxes);
        Some(Chosen {
            boxes,
            player,
            pushes: self.pushes(i),
            shape,
        })
    }
}
