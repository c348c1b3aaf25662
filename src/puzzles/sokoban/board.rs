//! A level compiled for search: the squares the player can ever reach numbered
//! densely, their neighbours, push distances to every goal and the dead squares.

use super::{Direction, Level};
use crate::search::{Interrupt, Stop};

/// No square: a wall, or off the player's area.
pub const NONE: u16 = u16::MAX;
/// Push distance of a square from which a goal cannot be reached.
pub const UNREACHABLE: u16 = u16::MAX;

/// Static facts about a level, computed once per job.
#[derive(Clone, Debug)]
pub struct Board {
    /// Level cell of each square.
    cells: Vec<usize>,
    /// Square of each level cell, or [`NONE`].
    square_of: Vec<u16>,
    /// Per square, the neighbour in each [`Direction`] (LURD order), or [`NONE`].
    neighbours: Vec<[u16; 4]>,
    goal: Vec<bool>,
    goals: Vec<u16>,
    /// `distance[s * goals + g]`: pushes to bring a box from square `s` to goal `g` on an
    /// otherwise empty board (the player only needs room behind the box).
    distance: Vec<u16>,
    /// Squares from which no goal can be reached, the player walking round the box only
    /// where the floor allows ([`super::dead_squares`]): a box there is lost.
    dead: Vec<bool>,
    /// Per goal (as numbered in `goals`), its packing layer ([`super::packing`]):
    /// deeper goals should be filled first.
    layer: Vec<u16>,
    start_boxes: Vec<u16>,
    start_player: u16,
    /// Boxes or goals the player can never reach (decoration off goals, or stranded):
    /// the level cannot be solved.
    stranded: bool,
}

impl Board {
    /// [`Board::build`] without limits.
    pub fn new(level: &Level) -> Board {
        match Board::build(level, &Interrupt::never()) {
            Ok(board) => board,
            Err(stop) => unreachable!("an interrupt that never trips stopped: {stop:?}"),
        }
    }

    /// Compiles `level`, polling `interrupt` in the per-goal and per-round loops (a big
    /// open level has hundreds of goals over thousands of squares); its memory cap
    /// counts the distance table.
    pub fn build(level: &Level, interrupt: &Interrupt) -> Result<Board, Stop> {
        // The player's area, walking through boxes: nothing outside it can ever move.
        let n_cells = level.rows() * level.cols();
        let mut square_of = vec![NONE; n_cells];
        let mut cells = vec![level.player()];
        square_of[level.player()] = 0;
        let mut next = 0;
        while next < cells.len() {
            let cell = cells[next];
            next += 1;
            for direction in Direction::ALL {
                if let Some(c) = level.step(cell, direction)
                    && !level.is_wall(c)
                    && square_of[c] == NONE
                {
                    square_of[c] = cells.len() as u16;
                    cells.push(c);
                }
            }
        }
        let neighbours = cells
            .iter()
            .map(|&cell| Direction::ALL.map(|d| level.step(cell, d).map_or(NONE, |c| square_of[c])))
            .collect();
        let goal: Vec<bool> = cells.iter().map(|&c| level.is_goal(c)).collect();
        let goals: Vec<u16> = (0..cells.len() as u16)
            .filter(|&s| goal[s as usize])
            .collect();
        let start_boxes: Vec<u16> = (0..cells.len() as u16)
            .filter(|&s| level.has_box(cells[s as usize]))
            .collect();
        // Outside the area a box on a goal is decoration; anything else is stranded.
        let stranded = (0..n_cells).any(|c| {
            square_of[c] == NONE && !level.is_wall(c) && level.has_box(c) != level.is_goal(c)
        });
        let mut board = Board {
            cells,
            square_of,
            neighbours,
            goal,
            goals,
            distance: Vec::new(),
            dead: Vec::new(),
            layer: Vec::new(),
            start_boxes,
            start_player: 0,
            stranded,
        };
        let n = board.n_squares();
        let distance_bytes = (n * board.goals.len() * size_of::<u16>()) as u64;
        interrupt.check_holding(distance_bytes)?;
        board.distance = board.push_distances(interrupt)?;
        board.layer = super::packing::layers(&board, interrupt)?;
        board.dead = super::dead_squares::dead_squares(&board, interrupt)?;
        Ok(board)
    }

    /// Breadth-first pulls from every goal (see [`Board::pull_from`]), stored square by
    /// square: the matching reads one square's distances to all goals at a time.
    fn push_distances(&self, interrupt: &Interrupt) -> Result<Vec<u16>, Stop> {
        let n = self.n_squares();
        let goals = self.goals.len();
        let mut distance = vec![UNREACHABLE; goals * n];
        let mut row = vec![UNREACHABLE; n];
        let mut queue = Vec::with_capacity(n);
        for (g, &goal) in self.goals.iter().enumerate() {
            interrupt.poll(4 * n as u32)?;
            row.fill(UNREACHABLE);
            self.pull_from(goal, NONE, &mut row, &mut queue);
            for (s, &d) in row.iter().enumerate() {
                distance[s * goals + g] = d;
            }
        }
        Ok(distance)
    }

    /// Pushes from each square to `goal` on a board empty but for a box on `blocked`
    /// ([`NONE`] for none), written into `row` (which must hold [`UNREACHABLE`]). A box
    /// pulled from `s` to `s - d` needs the player on `s - 2d`, so the reverse of each
    /// pull is a legal push.
    pub(super) fn pull_from(&self, goal: u16, blocked: u16, row: &mut [u16], queue: &mut Vec<u16>) {
        row[goal as usize] = 0;
        queue.clear();
        queue.push(goal);
        let mut next = 0;
        while next < queue.len() {
            let square = queue[next];
            next += 1;
            for direction in Direction::ALL {
                let back = direction.opposite();
                let from = self.neighbour(square, back);
                if from == NONE || from == blocked {
                    continue;
                }
                let player = self.neighbour(from, back);
                if player != NONE && player != blocked && row[from as usize] == UNREACHABLE {
                    row[from as usize] = row[square as usize] + 1;
                    queue.push(from);
                }
            }
        }
    }

    /// Per square, the fewest pushes from any start box to it on a board without other
    /// boxes: each push needs floor behind the box, but whether the player can walk
    /// there is not asked, so the count is never too high. `u16::MAX` where no start
    /// box arrives.
    pub(super) fn pushes_from_start(&self) -> Vec<u16> {
        self.pushes_from_start_past(|_| false)
    }

    /// [`Board::pushes_from_start`] with the `walled` squares taken as walls, for box
    /// and player alike; a start box on one of them goes nowhere.
    pub(super) fn pushes_from_start_past(&self, walled: impl Fn(u16) -> bool) -> Vec<u16> {
        let mut from_start = vec![u16::MAX; self.n_squares()];
        let mut queue: Vec<u16> = self
            .start_boxes
            .iter()
            .copied()
            .filter(|&b| !walled(b))
            .collect();
        self.pushes_from(&mut queue, &mut from_start, walled);
        from_start
    }

    /// The fewest pushes from any box on `queue` to each square on a board without
    /// other boxes, the `walled` squares taken as walls for box and player alike: each
    /// push needs open floor behind the box, whether the player can walk there is not
    /// asked. Written into `pushes`, which must hold `u16::MAX` (no way there).
    pub(super) fn pushes_from(
        &self,
        queue: &mut Vec<u16>,
        pushes: &mut [u16],
        walled: impl Fn(u16) -> bool,
    ) {
        for &b in queue.iter() {
            pushes[b as usize] = 0;
        }
        let open = |s: u16| s != NONE && !walled(s);
        let mut next = 0;
        while next < queue.len() {
            let square = queue[next];
            next += 1;
            for direction in Direction::ALL {
                let to = self.neighbour(square, direction);
                let behind = self.neighbour(square, direction.opposite());
                if open(to) && open(behind) && pushes[to as usize] == u16::MAX {
                    pushes[to as usize] = pushes[square as usize] + 1;
                    queue.push(to);
                }
            }
        }
    }

    /// Goals filled while a deeper goal (see [`super::packing`]) is still empty: each is
    /// a box that will likely have to move again, or blocks the way in.
    pub fn packing_faults(&self, has_box: impl Fn(u16) -> bool) -> u32 {
        let deepest_empty = (0..self.goals.len())
            .filter(|&i| !has_box(self.goals[i]))
            .map(|i| self.layer[i])
            .max();
        let Some(deepest_empty) = deepest_empty else {
            return 0;
        };
        (0..self.goals.len())
            .filter(|&i| has_box(self.goals[i]) && self.layer[i] < deepest_empty)
            .count() as u32
    }

    /// The deepest packing layer among the empty goals (`None` when every goal holds a
    /// box): a box put on a goal of this layer or deeper fills it in order.
    pub fn deepest_empty_layer(&self, has_box: impl Fn(u16) -> bool) -> Option<u16> {
        (0..self.goals.len())
            .filter(|&i| !has_box(self.goals[i]))
            .map(|i| self.layer[i])
            .max()
    }

    /// The packing layer of goal square `square`; `None` off the goals.
    pub fn layer_of(&self, square: u16) -> Option<u16> {
        self.goals
            .binary_search(&square)
            .ok()
            .map(|i| self.layer[i])
    }

    /// Breadth-first search from the squares on `queue` (marked in `seen` already),
    /// entering squares where `open` holds; `entered(square, direction)` hears of each
    /// square reached and the step that reached it.
    pub fn breadth_first(
        &self,
        queue: &mut Vec<u16>,
        seen: &mut [bool],
        open: impl Fn(u16) -> bool,
        mut entered: impl FnMut(u16, Direction),
    ) {
        let mut next = 0;
        while next < queue.len() {
            let square = queue[next];
            next += 1;
            for direction in Direction::ALL {
                let s = self.neighbour(square, direction);
                if s != NONE && !seen[s as usize] && open(s) {
                    seen[s as usize] = true;
                    entered(s, direction);
                    queue.push(s);
                }
            }
        }
    }

    /// Heap bytes of the board's tables, the push distances above all (squares ×
    /// goals): on the largest levels they count against a job's memory cap.
    pub fn table_bytes(&self) -> usize {
        self.cells.len() * size_of::<usize>()
            + self.square_of.len() * size_of::<u16>()
            + self.neighbours.len() * size_of::<[u16; 4]>()
            + (self.goal.len() + self.dead.len())
            + (self.goals.len() + self.layer.len() + self.start_boxes.len()) * size_of::<u16>()
            + self.distance.len() * size_of::<u16>()
    }

    pub fn n_squares(&self) -> usize {
        self.cells.len()
    }
    pub fn n_boxes(&self) -> usize {
        self.start_boxes.len()
    }
    #[inline]
    pub fn neighbour(&self, square: u16, direction: Direction) -> u16 {
        self.neighbours[square as usize][direction.index()]
    }
    #[inline]
    pub fn is_goal(&self, square: u16) -> bool {
        self.goal[square as usize]
    }
    pub fn goals(&self) -> &[u16] {
        &self.goals
    }
    #[inline]
    pub fn is_dead(&self, square: u16) -> bool {
        self.dead[square as usize]
    }
    /// Pushes from `square` to goal number `goal` on an empty board.
    #[inline]
    pub fn distance(&self, goal: usize, square: u16) -> u16 {
        self.distance[square as usize * self.goals.len() + goal]
    }
    pub fn cell(&self, square: u16) -> usize {
        self.cells[square as usize]
    }
    pub fn square(&self, cell: usize) -> u16 {
        self.square_of[cell]
    }
    pub fn start_boxes(&self) -> &[u16] {
        &self.start_boxes
    }
    pub fn start_player(&self) -> u16 {
        self.start_player
    }
    pub fn is_stranded(&self) -> bool {
        self.stranded
    }
}
