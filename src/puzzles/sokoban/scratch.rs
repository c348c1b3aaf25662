//! The buffers an expansion works in. [`super::SokobanDomain`] owns one set and lends it
//! to each expansion, its own and [`super::BoxMoveDomain`]'s, so that expanding a node
//! allocates nothing once the buffers have grown to the level.

use super::corral::Corrals;
use super::flood::Flood;
use super::matching::Hungarian;

#[derive(Default)]
pub(super) struct Scratch {
    /// The player's region in the position being expanded.
    pub region: Flood,
    /// For counting the areas the boxes cut the floor into (a feature).
    pub regions: Flood,
    /// For each child's normalised player.
    pub normalise: Flood,
    pub hungarian: Hungarian,
    /// Whether `hungarian` holds the full matching of the position being expanded.
    pub base: Base,
    pub corrals: Corrals,
    pub frozen: Vec<u16>,
    pub box_list: Vec<u16>,
    /// The boxes off their goals, for the hotspot feature.
    pub loose: Vec<u16>,
}

/// The full matching of an expansion's position, which each child's bound repairs. It is
/// solved when the first child needs a bound: on a search well under way many
/// expansions make only children already stored or dead, and the full solve is one of
/// an expansion's dearest steps.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) enum Base {
    #[default]
    Pending,
    Ready,
    /// The boxes cannot all reach distinct goals, or the solve was cut short.
    Failed,
}
