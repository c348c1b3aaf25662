//! puzzled: a puzzle-solving service.
//!
//! Layers, with dependencies pointing one way (`http → jobs → puzzles → search`):
//! - [`search`]: the engine (IDA*, A*, BFS, greedy, enforced hill-climbing), std only.
//! - [`puzzles`]: domains (sliding tiles, Sokoban) with their formats, heuristics and validators.
//! - [`games`]: games with chance (2048, Pig) for the game-tree engine, std only.
//! - [`jobs`]: validated job specs, running a job end to end, the on-disk table store.
//! - [`http`]: the wire types (JSON), shared by the service and the CLI's `--json`.
//! - [`serve`]: the service's wiring, from a plain [`serve::ServeConfig`].
//! - [`framing`]: the byte framing (magic, header, length, checksum) of stored tables
//!   and networks.
//! - [`names`]: `named_enum!`, one definition for each name of the job's vocabulary.
//!
//! The `puzzled` command line (clap) is the binary's, in `src/cli/`, not library API.
//!
//! Solving a puzzle without the service:
//!
//! ```
//! use puzzled::puzzles::sliding::{Evaluator, GoalSpec, SlidingDomain, SlidingPuzzle, plan_text, replay};
//! use puzzled::search::{Algorithm, Budget, Outcome, Weight, solve};
//!
//! let puzzle = SlidingPuzzle::new(&[1, 2, 3, 4, 0, 6, 7, 5, 8], None, &GoalSpec::BlankLast).unwrap();
//! let domain = SlidingDomain::new(&puzzle, Evaluator::Manhattan);
//! let report = solve(&domain, Algorithm::IdaStar { weight: Weight::ONE }, &mut Budget::unlimited());
//! let Outcome::Solved(solution) = report.outcome else { panic!("solvable") };
//! assert_eq!(plan_text(&solution.actions), "dr");
//! assert!(report.proved_optimal && replay(&puzzle, "dr", false).solved);
//! ```

pub mod framing;
pub mod games;
pub mod http;
pub mod jobs;
pub mod names;
pub mod puzzles;
pub mod search;
pub mod serve;
