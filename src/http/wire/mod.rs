//! Wire types: the JSON the service and the CLI's `--json` speak. The only serde
//! types in the crate; converted to and from the job layer by hand, here.

mod game;
mod generate;
mod request;
mod validate;
mod view;

pub use game::{
    AnswerView, GameCheckView, GameRecordView, ObjectiveRequest, PlayedView, PlayoutRequest,
    PlayoutView, RecordError, SCORE_OBJECTIVE, check_record,
};
pub use generate::{
    DEFAULT_BOXES, DEFAULT_COUNT, DEFAULT_SIDE, FeaturesView, GenerateRequest, GenerationView,
    LevelView, RateRequest, RatingView, random_seed,
};
pub use request::{
    DEFAULT_2048_SIDE, GoalRequest, JobRequest, LimitsRequest, PuzzleRequest, RequestError,
    SearchNames, parse_goal, parse_goal_text,
};
pub use validate::{
    MAX_VALIDATE_BOARD_SQUARES, StepErrorView, ValidateAnswer, ValidateRequest, ValidateResponse,
};
pub use view::{
    BoardView, JobList, JobOutcome, JobResult, JobView, ProgressView, millis, timestamp,
};
