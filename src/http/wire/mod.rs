//! Wire types: the JSON the service and the CLI's `--json` speak. The only serde
//! types in the crate; converted to and from the job layer by hand, here.

mod generate;
mod request;
mod validate;
mod view;

pub use generate::{
    DEFAULT_BOXES, DEFAULT_COUNT, DEFAULT_SIDE, FeaturesView, GenerateRequest, GenerationView,
    LevelView, RateRequest, RatingView, random_seed,
};
pub use request::{
    GoalRequest, JobRequest, LimitsRequest, PuzzleRequest, RequestError, SearchNames, parse_goal,
    parse_goal_text,
};
pub use validate::{MAX_VALIDATE_BOARD_SQUARES, StepErrorView, ValidateRequest, ValidateResponse};
pub use view::{
    BoardView, JobList, JobOutcome, JobResult, JobView, ProgressView, millis, timestamp,
};
