//! Criterion benchmarks of the 2048 engine's inner loops: `cargo bench --bench game`.
//! Moves a second: each iteration slides one board of a seeded game's positions in all
//! four directions (four moves, legal or not); the network's value of one afterstate.

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use puzzled::games::twenty48::ntuple::Network;
use puzzled::games::twenty48::{Board, Dir, Shape};
use puzzled::search::rng::Rng;

/// The positions of a random 4×4 game, long enough to hold large tiles.
fn positions() -> (Shape, Vec<Board>) {
    let shape = Shape::new(4, 4).expect("4x4");
    let mut rng = Rng::new(1);
    let mut boards = Vec::new();
    while boards.len() < 4096 {
        let mut board = shape.start(&mut rng);
        loop {
            boards.push(board);
            let moves: Vec<_> = shape.moves(board).collect();
            let Some(&(_, after, _)) = moves.get(rng.below(moves.len().max(1))) else {
                break;
            };
            let spawn = shape.spawn(after, &mut rng).expect("room");
            board = shape.set(after, spawn.cell, spawn.exponent);
        }
    }
    (shape, boards)
}

fn bench_moves(c: &mut Criterion) {
    let (shape, boards) = positions();
    let mut group = c.benchmark_group("2048");
    group.throughput(Throughput::Elements(4));
    let mut next = 0;
    group.bench_function("four moves of a 4x4 board", |b| {
        b.iter(|| {
            let board = boards[next % boards.len()];
            next += 1;
            Dir::ALL
                .iter()
                .map(|&d| shape.slide(black_box(board), d).map_or(0, |(_, s)| s))
                .sum::<u32>()
        })
    });
    group.throughput(Throughput::Elements(1));
    let network = Network::zero();
    group.bench_function("network value of an afterstate", |b| {
        b.iter(|| {
            let board = boards[next % boards.len()];
            next += 1;
            network.value(black_box(board))
        })
    });
    group.finish();
}

criterion_group!(benches, bench_moves);
criterion_main!(benches);
