use proptest::prelude::*;

use super::rating::{self, Features, Label, SeedClass};
use super::*;
use crate::puzzles::sokoban::{Snapshots, count_pushes, replay};

fn params(width: usize, height: usize, boxes: usize) -> GenerateParams {
    GenerateParams {
        width,
        height,
        boxes,
        method: Method::Reverse,
        difficulty: None,
        count: 5,
        seed: 7,
    }
}

fn run(params: &GenerateParams) -> GenReport {
    generate(
        params,
        Limits::default(),
        &CancelFlag::new(),
        &mut |_, _| {},
    )
}

fn rate(text: &str) -> rating::Rated {
    let level = Level::parse(text).expect("level");
    rating::rate(&level, None, Limits::default(), &CancelFlag::new()).expect("rated")
}

#[test]
fn a_six_push_level_is_easy() {
    let rated = rate("#########\n#@$    .#\n#########\n");
    assert_eq!(rated.pushes, 5);
    assert_eq!(rated.rating.seed_class, SeedClass::Easy);
    let rated = rate("##########\n#@$     .#\n##########\n");
    assert_eq!(rated.pushes, 6);
    assert_eq!(rated.rating.seed_class, SeedClass::Easy);
}

#[test]
fn a_level_pushed_only_left_and_right_is_easy() {
    let rated = rate("##############\n#.   $ @ $   .#\n##############\n");
    assert_eq!(rated.pushes, 8);
    assert_eq!(rated.rating.features.directions, 2);
    assert_eq!(rated.rating.seed_class, SeedClass::Easy);
}

#[test]
fn seven_pushes_in_four_directions_are_good() {
    let features = Features {
        pushes: 7,
        moves: 20,
        box_lines: 4,
        box_changes: 0,
        boxes: 1,
        floor: 20,
        dead_share: 0.3,
        effort: 30,
        directions: 4,
    };
    assert_eq!(rating::seed_class(&features), SeedClass::Good);
    let three = Features {
        directions: 3,
        ..features
    };
    assert_eq!(rating::seed_class(&three), SeedClass::Easy);
}

#[test]
fn box_lines_and_changes_follow_the_boxes() {
    use crate::puzzles::sokoban::Direction::{Down, Right};
    // Box A right twice, box B down, box A right again.
    let shape = rating::lines_and_changes(
        [(1, 2, Right), (2, 3, Right), (10, 20, Down), (3, 4, Right)].into_iter(),
    );
    assert_eq!(shape.box_lines, 3);
    assert_eq!(shape.box_changes, 2);
    assert_eq!(shape.directions.count_ones(), 2);
}

#[test]
fn the_pull_depth_is_the_push_optimum() {
    for seed in 0..12 {
        let params = params(7, 7, 2);
        let mut rng = crate::search::rng::Rng::new(seed);
        let Some((level, Some(plan))) = reverse(
            &params,
            &mut rng,
            Limits::default(),
            &Interrupt::never(),
            &mut 0,
        )
        .expect("not stopped") else {
            continue;
        };
        assert!(replay(&level, &plan, Snapshots::None).solved, "{plan}");
        let rated =
            rating::rate(&level, None, Limits::default(), &CancelFlag::new()).expect("rated");
        assert!(rated.optimal);
        assert_eq!(count_pushes(&plan) as u32, rated.pushes, "seed {seed}");
    }
}

#[test]
fn the_same_seed_makes_the_same_levels_and_a_level_s_seed_makes_it_first() {
    let params = params(8, 8, 3);
    let first = run(&params);
    let again = run(&params);
    assert_eq!(first.levels.len(), 5);
    assert_eq!(
        first,
        GenReport {
            elapsed: first.elapsed,
            ..again
        }
    );
    let third = &first.levels[2];
    let alone = run(&GenerateParams {
        seed: third.seed,
        count: 1,
        ..params
    });
    assert_eq!(alone.levels[0].level, third.level);
    assert_eq!(alone.levels[0].plan, third.plan);
}

#[test]
fn a_difficulty_keeps_only_its_label() {
    let report = run(&GenerateParams {
        difficulty: Some(Label::Easy),
        count: 3,
        ..params(7, 7, 2)
    });
    assert_eq!(report.levels.len(), 3);
    assert!(report.levels.iter().all(|l| l.rating.label == Label::Easy));
}

#[test]
fn murase_counts_every_candidate() {
    let report = run(&GenerateParams {
        method: Method::Murase,
        count: 2,
        ..params(8, 8, 3)
    });
    let counts = report.murase.expect("counts");
    assert_eq!(
        counts.dropped + counts.unsolvable + counts.easy + counts.good,
        report.tried
    );
    assert_eq!(counts.good, report.levels.len());
    for level in &report.levels {
        assert_eq!(level.rating.seed_class, SeedClass::Good);
        assert!(replay(&level.level, &level.plan, Snapshots::None).solved);
    }
}

#[test]
fn a_cancelled_run_stops_at_once_with_what_it_made() {
    let cancel = CancelFlag::new();
    cancel.cancel();
    let report = generate(&params(8, 8, 3), Limits::default(), &cancel, &mut |_, _| {});
    assert!(report.levels.is_empty());
    assert_eq!(report.shortfall, Some(Shortfall::Stopped(Stop::Cancelled)));
}

#[test]
fn a_node_limit_ends_the_run_with_the_levels_made() {
    let limits = Limits {
        max_nodes: Some(3_000),
        ..Limits::default()
    };
    let report = generate(
        &GenerateParams {
            count: 1000,
            ..params(8, 8, 3)
        },
        limits,
        &CancelFlag::new(),
        &mut |_, _| {},
    );
    assert!(report.levels.len() < 1000);
    assert!(matches!(report.shortfall, Some(Shortfall::Stopped(_))));
}

#[test]
fn parameters_out_of_range_name_their_field() {
    let check = |p: GenerateParams| p.check().map_err(|e| e.field());
    assert_eq!(check(params(8, 8, 3)), Ok(()));
    assert_eq!(check(params(4, 8, 3)), Err("width"));
    assert_eq!(check(params(8, 17, 3)), Err("height"));
    assert_eq!(check(params(5, 5, 3)), Err("boxes"));
    assert_eq!(check(params(8, 8, 0)), Err("boxes"));
    assert_eq!(check(params(16, 16, 9)), Err("boxes"));
    let none = GenerateParams {
        count: 0,
        ..params(8, 8, 3)
    };
    assert_eq!(check(none), Err("count"));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]
    #[test]
    fn every_reverse_plan_replays(seed in any::<u64>(), side in 5usize..=9, boxes in 1usize..=3) {
        let params = GenerateParams { seed, count: 1, ..params(side, side, boxes.min(max_boxes(side, side))) };
        let report = run(&params);
        for level in &report.levels {
            let replayed = replay(&level.level, &level.plan, Snapshots::None);
            prop_assert!(replayed.solved, "{}\n{}", level.level.to_xsb(), level.plan);
            prop_assert_eq!(replayed.pushes as u32, level.pushes);
            prop_assert!(level.optimal);
        }
    }
}
