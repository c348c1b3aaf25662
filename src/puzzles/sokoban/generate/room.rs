//! Rooms: a wall grid with a border of walls, laid out by a random walk (the reverse
//! method) or by random walls that keep the floor connected (Murase's), and its floor
//! numbered densely for the generator's searches.

use crate::puzzles::sokoban::Direction;
use crate::search::rng::Rng;

/// No floor square: a wall or off the grid.
pub const NO: u8 = u8::MAX;

/// A `width` × `height` grid of walls and floor, row-major, walls all round.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Room {
    pub width: usize,
    pub height: usize,
    pub wall: Vec<bool>,
}

impl Room {
    fn walled(width: usize, height: usize) -> Room {
        Room {
            width,
            height,
            wall: vec![true; width * height],
        }
    }

    fn interior(&self) -> impl Iterator<Item = usize> + '_ {
        (1..self.height - 1).flat_map(move |r| (1..self.width - 1).map(move |c| r * self.width + c))
    }

    fn step(&self, cell: usize, direction: Direction) -> usize {
        match direction {
            Direction::Left => cell - 1,
            Direction::Right => cell + 1,
            Direction::Up => cell - self.width,
            Direction::Down => cell + self.width,
        }
    }

    fn is_border(&self, cell: usize) -> bool {
        let (r, c) = (cell / self.width, cell % self.width);
        r == 0 || c == 0 || r + 1 == self.height || c + 1 == self.width
    }

    /// A random walk that carves floor from a random inner cell until `share` of the
    /// inner cells are floor; it turns at random, so rooms mix corridors and open areas
    /// (the Boxoban generator's way).
    pub fn random_walk(width: usize, height: usize, share: f64, rng: &mut Rng) -> Room {
        let mut room = Room::walled(width, height);
        let inner = (width - 2) * (height - 2);
        let target = ((inner as f64 * share).round() as usize).clamp(1, inner);
        let mut cell = (1 + rng.below(height - 2)) * width + 1 + rng.below(width - 2);
        let mut direction = Direction::ALL[rng.below(4)];
        room.wall[cell] = false;
        let mut carved = 1;
        while carved < target {
            if rng.chance(0.35) {
                direction = Direction::ALL[rng.below(4)];
            }
            let next = room.step(cell, direction);
            if room.is_border(next) {
                direction = Direction::ALL[rng.below(4)];
                continue;
            }
            cell = next;
            if room.wall[cell] {
                room.wall[cell] = false;
                carved += 1;
            }
        }
        room
    }

    /// Murase's map: every inner cell floor, then each made a wall with probability
    /// `p`, in random order, unless that would split the floor.
    pub fn random_walls(width: usize, height: usize, p: f64, rng: &mut Rng) -> Room {
        let mut room = Room::walled(width, height);
        let mut cells: Vec<usize> = room.interior().collect();
        for &cell in &cells {
            room.wall[cell] = false;
        }
        rng.shuffle(&mut cells);
        for cell in cells {
            if rng.chance(p) {
                room.wall[cell] = true;
                if !room.floor_connected() {
                    room.wall[cell] = false;
                }
            }
        }
        room
    }

    fn floor_connected(&self) -> bool {
        let floor = Floor::new(self);
        floor.len() > 0 && floor.reach(0, |_| true).len() == floor.len()
    }
}

/// The floor of a room numbered densely (`u8`: at most 254 squares), with each
/// square's neighbours in LURD order.
#[derive(Clone, Debug)]
pub struct Floor {
    pub cells: Vec<usize>,
    pub next: Vec<[u8; 4]>,
}

impl Floor {
    pub fn new(room: &Room) -> Floor {
        let mut index = vec![NO; room.wall.len()];
        let cells: Vec<usize> = (0..room.wall.len()).filter(|&c| !room.wall[c]).collect();
        for (i, &cell) in cells.iter().enumerate() {
            index[cell] = i as u8;
        }
        let next = cells
            .iter()
            .map(|&cell| Direction::ALL.map(|d| index[room.step(cell, d)]))
            .collect();
        Floor { cells, next }
    }

    pub fn len(&self) -> usize {
        self.cells.len()
    }

    /// The neighbour of `square` in `direction`, or [`NO`].
    #[inline]
    pub fn step(&self, square: u8, direction: Direction) -> u8 {
        self.next[square as usize][direction.index()]
    }

    /// The squares reachable from `start` through squares where `open` holds.
    pub fn reach(&self, start: u8, open: impl Fn(u8) -> bool) -> Vec<u8> {
        let mut seen = vec![false; self.len()];
        let mut queue = vec![start];
        seen[start as usize] = true;
        let mut next = 0;
        while next < queue.len() {
            let square = queue[next];
            next += 1;
            for &s in &self.next[square as usize] {
                if s != NO && !seen[s as usize] && open(s) {
                    seen[s as usize] = true;
                    queue.push(s);
                }
            }
        }
        queue
    }
}
