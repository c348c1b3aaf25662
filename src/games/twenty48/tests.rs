use std::collections::HashMap;

use super::game::{Heuristic, Objective, Twenty48};
use super::rows::slide;
use super::*;
use crate::search::Budget;
use crate::search::game::{exact, expectimax};

fn shape(rows: usize, cols: usize) -> Shape {
    Shape::new(rows, cols).expect("a size")
}

fn row(values: &[u64]) -> (Vec<u64>, u32) {
    let mut cells: Vec<u8> = values
        .iter()
        .map(|&v| if v == 0 { 0 } else { v.trailing_zeros() as u8 })
        .collect();
    let score = slide(&mut cells);
    let values = cells
        .iter()
        .map(|&e| if e == 0 { 0 } else { 1 << e })
        .collect();
    (values, score)
}

#[test]
fn rows_merge_each_tile_once_from_the_side_they_slide_to() {
    assert_eq!(row(&[2, 2, 2, 2]), (vec![4, 4, 0, 0], 8));
    assert_eq!(row(&[2, 2, 4, 0]), (vec![4, 4, 0, 0], 4));
    assert_eq!(row(&[4, 0, 4, 8]), (vec![8, 8, 0, 0], 8));
    assert_eq!(row(&[2, 2, 2]), (vec![4, 2, 0], 4));
    assert_eq!(row(&[0, 0, 2]), (vec![2, 0, 0], 0));
    assert_eq!(row(&[32768, 32768]), (vec![32768, 32768], 0));
}

#[test]
fn boards_slide_every_way_and_a_move_that_changes_nothing_is_illegal() {
    let s = shape(3, 3);
    let board = s.board(&[2, 0, 2, 0, 4, 0, 2, 4, 8]).expect("board");
    let slid = |dir| s.slide(board, dir).map(|(b, score)| (s.values(b), score));
    assert_eq!(slid(Dir::Left), Some((vec![4, 0, 0, 4, 0, 0, 2, 4, 8], 4)));
    assert_eq!(slid(Dir::Right), Some((vec![0, 0, 4, 0, 0, 4, 2, 4, 8], 4)));
    assert_eq!(slid(Dir::Up), Some((vec![4, 8, 2, 0, 0, 8, 0, 0, 0], 12)));
    assert_eq!(slid(Dir::Down), Some((vec![0, 0, 0, 0, 0, 2, 4, 8, 8], 12)));
    let stuck = s.board(&[2, 4, 2, 4, 2, 4, 2, 4, 2]).expect("board");
    assert_eq!(s.moves(stuck).count(), 0);
    let left_only = s.board(&[0, 2, 4, 0, 8, 2, 0, 4, 8]).expect("board");
    assert_eq!(s.slide(left_only, Dir::Right), None);
    assert!(s.slide(left_only, Dir::Left).is_some());
}

#[test]
fn bad_boards_are_refused_naming_the_problem() {
    assert_eq!(Shape::new(5, 4), Err(BoardError::Size { rows: 5, cols: 4 }));
    let s = shape(2, 2);
    assert!(matches!(
        s.board(&[0, 2, 4]),
        Err(BoardError::CellCount { got: 3, .. })
    ));
    assert_eq!(
        s.board(&[0, 2, 3, 0]),
        Err(BoardError::Tile { index: 2, value: 3 })
    );
    assert_eq!(
        s.board(&[0, 2, 1, 0]),
        Err(BoardError::Tile { index: 2, value: 1 })
    );
    assert!(s.board(&[0, 65536, 0, 0]).is_err());
}

#[test]
fn spawns_put_a_two_nine_times_in_ten_on_any_empty_cell() {
    let s = shape(2, 2);
    let after = s.board(&[2, 0, 0, 4]).expect("board");
    let mut out = Vec::new();
    s.spawns(after, &mut out);
    assert_eq!(out.len(), 4);
    assert!((out.iter().map(|(p, _)| p).sum::<f64>() - 1.0).abs() < 1e-12);
    assert!(out.contains(&(0.45, s.set(after, 1, 1))));
    assert!(
        out.iter()
            .any(|&(p, b)| (p - 0.05).abs() < 1e-12 && b == s.set(after, 2, 2))
    );
    // Seeded spawns: about 90 % twos.
    let mut rng = Rng::new(7);
    let twos = (0..10_000)
        .filter(|_| s.spawn(after, &mut rng).expect("room").exponent == 1)
        .count();
    assert!((8_800..9_200).contains(&twos), "{twos}");
}

/// A random game on `s` from `seed`, as a record.
fn random_game(s: Shape, seed: u64) -> (GameRecord, u64) {
    let mut rng = Rng::new(seed);
    let start = s.start(&mut rng);
    let (mut board, mut score, mut steps) = (start, 0u64, Vec::new());
    loop {
        let moves: Vec<_> = s.moves(board).collect();
        if moves.is_empty() {
            break;
        }
        let (dir, after, gained) = moves[rng.below(moves.len())];
        let spawn = s
            .spawn(after, &mut rng)
            .expect("a move leaves a cell empty");
        score += u64::from(gained);
        board = s.set(after, spawn.cell, spawn.exponent);
        steps.push(Step { dir, spawn });
    }
    (
        GameRecord {
            shape: s,
            start,
            steps,
        },
        score,
    )
}

#[test]
fn a_game_record_replays_to_its_score_and_a_bad_one_names_its_step() {
    let s = shape(4, 4);
    let (record, score) = random_game(s, 3);
    let played = replay(s, record.start, &record.steps).expect("replays");
    assert_eq!(played.score, score);
    assert!(played.over);
    assert_eq!(played.moves, record.steps.len());

    let mut bad = record.steps.clone();
    bad[5].spawn.exponent = 3;
    assert_eq!(
        replay(s, record.start, &bad),
        Err(ReplayError::Value { step: 6 })
    );
    // A spawn on a tile the fifth move left in place.
    let mut bad = record.steps.clone();
    let before = replay(s, record.start, &bad[..4]).expect("a prefix").board;
    let (after, _) = s.slide(before, bad[4].dir).expect("legal");
    bad[4].spawn.cell = (0..16).find(|&c| s.get(after, c) != 0).expect("a tile");
    assert_eq!(
        replay(s, record.start, &bad),
        Err(ReplayError::Occupied {
            step: 5,
            cell: bad[4].spawn.cell
        })
    );
    // A tile in the top left corner cannot move left.
    let corner = s.set(Board(0), 0, 1);
    let step = Step {
        dir: Dir::Left,
        spawn: Spawn {
            cell: 5,
            exponent: 1,
        },
    };
    assert_eq!(
        replay(s, corner, &[step]),
        Err(ReplayError::Illegal {
            step: 1,
            dir: Dir::Left
        })
    );
}

/// An independent 2048: boards as tile values, moves by rotating to the left.
mod naive {
    use std::collections::HashMap;

    pub struct Naive {
        pub rows: usize,
        pub cols: usize,
        /// `None`: the score objective; `Some(t)`: the chance of reaching tile `t`.
        pub reach: Option<u64>,
        pub memo: HashMap<Vec<u64>, f64>,
    }

    impl Naive {
        fn line(&self, i: usize, along_rows: bool) -> Vec<usize> {
            if along_rows {
                (0..self.cols).map(|c| i * self.cols + c).collect()
            } else {
                (0..self.rows).map(|r| r * self.cols + i).collect()
            }
        }

        /// The board after a move (0 left, 1 right, 2 up, 3 down) and its score.
        fn play(&self, b: &[u64], m: usize) -> Option<(Vec<u64>, f64)> {
            let along_rows = m < 2;
            let n = if along_rows { self.rows } else { self.cols };
            let mut out = b.to_vec();
            let mut score = 0.0;
            for i in 0..n {
                let mut idx = self.line(i, along_rows);
                if m % 2 == 1 {
                    idx.reverse();
                }
                let tiles: Vec<u64> = idx.iter().map(|&x| b[x]).filter(|&v| v > 0).collect();
                let mut merged = Vec::new();
                let mut j = 0;
                while j < tiles.len() {
                    if j + 1 < tiles.len() && tiles[j] == tiles[j + 1] {
                        merged.push(tiles[j] * 2);
                        score += (tiles[j] * 2) as f64;
                        j += 2;
                    } else {
                        merged.push(tiles[j]);
                        j += 1;
                    }
                }
                for (k, &x) in idx.iter().enumerate() {
                    out[x] = merged.get(k).copied().unwrap_or(0);
                }
            }
            (out != b).then_some((out, score))
        }

        pub fn value(&mut self, b: &[u64]) -> f64 {
            if let Some(&v) = self.memo.get(b) {
                return v;
            }
            if let Some(t) = self.reach
                && b.iter().any(|&v| v >= t)
            {
                return 1.0;
            }
            let mut best: Option<f64> = None;
            for m in 0..4 {
                if let Some((after, score)) = self.play(b, m) {
                    let gained = if self.reach.is_some() { 0.0 } else { score };
                    let v = gained + self.after(&after);
                    best = Some(best.map_or(v, |x: f64| x.max(v)));
                }
            }
            let v = best.unwrap_or(0.0);
            self.memo.insert(b.to_vec(), v);
            v
        }

        pub fn after(&mut self, a: &[u64]) -> f64 {
            let empty: Vec<usize> = (0..a.len()).filter(|&i| a[i] == 0).collect();
            let mut v = 0.0;
            for &i in &empty {
                for (tile, p) in [(2, 0.9), (4, 0.1)] {
                    let mut next = a.to_vec();
                    next[i] = tile;
                    v += p / empty.len() as f64 * self.value(&next);
                }
            }
            v
        }
    }
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
}

#[test]
fn exact_values_on_small_boards_agree_with_an_independent_implementation() {
    for (rows, cols, reach_exp) in [(2, 2, 5), (2, 3, 7)] {
        let s = shape(rows, cols);
        for seed in 0..3 {
            let start = s.start(&mut Rng::new(seed));
            for objective in [Objective::Score, Objective::Reach(reach_exp)] {
                let game = Twenty48 {
                    shape: s,
                    objective,
                    evaluator: Heuristic,
                };
                let report = exact::solve(&game, &start, &mut Budget::unlimited());
                assert!(report.answer.exact && report.stop.is_none());
                let mut naive = naive::Naive {
                    rows,
                    cols,
                    reach: match objective {
                        Objective::Score => None,
                        Objective::Reach(t) => Some(1 << t),
                    },
                    memo: HashMap::new(),
                };
                let expected = naive.value(&s.values(start));
                assert!(
                    close(report.answer.value, expected),
                    "{rows}x{cols} seed {seed} {objective:?}: {} vs {expected}",
                    report.answer.value
                );
            }
        }
    }
}

#[test]
fn expectimax_deepens_to_the_exact_value_on_a_small_board() {
    let s = shape(2, 2);
    let start = s.start(&mut Rng::new(5));
    let game = Twenty48 {
        shape: s,
        objective: Objective::Score,
        evaluator: Heuristic,
    };
    let proved = exact::solve(&game, &start, &mut Budget::unlimited()).answer;
    let mut answers = Vec::new();
    let report = expectimax::search(
        &game,
        &start,
        0.0,
        200,
        &mut Budget::unlimited(),
        &mut |a| answers.push(a.clone()),
    );
    assert!(report.answer.exact, "{:?}", report.answer);
    assert!(close(report.answer.value, proved.value));
    assert_eq!(report.answer.best, proved.best);
    for (m, v) in &report.answer.move_values {
        let p = proved
            .move_values
            .iter()
            .find(|(pm, _)| pm == m)
            .expect("a move");
        assert!(close(*v, p.1));
    }
    // Each answer searched one move deeper than the last.
    assert!(answers.windows(2).all(|w| w[1].depth == w[0].depth + 1));
}

#[test]
fn best_first_grown_to_the_end_agrees_with_the_exact_value() {
    use crate::search::game::best_first::{Preferences, search};
    let s = shape(2, 2);
    // Boards near their end: a tree, unlike the exact search's graph, repeats
    // transpositions, so it is kept small.
    for (cells, objective) in [
        ([16, 2, 8, 0], Objective::Score),
        ([2, 32, 4, 0], Objective::Score),
        ([16, 2, 8, 0], Objective::Reach(5)),
    ] {
        let start = s.board(&cells).expect("board");
        let game = Twenty48 {
            shape: s,
            objective,
            evaluator: Heuristic,
        };
        let proved = exact::solve(&game, &start, &mut Budget::unlimited()).answer;
        let mut answers = 0;
        let grown = search(
            &game,
            &start,
            Preferences::default(),
            &mut Budget::unlimited(),
            50,
            &mut |_| answers += 1,
        );
        assert!(grown.answer.exact, "{cells:?} {objective:?}");
        assert!(
            close(grown.answer.value, proved.value),
            "{} vs {}",
            grown.answer.value,
            proved.value
        );
        assert!(answers > 1, "anytime: answers on the way");
    }
}

#[test]
fn a_search_stopped_by_its_budget_still_answers() {
    let s = shape(4, 4);
    let start = s.start(&mut Rng::new(1));
    let game = Twenty48 {
        shape: s,
        objective: Objective::Score,
        evaluator: Heuristic,
    };
    let limits = crate::search::Limits {
        max_nodes: Some(500),
        ..Default::default()
    };
    let mut budget = Budget::new(limits, crate::search::CancelFlag::new());
    let report = expectimax::search(&game, &start, 1e-4, 50, &mut budget, &mut |_| {});
    assert_eq!(report.stop, Some(crate::search::Stop::NodeLimit));
    assert!(report.answer.best.is_some());
    assert!(!report.answer.exact);
    let cancel = crate::search::CancelFlag::new();
    cancel.cancel();
    let mut budget = Budget::new(crate::search::Limits::default(), cancel);
    let report = exact::solve(&game, &start, &mut budget);
    assert_eq!(report.stop, Some(crate::search::Stop::Cancelled));
    assert!(report.answer.best.is_some());
}

mod learning {
    use super::super::ntuple::{Network, NetworkError, TUPLES};
    use super::super::train::{Learning, Training, play_greedy, train};
    use super::*;
    use crate::search::Interrupt;

    fn trained(learning: Learning, games: usize, seed: u64) -> Network {
        let mut network = Network::zero();
        let training = Training {
            games,
            seed,
            learning,
            rate: learning.default_rate(),
        };
        train(&mut network, &training, &Interrupt::never(), &mut |_| {}).expect("trains");
        network
    }

    #[test]
    fn training_is_reproducible_and_raises_the_greedy_players_score() {
        let mean = |network: &Network| {
            (0..40)
                .map(|seed| play_greedy(network, 1000 + seed).score as f64)
                .sum::<f64>()
                / 40.0
        };
        let untrained = mean(&Network::zero());
        for &learning in Learning::ALL {
            let network = trained(learning, 2000, 7);
            assert_eq!(
                network.to_bytes(),
                trained(learning, 2000, 7).to_bytes(),
                "{learning}"
            );
            let after = mean(&network);
            assert!(after > 1.5 * untrained, "{learning}: {untrained} → {after}");
        }
    }

    #[test]
    fn a_new_network_has_four_and_five_tuples_in_825_344_weights() {
        let network = Network::zero();
        let lengths: Vec<usize> = network.tuples().iter().map(|t| t.cells().len()).collect();
        assert_eq!(lengths, [4, 4, 4, 4, 4, 5, 5]);
        assert_eq!(network.n_weights(), 5 * 16usize.pow(4) + 2 * 12usize.pow(5));
        assert_eq!(network.n_weights(), 825_344);
        assert_eq!(network.n_features(), 7 * 8);
    }

    #[test]
    fn a_boards_value_is_the_same_in_every_symmetry() {
        let network = trained(Learning::Tc, 300, 3);
        let s = shape(4, 4);
        let board = s.start(&mut Rng::new(11));
        let board = s.slide(board, Dir::Left).map_or(board, |(b, _)| b);
        let rotated = (0..16).fold(Board(0), |out, cell| {
            let (r, c) = (cell / 4, cell % 4);
            s.set(out, c * 4 + (3 - r), s.get(board, cell))
        });
        let mirrored = (0..16).fold(Board(0), |out, cell| {
            let (r, c) = (cell / 4, cell % 4);
            s.set(out, r * 4 + (3 - c), s.get(board, cell))
        });
        let v = network.value(board);
        assert!(v != 0.0);
        assert!((network.value(rotated) - v).abs() < 1e-6 * v.abs());
        assert!((network.value(mirrored) - v).abs() < 1e-6 * v.abs());
    }

    #[test]
    fn a_network_reads_back_from_its_bytes_and_damage_is_refused() {
        let network = trained(Learning::Tc, 50, 1);
        let bytes = network.to_bytes();
        assert!(bytes.starts_with(b"PZ2048N2"));
        let back = Network::from_bytes(&bytes).expect("reads");
        assert_eq!(back.tuples(), TUPLES);
        assert_eq!(back.to_bytes(), bytes);
        let mut damaged = bytes.clone();
        damaged[100] ^= 1;
        assert_eq!(
            Network::from_bytes(&damaged).err(),
            Some(NetworkError::Damaged)
        );
        assert_eq!(
            Network::from_bytes(&bytes[..bytes.len() - 1]).err(),
            Some(NetworkError::Damaged)
        );
    }

    /// A framed network of `n_weights` zero weights whose header is `header`.
    fn framed(magic: &[u8; 8], header: &[u8], n_weights: usize) -> Vec<u8> {
        crate::framing::frame(magic, header, &vec![0; 4 * n_weights])
    }

    #[test]
    fn a_header_whose_tuples_are_not_valid_or_do_not_match_the_weights_is_refused() {
        let check = |header: &[u8], n_weights: usize, reads: bool| {
            let read = Network::from_bytes(&framed(b"PZ2048N2", header, n_weights));
            assert_eq!(read.is_ok(), reads, "{header:?}, {n_weights} weights");
        };
        check(&[4, 16, 0, 1, 2, 3], 65_536, true);
        check(&[2, 3, 15, 14, 1, 2, 7], 9 + 2, true);
        check(&[4, 16, 0, 1, 2, 3], 65_535, false);
        check(&[4, 16, 0, 1, 2, 3], 65_537, false);
        check(&[], 0, false);
        check(&[4, 16, 0, 1, 2, 16], 65_536, false); // no cell 16
        check(&[4, 16, 0, 1, 2, 2], 65_536, false); // a cell twice
        check(&[4, 17, 0, 1, 2, 3], 83_521, false); // more exponents than a board holds
        check(&[6, 2, 0, 1, 2, 3, 4, 5], 64, false); // longer than five cells
        check(&[0, 2], 1, false);
        check(&[4, 16, 0, 1, 2], 65_536, false); // cut short
        check(&[4, 16, 0, 1, 2, 3, 1], 65_536, false); // a stray byte
        // The first version's magic takes its own tuples only.
        assert!(Network::from_bytes(&framed(b"PZ2048N1", &[4, 16, 0, 1, 2, 3], 65_536)).is_err());
    }

    #[test]
    fn a_first_version_network_is_read_with_its_five_4_tuples_and_their_layout() {
        // PZ2048N1: the header is the five 4-tuples' cells; a tuple's weight for exponents
        // (a, b, c, d) in its cells is at a + 16 b + 256 c + 4096 d of its 65,536.
        let cells = [
            [0, 1, 2, 3],
            [4, 5, 6, 7],
            [0, 1, 4, 5],
            [1, 2, 5, 6],
            [5, 6, 9, 10],
        ];
        let header: Vec<u8> = cells.iter().flatten().copied().collect();
        let mut weights = vec![0f32; 5 * 65_536];
        weights[1 + 16 * 2 + 256 * 3 + 4096 * 4] = 7.5; // the top row 2, 4, 8, 16
        weights[4 * 65_536 + 5 + 16 * 6] = 0.25; // cells 5, 6, 9, 10 hold 32, 64, -, -
        let values: Vec<u8> = weights.iter().flat_map(|w| w.to_le_bytes()).collect();
        let bytes = crate::framing::frame(b"PZ2048N1", &header, &values);
        let network = Network::from_bytes(&bytes).expect("reads the first version");
        assert_eq!(network.tuples(), &TUPLES[..5]);
        let s = shape(4, 4);
        let board = |values: &[u64]| s.board(values).expect("a board");
        let top_row = board(&[2, 4, 8, 16, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
        let middle = board(&[0, 0, 0, 0, 0, 32, 64, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
        assert_eq!(network.value(top_row), 7.5);
        assert_eq!(network.value(middle), 0.25);
        // Written again, it is of this version, and the same network.
        let again = Network::from_bytes(&network.to_bytes()).expect("reads");
        assert_eq!(again.tuples(), &TUPLES[..5]);
        assert_eq!(again.value(top_row), 7.5);
    }
}

#[test]
fn exact_solving_a_4x4_board_stops_at_its_deepest_line_without_overflowing_the_stack() {
    // A worker thread's stack: the search must stop before it runs out.
    let stopped = std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(|| {
            let s = shape(4, 4);
            let game = Twenty48 {
                shape: s,
                objective: Objective::Score,
                evaluator: Heuristic,
            };
            let board = s
                .board(&[2, 4, 8, 16, 0, 2, 0, 4, 0, 0, 2, 0, 0, 0, 0, 2])
                .expect("a board");
            let report = exact::solve(&game, &board, &mut Budget::unlimited());
            (
                report.stop,
                report.answer.best.is_some(),
                report.answer.exact,
            )
        })
        .expect("a thread")
        .join()
        .expect("no overflow");
    assert_eq!(
        stopped,
        (Some(crate::search::Stop::MemoryLimit), true, false)
    );
}
