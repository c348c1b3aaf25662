//! What each fuzz target checks, shared by the targets in `fuzz/` (nightly, libFuzzer)
//! and by `tests/fuzz_regressions.rs` (stable), which replays every crash the fuzzers
//! found and the kept corpus through the same code. Each check panics when an
//! invariant breaks and otherwise returns a one-line outcome (`ok …` or the error),
//! which a regression case may pin in a `.expected` file.

use std::time::Duration;

use puzzled::http::Caps;
use puzzled::http::routes::capped;
use puzzled::http::wire::{JobRequest, ValidateAnswer, ValidateRequest, parse_goal};
use puzzled::jobs::PuzzleSpec;
use puzzled::puzzles::sliding::{self, GoalSpec, SlidingPuzzle};
use puzzled::puzzles::sokoban::{self, Level, Snapshots, read_collection};

/// `Level::parse` on arbitrary text, and on each level `read_collection` finds in it.
/// A parsed level prints as XSB that parses back to the same board (a fixpoint).
pub fn level(data: &[u8]) -> String {
    let text = String::from_utf8_lossy(data);
    let outcome = match Level::parse(&text) {
        Ok(level) => {
            check_level(&level);
            format!("ok {}x{}", level.rows(), level.cols())
        }
        Err(error) => error.to_string(),
    };
    for (i, found) in read_collection(&text).iter().enumerate() {
        assert_eq!(found.index, i + 1, "collection indices count from 1");
        assert!(found.line >= 1 && !found.text.is_empty());
        if let Ok(level) = Level::parse(&found.text) {
            check_level(&level);
        }
    }
    outcome
}

fn check_level(level: &Level) {
    let cells = level.rows() * level.cols();
    assert!(level.rows() <= sokoban::MAX_ROWS && level.cols() <= sokoban::MAX_COLS);
    assert!(level.player() < cells && !level.is_wall(level.player()));
    let n_boxes = level.n_boxes();
    assert!((1..=sokoban::MAX_BOXES).contains(&n_boxes));
    assert_eq!(n_boxes, (0..cells).filter(|&c| level.is_goal(c)).count());
    let xsb = level.to_xsb();
    let again = Level::parse(&xsb).unwrap_or_else(|e| panic!("{xsb:?} does not parse: {e}"));
    assert_eq!(again.to_xsb(), xsb, "printing is not a fixpoint");
    assert_eq!(again.n_boxes(), n_boxes);
}

/// The sliding board path of a request: tiles (as `parse_tiles` reads them), columns
/// and goal on the first three lines, then a plan that is replayed on the board.
pub fn tiles(data: &[u8]) -> String {
    let text = String::from_utf8_lossy(data);
    let mut lines = text.splitn(4, '\n');
    let (tiles, cols, goal, plan) = (
        lines.next().unwrap_or(""),
        lines.next().unwrap_or(""),
        lines.next().unwrap_or(""),
        lines.next().unwrap_or(""),
    );
    let tiles = match sliding::parse_tiles("tiles", tiles) {
        Ok(tiles) => tiles,
        Err(error) => return error.to_string(),
    };
    let cols = cols.trim().parse::<usize>().ok();
    let goal = if goal.trim().is_empty() {
        GoalSpec::BlankLast
    } else {
        match parse_goal(goal) {
            Ok(goal) => goal,
            Err(error) => return error.to_string(),
        }
    };
    let puzzle = match SlidingPuzzle::new(&tiles, cols, &goal) {
        Ok(puzzle) => puzzle,
        Err(error) => return error.to_string(),
    };
    let geometry = puzzle.geometry();
    let cells = geometry.cells();
    assert_eq!(cells, tiles.len());
    assert!((sliding::MIN_SIDE..=sliding::MAX_SIDE).contains(&geometry.rows));
    assert!((sliding::MIN_SIDE..=sliding::MAX_SIDE).contains(&geometry.cols));
    for board in [puzzle.start(), puzzle.goal()] {
        let mut sorted = board.to_vec();
        sorted.sort_unstable();
        assert!(
            sorted.iter().copied().eq(0..cells as u8),
            "not a permutation"
        );
    }
    let solvable = puzzle.is_solvable();
    assert!(solvable || puzzle.start() != puzzle.goal());
    let replay = sliding::replay(&puzzle, plan, true);
    assert_eq!(replay.legal, replay.error.is_none());
    assert_eq!(replay.boards.len(), replay.length);
    assert!(replay.length <= plan.chars().count());
    let end = replay.boards.last().map_or(puzzle.start(), Vec::as_slice);
    assert_eq!(replay.solved, replay.legal && end == puzzle.goal());
    // Moves never change which boards can reach the goal.
    assert!(!replay.solved || solvable, "an unsolvable board was solved");
    format!("ok {}x{} {}", geometry.rows, geometry.cols, replay.length)
}

/// Small levels the LURD fuzzer plays on: a corridor, a room with two boxes, and a
/// level whose start is already solved.
pub const LURD_LEVELS: [&str; 3] = [
    "#######\n#@ $ .#\n#######",
    "######\n#    #\n# $$ #\n#.@ .#\n######",
    "######\n#@*  #\n#    #\n######",
];

/// The first byte picks a level of [`LURD_LEVELS`] and what to snapshot; the rest is
/// the plan. A replay that says solved really ends with every box on a goal.
pub fn lurd(data: &[u8]) -> String {
    let Some((&selector, plan)) = data.split_first() else {
        return "empty".to_string();
    };
    let level = Level::parse(LURD_LEVELS[usize::from(selector) % LURD_LEVELS.len()])
        .expect("the fixed levels parse");
    let snapshots =
        [Snapshots::None, Snapshots::EachStep, Snapshots::EachPush][usize::from(selector / 4) % 3];
    let plan = String::from_utf8_lossy(plan);
    let replay = sokoban::replay(&level, &plan, snapshots);
    assert_eq!(replay.legal, replay.error.is_none());
    let n_steps = plan.chars().count();
    if let Some(error) = &replay.error {
        assert_eq!(
            error.step,
            replay.moves + 1,
            "the error names the first bad step"
        );
    } else {
        assert_eq!(replay.moves, n_steps);
    }
    let played: String = plan.chars().take(replay.moves).collect();
    assert_eq!(replay.pushes, sokoban::count_pushes(&played));
    let expected_boards = match snapshots {
        Snapshots::None => 0,
        Snapshots::EachStep => replay.moves,
        Snapshots::EachPush => replay.pushes,
    };
    assert_eq!(replay.boards.len(), expected_boards);
    // The end board, from the boards of every step, must agree with the verdict.
    let every_step = sokoban::replay(&level, &played, Snapshots::EachStep);
    assert!(every_step.legal, "the legal prefix replays");
    let end = every_step
        .boards
        .last()
        .cloned()
        .unwrap_or_else(|| level.to_xsb());
    let all_boxes_home = !end.contains('$') && !end.contains('.') && !end.contains('+');
    assert_eq!(replay.solved, replay.legal && all_boxes_home, "{end}");
    if let Some(last) = replay.boards.last() {
        let board = Level::parse(last).unwrap_or_else(|e| panic!("{last:?}: {e}"));
        assert_eq!(board.n_boxes(), level.n_boxes(), "boxes are never lost");
    }
    format!(
        "{} {} moves {} pushes",
        if replay.solved { "solved" } else { "unsolved" },
        replay.moves,
        replay.pushes
    )
}

/// The caps the `job_request` target holds requests to: small, so that going over
/// them is easy to reach.
pub fn fuzz_caps() -> Caps {
    Caps {
        max_nodes: 1_000_000,
        default_timeout_ms: 1_000,
        max_timeout_ms: 10_000,
        max_body_bytes: 64 * 1024,
        max_board_cells: 16,
        max_memory_bytes: 64 << 20,
        cors_origins: Vec::new(),
    }
}

/// JSON → `JobRequest` → the capped `JobSpec` the service would queue (no HTTP), and
/// JSON → `ValidateRequest` → its verdict. Refusals are 4xx problems naming a field;
/// an accepted spec stays within the caps and survives the echo the service stores.
pub fn job_request(data: &[u8]) -> String {
    if let Ok(request) = serde_json::from_slice::<ValidateRequest>(data) {
        match request.check() {
            Ok(ValidateAnswer::Plan(response)) => {
                assert_eq!(response.legal, response.error.is_none())
            }
            Ok(ValidateAnswer::Game(response)) => {
                assert_eq!(response.legal, response.error.is_none())
            }
            Err(error) => assert!(!error.to_string().is_empty()),
        }
    }
    let request = match serde_json::from_slice::<JobRequest>(data) {
        Ok(request) => request,
        Err(error) => return format!("not a job request: {error}"),
    };
    let caps = fuzz_caps();
    let (spec, priority) = match capped(&caps, request) {
        Ok(accepted) => accepted,
        Err(problem) => {
            assert!((400..500).contains(&problem.status), "{problem:?}");
            assert!(problem.pointer.is_some(), "no pointer: {problem:?}");
            return problem.detail;
        }
    };
    let max_nodes = spec.limits.max_nodes.expect("capped sets max_nodes");
    let timeout = spec.limits.timeout.expect("capped sets the timeout");
    assert!(max_nodes <= caps.max_nodes);
    assert!(timeout <= Duration::from_millis(caps.max_timeout_ms));
    if let PuzzleSpec::Sliding(puzzle) = &spec.puzzle {
        assert!(puzzle.geometry().cells() as u64 <= caps.max_board_cells);
    }
    // What `GET /v1/jobs/{id}` echoes must parse back to the same job.
    let echoed = JobRequest::from_spec(&spec, priority);
    let (again, _) = capped(&caps, echoed).unwrap_or_else(|problem| {
        panic!("the echo of an accepted request is refused: {problem:?}")
    });
    assert_eq!(again, spec, "the echo is another job");
    "ok".to_string()
}
