//! Games with chance, for the game-tree engine ([`crate::search::game`]): 2048 (one
//! player against the spawns) and Pig (two players and a die). Std only, no I/O.

pub mod pig;
pub mod twenty48;
