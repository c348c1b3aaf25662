//! A generate job's columns as text: its parameters (`generate`), the counts of its
//! candidates (`generation`) and its levels (`levels`, a line a level). Numbers and
//! names, like the `tiles` column; a value that does not parse back is a damaged row.

use crate::jobs::generate::Generation;
use crate::puzzles::sokoban::Level;
use crate::puzzles::sokoban::generate::rating::{Features, Label, Rating, SeedClass};
use crate::puzzles::sokoban::generate::{GenerateParams, Generated, Method, MuraseCounts};

/// Stands for "any difficulty".
const ANY: &str = "-";

/// `width height boxes method difficulty count seed`.
pub(super) fn params_text(p: &GenerateParams) -> String {
    format!(
        "{} {} {} {} {} {} {}",
        p.width,
        p.height,
        p.boxes,
        p.method.name(),
        p.difficulty.map_or(ANY, Label::name),
        p.count,
        p.seed
    )
}

pub(super) fn parse_params(text: &str) -> Option<GenerateParams> {
    let f: Vec<&str> = text.split(' ').collect();
    let [width, height, boxes, method, difficulty, count, seed] = f.as_slice() else {
        return None;
    };
    Some(GenerateParams {
        width: width.parse().ok()?,
        height: height.parse().ok()?,
        boxes: boxes.parse().ok()?,
        method: Method::parse(method)?,
        difficulty: match *difficulty {
            ANY => None,
            name => Some(Label::parse(name)?),
        },
        count: count.parse().ok()?,
        seed: seed.parse().ok()?,
    })
}

/// `tried`, then for the `murase` method `dropped unsolvable easy good`.
pub(super) fn counts_text(g: &Generation) -> String {
    match g.murase {
        None => g.tried.to_string(),
        Some(m) => format!(
            "{} {} {} {} {}",
            g.tried, m.dropped, m.unsolvable, m.easy, m.good
        ),
    }
}

/// Each level on its line: `seed`, the XSB rows joined by `|`, the plan, `optimal`,
/// `score`, `label`, the seed's class and the features, tab-separated.
pub(super) fn levels_text(levels: &[Generated]) -> String {
    levels
        .iter()
        .map(|l| {
            let f = &l.rating.features;
            format!(
                "{}\t{}\t{}\t{}\t{}\t{}\t{}\t{} {} {} {} {} {} {} {} {}",
                l.seed,
                l.level.to_xsb().trim_end().replace('\n', "|"),
                l.plan,
                u8::from(l.optimal),
                l.rating.score,
                l.rating.label.name(),
                l.rating.seed_class.name(),
                f.pushes,
                f.moves,
                f.box_lines,
                f.box_changes,
                f.boxes,
                f.floor,
                f.dead_share,
                f.effort,
                f.directions
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The generation back from its two columns.
pub(super) fn parse_generation(counts: &str, levels: &str) -> Option<Generation> {
    let n: Vec<usize> = counts
        .split(' ')
        .map(|x| x.parse().ok())
        .collect::<Option<_>>()?;
    let (tried, murase) = match n.as_slice() {
        [tried] => (*tried, None),
        [tried, dropped, unsolvable, easy, good] => (
            *tried,
            Some(MuraseCounts {
                dropped: *dropped,
                unsolvable: *unsolvable,
                easy: *easy,
                good: *good,
            }),
        ),
        _ => return None,
    };
    let levels = levels
        .lines()
        .enumerate()
        .map(|(i, line)| parse_level(i + 1, line))
        .collect::<Option<_>>()?;
    Some(Generation {
        levels,
        tried,
        murase,
    })
}

fn parse_level(index: usize, line: &str) -> Option<Generated> {
    let f: Vec<&str> = line.split('\t').collect();
    let [seed, xsb, plan, optimal, score, label, seed_class, features] = f.as_slice() else {
        return None;
    };
    let x: Vec<&str> = features.split(' ').collect();
    let [
        pushes,
        moves,
        box_lines,
        box_changes,
        boxes,
        floor,
        dead_share,
        effort,
        directions,
    ] = x.as_slice()
    else {
        return None;
    };
    let features = Features {
        pushes: pushes.parse().ok()?,
        moves: moves.parse().ok()?,
        box_lines: box_lines.parse().ok()?,
        box_changes: box_changes.parse().ok()?,
        boxes: boxes.parse().ok()?,
        floor: floor.parse().ok()?,
        dead_share: dead_share.parse().ok()?,
        effort: effort.parse().ok()?,
        directions: directions.parse().ok()?,
    };
    Some(Generated {
        index,
        seed: seed.parse().ok()?,
        level: Level::parse(&xsb.replace('|', "\n")).ok()?,
        plan: plan.to_string(),
        pushes: features.pushes,
        moves: features.moves,
        optimal: *optimal == "1",
        rating: Rating {
            score: score.parse().ok()?,
            label: Label::parse(label)?,
            seed_class: SeedClass::parse(seed_class)?,
            features,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::puzzles::sokoban::generate::generate;
    use crate::search::{CancelFlag, Limits};

    #[test]
    fn a_generation_reads_back_as_it_was_written() {
        let params = GenerateParams {
            width: 7,
            height: 7,
            boxes: 2,
            method: Method::Murase,
            difficulty: None,
            count: 3,
            seed: 11,
        };
        assert_eq!(parse_params(&params_text(&params)), Some(params));
        let hard = GenerateParams {
            difficulty: Some(Label::Hard),
            method: Method::Reverse,
            ..params
        };
        assert_eq!(parse_params(&params_text(&hard)), Some(hard));
        let report = generate(
            &params,
            Limits::default(),
            &CancelFlag::new(),
            &mut |_, _| {},
        );
        let generation = Generation {
            levels: report.levels,
            tried: report.tried,
            murase: report.murase,
        };
        assert!(!generation.levels.is_empty());
        let back = parse_generation(&counts_text(&generation), &levels_text(&generation.levels));
        assert_eq!(back, Some(generation));
    }
}
