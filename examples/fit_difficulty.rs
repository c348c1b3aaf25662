//! Fits the Sokoban difficulty model (`WEIGHTS` in `generate/rating.rs`) and checks the
//! labels it gives generated levels.
//!
//! ```text
//! cargo run --release --example fit_difficulty                  # rate, fit, print weights
//! cargo run --release --example fit_difficulty -- --check-labels  # medians per label
//! ```
//! Every Microban and XSokoban level is rated as the generator rates its own. The target
//! is a level's rank: Microban's designer order (roughly easy to hard), then XSokoban,
//! in its order, as the hardest end; a level the rating cannot solve is left out.
//! Least squares over [`rating::inputs`] gives a start, a coordinate search then
//! maximises Spearman's correlation on Microban, and the score is rescaled so Microban
//! spans 0 to 100.

use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use puzzled::puzzles::sokoban::generate::rating::{self, Features, Label};
use puzzled::puzzles::sokoban::generate::{GenerateParams, Method, generate};
use puzzled::puzzles::sokoban::{Level, read_collection};
use puzzled::search::{CancelFlag, Limits};

const COLLECTIONS: [&str; 2] = [
    "benches/data/microban155.xsb",
    "benches/data/xsokoban90.xsb",
];
const N_INPUTS: usize = 8;
/// In the order of [`columns`] and of [`rating::inputs`].
const FEATURE_NAMES: &str =
    "pushes moves box_lines box_changes boxes floor dead_share effort directions";
const INPUT_NAMES: &str = "constant pushes box_lines box_changes boxes floor dead_share effort";

fn main() {
    if std::env::args().any(|a| a == "--check-labels") {
        check_labels();
    } else {
        fit();
    }
}

fn fit() {
    let [microban, xsokoban] = features_cached();
    // (features, rank) of every level rated, Microban first.
    let ranked: Vec<(Features, f64)> = microban
        .iter()
        .chain(&xsokoban)
        .enumerate()
        .filter_map(|(rank, f)| Some(((*f)?, rank as f64 + 1.0)))
        .collect();
    let n_microban = microban.iter().flatten().count();
    eprintln!(
        "rated {n_microban}/{} Microban, {}/{} XSokoban",
        microban.len(),
        ranked.len() - n_microban,
        xsokoban.len()
    );
    let rows: Vec<[f64; N_INPUTS]> = ranked.iter().map(|(f, _)| rating::inputs(f)).collect();
    let ranks: Vec<f64> = ranked.iter().map(|(_, r)| *r).collect();
    let efforts: Vec<f64> = ranked.iter().map(|(f, _)| f.effort as f64).collect();
    let (mb_rows, mb_ranks, mb_efforts) = (
        &rows[..n_microban],
        &ranks[..n_microban],
        &efforts[..n_microban],
    );
    let scores = |w: &[f64; N_INPUTS], rows: &[[f64; N_INPUTS]]| -> Vec<f64> {
        rows.iter().map(|x| dot(w, x)).collect()
    };
    // Both requirements at once: the weaker of the two correlations is what gets raised.
    let objective = |w: &[f64; N_INPUTS]| {
        let s = scores(w, mb_rows);
        spearman(&s, mb_ranks).min(spearman(&s, mb_efforts))
    };
    let start = least_squares(&rows, &ranks);
    let weights = coordinate_search(start, &objective);
    // Rescale: Microban's easiest level reads 0 and its hardest 100.
    let mb_scores = scores(&weights, mb_rows);
    let (low, high) = mb_scores
        .iter()
        .fold((f64::MAX, f64::MIN), |(l, h), s| (l.min(*s), h.max(*s)));
    let mut weights = weights.map(|w| w * 100.0 / (high - low));
    weights[0] -= low * 100.0 / (high - low);

    println!("weights (least squares, then Spearman coordinate search, rescaled):");
    for (name, w) in INPUT_NAMES.split(' ').zip(&weights) {
        println!("  {name:<12} {w:>9.3}");
    }
    println!("const WEIGHTS: [f64; 8] = {:.3?};", weights);
    let model = scores(&weights, mb_rows);
    println!("Spearman on Microban | model | best single feature");
    for (target_name, target) in [("order", mb_ranks), ("effort", mb_efforts)] {
        let (name, best) = best_single(&ranked[..n_microban], target, target_name == "effort");
        let model = spearman(&model, target);
        println!("  vs {target_name:<7} | {model:.3} | {best:.3} ({name})");
    }
    let all = spearman(&scores(&weights, &rows), &ranks);
    println!("Spearman vs rank over Microban and XSokoban: {all:.3}");
}

/// Features of both collections: rating XSokoban takes minutes, so they are kept in
/// a file that a later run reads instead (delete it to rate again).
fn features_cached() -> [Vec<Option<Features>>; 2] {
    const CACHE: &str = "target/fit_difficulty_features.txt";
    if let Ok(text) = std::fs::read_to_string(CACHE) {
        let mut collections = [Vec::new(), Vec::new()];
        for line in text.lines() {
            let (collection, rest) = line.split_once(' ').unwrap_or((line, "-"));
            let values: Vec<f64> = rest.split(' ').filter_map(|v| v.parse().ok()).collect();
            let features = <[f64; 9]>::try_from(values).ok().map(from_columns);
            collections[usize::from(collection == "1")].push(features);
        }
        return collections;
    }
    let collections = COLLECTIONS.map(rate_collection);
    let mut text = String::new();
    for (c, collection) in collections.iter().enumerate() {
        for features in collection {
            let values = features.map_or(vec!["-".into()], |f| {
                columns(&f).map(|v| v.to_string()).to_vec()
            });
            text += &format!("{c} {}\n", values.join(" "));
        }
    }
    std::fs::write(CACHE, text).expect("write the feature cache");
    collections
}

/// Every feature as a number, in the order of [`FEATURE_NAMES`].
fn columns(f: &Features) -> [f64; 9] {
    let counts = [
        f.pushes,
        f.moves,
        f.box_lines,
        f.box_changes,
        f.boxes,
        f.floor,
    ];
    let [p, m, l, c, b, fl] = counts.map(f64::from);
    let (dead, effort, directions) = (f.dead_share, f.effort as f64, f64::from(f.directions));
    [p, m, l, c, b, fl, dead, effort, directions]
}

fn from_columns(v: [f64; 9]) -> Features {
    let [pushes, moves, box_lines, box_changes, boxes, floor] =
        [0, 1, 2, 3, 4, 5].map(|i| v[i] as u32);
    let (dead_share, effort, directions) = (v[6], v[7] as u64, v[8] as u32);
    Features {
        pushes,
        moves,
        box_lines,
        box_changes,
        boxes,
        floor,
        dead_share,
        effort,
        directions,
    }
}

/// Features of every level of `path` (`None` where the rating failed), two at a time.
fn rate_collection(path: &str) -> Vec<Option<Features>> {
    let text = std::fs::read_to_string(path).expect("read the collection");
    let levels: Vec<Level> = read_collection(&text)
        .iter()
        .map(|l| Level::parse(&l.text).expect("valid level"))
        .collect();
    let results = Mutex::new(vec![None; levels.len()]);
    let next = AtomicUsize::new(0);
    let cancel = CancelFlag::new();
    // Generous: the slowest XSokoban level solved takes about a minute.
    let limits = Limits {
        timeout: Some(Duration::from_secs(90)),
        ..Limits::default()
    };
    std::thread::scope(|scope| {
        for _ in 0..2 {
            scope.spawn(|| {
                loop {
                    let index = next.fetch_add(1, Ordering::Relaxed);
                    let Some(level) = levels.get(index) else {
                        break;
                    };
                    let started = Instant::now();
                    let rated = rating::rate(level, None, limits, &cancel);
                    let summary = match &rated {
                        Ok(r) => {
                            format!("{} pushes, effort {}", r.pushes, r.rating.features.effort)
                        }
                        Err(error) => error.to_string(),
                    };
                    let seconds = started.elapsed().as_secs_f64();
                    eprintln!("{path} #{}: {summary} ({seconds:.1} s)", index + 1);
                    let mut results = results.lock().unwrap_or_else(|e| e.into_inner());
                    results[index] = rated.ok().map(|r| r.rating.features);
                }
            });
        }
    });
    results.into_inner().unwrap_or_else(|e| e.into_inner())
}

/// The single feature (not effort itself when `target` is effort) that ranks best.
fn best_single(levels: &[(Features, f64)], target: &[f64], is_effort: bool) -> (&'static str, f64) {
    let table: Vec<[f64; 9]> = levels.iter().map(|(f, _)| columns(f)).collect();
    FEATURE_NAMES
        .split(' ')
        .enumerate()
        .filter(|(_, name)| !(is_effort && *name == "effort"))
        .map(|(i, name)| {
            let values: Vec<f64> = table.iter().map(|row| row[i]).collect();
            (name, spearman(&values, target))
        })
        .fold(("none", f64::MIN), |b, c| if c.1 > b.1 { c } else { b })
}

/// Least squares by the normal equations; a touch of ridge keeps them well posed.
fn least_squares(rows: &[[f64; N_INPUTS]], target: &[f64]) -> [f64; N_INPUTS] {
    let mut a = [[0.0; N_INPUTS + 1]; N_INPUTS];
    for (x, y) in rows.iter().zip(target) {
        for i in 0..N_INPUTS {
            for j in 0..N_INPUTS {
                a[i][j] += x[i] * x[j];
            }
            a[i][N_INPUTS] += x[i] * y;
        }
    }
    for (i, row) in a.iter_mut().enumerate().skip(1) {
        row[i] += 1e-6 * rows.len() as f64;
    }
    // Gauss–Jordan with partial pivoting.
    for col in 0..N_INPUTS {
        let pivot = (col..N_INPUTS)
            .max_by(|&p, &q| a[p][col].abs().total_cmp(&a[q][col].abs()))
            .unwrap_or(col);
        a.swap(col, pivot);
        for row in 0..N_INPUTS {
            if row != col {
                let factor = a[row][col] / a[col][col];
                let pivot_row = a[col];
                for (x, p) in a[row].iter_mut().zip(pivot_row) {
                    *x -= factor * p;
                }
            }
        }
    }
    std::array::from_fn(|i| a[i][N_INPUTS] / a[i][i])
}

/// Greedy steps on one weight at a time, halving the step when none helps. The
/// constant is left alone: a rank correlation does not see it. Counts keep weights of
/// zero or more, since more pushes or more nodes never make a level easier; on Microban
/// alone, least squares trades them against floor size, which fails on generated
/// levels, whose rooms are all about one size.
fn coordinate_search(
    weights: [f64; N_INPUTS],
    objective: &dyn Fn(&[f64; N_INPUTS]) -> f64,
) -> [f64; N_INPUTS] {
    // Inputs 0 and 6 are the constant and the dead share.
    let clamp = |mut w: [f64; N_INPUTS]| {
        for (i, w) in w.iter_mut().enumerate() {
            if i != 0 && i != 6 {
                *w = w.max(0.0);
            }
        }
        w
    };
    let mut weights = clamp(weights);
    let mut best = objective(&weights);
    let mut step = weights[1..].iter().map(|w| w.abs()).fold(0.0, f64::max) / 4.0;
    for _ in 0..12 {
        let mut improved = true;
        while improved {
            improved = false;
            for i in 1..N_INPUTS {
                for delta in [step, -step] {
                    let mut trial = weights;
                    trial[i] += delta;
                    let trial = clamp(trial);
                    let value = objective(&trial);
                    if value > best + 1e-9 {
                        (weights, best, improved) = (trial, value, true);
                    }
                }
            }
        }
        step /= 2.0;
    }
    weights
}

fn dot(w: &[f64; N_INPUTS], x: &[f64; N_INPUTS]) -> f64 {
    w.iter().zip(x).map(|(w, x)| w * x).sum()
}

/// Ranks from 1, ties sharing their mean rank.
fn ranks(values: &[f64]) -> Vec<f64> {
    let mut order: Vec<usize> = (0..values.len()).collect();
    order.sort_by(|&a, &b| values[a].total_cmp(&values[b]));
    let mut ranks = vec![0.0; values.len()];
    let mut start = 0;
    while start < order.len() {
        let mut end = start;
        while end + 1 < order.len() && values[order[end + 1]] == values[order[start]] {
            end += 1;
        }
        for &i in &order[start..=end] {
            ranks[i] = (start + end) as f64 / 2.0 + 1.0;
        }
        start = end + 1;
    }
    ranks
}

fn spearman(a: &[f64], b: &[f64]) -> f64 {
    let (a, b) = (ranks(a), ranks(b));
    let n = a.len() as f64;
    let (mean_a, mean_b) = (a.iter().sum::<f64>() / n, b.iter().sum::<f64>() / n);
    let (mut cov, mut var_a, mut var_b) = (0.0, 0.0, 0.0);
    for (x, y) in a.iter().zip(&b) {
        cov += (x - mean_a) * (y - mean_b);
        var_a += (x - mean_a).powi(2);
        var_b += (y - mean_b).powi(2);
    }
    cov / (var_a * var_b).sqrt()
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    match values.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => values[n / 2],
        n => (values[n / 2 - 1] + values[n / 2]) / 2.0,
    }
}

/// Generates levels per label with the fitted model and prints their medians.
fn check_labels() {
    let run = |width, boxes, label, count, seed| {
        let params = GenerateParams {
            width,
            height: width,
            boxes,
            method: Method::Reverse,
            difficulty: Some(label),
            count,
            seed,
        };
        let report = generate(
            &params,
            Limits::default(),
            &CancelFlag::new(),
            &mut |_, _| {},
        );
        let pushes = report.levels.iter().map(|l| f64::from(l.pushes)).collect();
        let effort = report
            .levels
            .iter()
            .map(|l| l.rating.features.effort as f64);
        let optimal = report.levels.iter().filter(|l| l.optimal).count();
        println!(
            "| {width}x{width}, {boxes} boxes | {label} | {}/{count} | {} | {} | {} | {} | {:.1} |",
            report.levels.len(),
            report.tried,
            optimal,
            median(pushes),
            median(effort.collect()),
            report.elapsed.as_secs_f64()
        );
        report.elapsed
    };
    println!("| room | label | made | tried | optimal | median pushes | median effort | s |");
    println!("|---|---|---|---|---|---|---|---|");
    for label in [Label::Easy, Label::Medium, Label::Hard] {
        run(8, 3, label, 100, 1);
    }
    run(10, 4, Label::Hard, 100, 1);
    let twenty: Duration = run(8, 3, Label::Hard, 20, 2);
    println!(
        "20 hard 8x8 levels with 3 boxes: {:.1} s",
        twenty.as_secs_f64()
    );
}
