use super::*;
use crate::search::Budget;

/// A toy game with both sides and chance: Max picks `Safe` (worth 4) or `Gamble` (a
/// coin: 0 or Min's choice between 10 and 7).
struct Toy;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum S {
    Root,
    SafeAfter,
    GambleAfter,
    MinTurn,
    MinTen,
    MinSeven,
    End(u8),
}

impl Game for Toy {
    type State = S;
    type Move = &'static str;

    fn side(&self, s: &S) -> Side {
        if *s == S::MinTurn {
            Side::Min
        } else {
            Side::Max
        }
    }

    fn moves(&self, s: &S, out: &mut Vec<(&'static str, f64, S)>) {
        match s {
            S::Root => out.extend([("safe", 0.0, S::SafeAfter), ("gamble", 0.0, S::GambleAfter)]),
            S::MinTurn => out.extend([("ten", 0.0, S::MinTen), ("seven", 0.0, S::MinSeven)]),
            _ => {}
        }
    }

    fn final_value(&self, s: &S) -> f64 {
        match s {
            S::End(v) => f64::from(*v),
            _ => 0.0,
        }
    }

    fn outcomes(&self, a: &S, out: &mut Vec<(f64, S)>) {
        match a {
            S::SafeAfter => out.push((1.0, S::End(4))),
            S::GambleAfter => out.extend([(0.5, S::End(0)), (0.5, S::MinTurn)]),
            S::MinTen => out.push((1.0, S::End(10))),
            S::MinSeven => out.push((1.0, S::End(7))),
            _ => {}
        }
    }

    fn estimate(&self, _: &S) -> f64 {
        5.0
    }
}

#[test]
fn max_min_and_expectation_back_up_as_they_should() {
    let report = exact::solve(&Toy, &S::Root, &mut Budget::unlimited());
    // Gamble: half of 0, half of min(10, 7) = 3.5 < 4.
    assert_eq!(report.answer.best, Some("safe"));
    assert_eq!(
        report.answer.move_values,
        vec![("safe", 4.0), ("gamble", 3.5)]
    );
    assert!(report.answer.exact);
    let deep = expectimax::search(
        &Toy,
        &S::Root,
        0.0,
        10,
        &mut Budget::unlimited(),
        &mut |_| {},
    );
    assert_eq!(deep.answer.move_values, report.answer.move_values);
    assert!(deep.answer.exact);
    // One move deep, the gamble's Min turn is estimated greedily (5 either way).
    let shallow = expectimax::search(
        &Toy,
        &S::Root,
        0.0,
        1,
        &mut Budget::unlimited(),
        &mut |_| {},
    );
    assert_eq!(
        shallow.answer.move_values,
        vec![("safe", 4.0), ("gamble", 2.5)]
    );
    assert!(!shallow.answer.exact);
}

#[test]
fn the_risk_weighting_values_a_gamble_between_its_mean_and_its_worst_outcome() {
    let grown = |risk| {
        let prefs = best_first::Preferences {
            risk,
            ..best_first::Preferences::default()
        };
        best_first::search(
            &Toy,
            &S::Root,
            prefs,
            &mut Budget::unlimited(),
            1024,
            &mut |_| {},
        )
        .answer
    };
    let neutral = grown(0.0);
    assert_eq!(neutral.move_values, vec![("safe", 4.0), ("gamble", 3.5)]);
    assert!(neutral.exact);
    // Max moved into the coin: its worst outcome is the 0.
    let half = grown(0.5);
    assert_eq!(half.move_values, vec![("safe", 4.0), ("gamble", 1.75)]);
    assert!(!half.exact);
    assert_eq!(grown(1.0).move_values, vec![("safe", 4.0), ("gamble", 0.0)]);
}
