//! The budget every search runs under, and the counters it keeps.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use super::{Cost, Stats, Stop};

/// Most expansions between real checks of the clock, the cancel flag and progress.
/// At millions of nodes per second this is well under a millisecond; domains with
/// costly expansions (Sokoban box moves) get checked more often, see [`CHECK_GAP`].
pub const CHECK_INTERVAL: u32 = 1024;

/// The time between checks the interval adapts to, halving when checks come further
/// apart than this and doubling when they come at under a quarter of it, so a
/// deadline or a cancel is noticed within a few milliseconds whatever a node costs.
pub const CHECK_GAP: Duration = Duration::from_millis(4);

/// A cancel flag shared with another thread (a job runner, a signal handler).
#[derive(Clone, Debug, Default)]
pub struct CancelFlag(Arc<AtomicBool>);

impl CancelFlag {
    pub fn new() -> CancelFlag {
        CancelFlag::default()
    }
    pub fn cancel(&self) {
        self.0.store(true, Ordering::Relaxed);
    }
    pub fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
}

/// Limits on one search. `None` means unlimited.
#[derive(Clone, Copy, Debug, Default)]
pub struct Limits {
    pub max_nodes: Option<u64>,
    pub timeout: Option<Duration>,
    /// Cap on memory for stored states (graph searches), in bytes.
    pub max_memory_bytes: Option<u64>,
}

/// A snapshot of a running search, sent to a [`ProgressSink`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Progress {
    pub nodes_expanded: u64,
    pub nodes_generated: u64,
    /// Current IDA* threshold, A* f-value or BFS depth.
    pub bound: Option<Cost>,
    pub elapsed: Duration,
}

/// Receives progress at a bounded rate (see [`Budget::with_progress`]).
pub trait ProgressSink: Sync {
    fn progress(&self, progress: &Progress);
}

/// Node limit, deadline, memory cap and cancel flag, checked cheaply: [`Budget::expand`]
/// only decrements a counter, and every [`CHECK_INTERVAL`] expansions (or exactly at the
/// node limit) it reads the clock and the flag.
pub struct Budget<'a> {
    limits: Limits,
    cancel: CancelFlag,
    started: Instant,
    deadline: Option<Instant>,
    countdown: u32,
    interval: u32,
    last_check: Instant,
    sink: Option<(&'a dyn ProgressSink, Duration)>,
    next_progress: Instant,
    pub stats: Stats,
}

impl<'a> Budget<'a> {
    pub fn new(limits: Limits, cancel: CancelFlag) -> Budget<'a> {
        let started = Instant::now();
        let mut budget = Budget {
            limits,
            cancel,
            started,
            deadline: limits.timeout.map(|t| started + t),
            countdown: 0,
            // Grows to CHECK_INTERVAL within a few checks when nodes are cheap.
            interval: 1,
            last_check: started,
            sink: None,
            next_progress: started,
            stats: Stats::default(),
        };
        budget.countdown = budget.next_countdown();
        budget
    }

    pub fn unlimited() -> Budget<'a> {
        Budget::new(Limits::default(), CancelFlag::new())
    }

    /// Sends progress to `sink` at most once per `interval`.
    pub fn with_progress(mut self, sink: &'a dyn ProgressSink, interval: Duration) -> Budget<'a> {
        self.next_progress = self.started + interval;
        self.sink = Some((sink, interval));
        self
    }

    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    /// Counts one expansion; `Err` when the search must stop now.
    #[inline]
    pub fn expand(&mut self) -> Result<(), Stop> {
        self.stats.nodes_expanded += 1;
        self.countdown -= 1;
        if self.countdown == 0 {
            self.check()
        } else {
            Ok(())
        }
    }

    #[inline]
    pub fn generated(&mut self, n: usize) {
        self.stats.nodes_generated += n as u64;
    }

    pub fn set_bound(&mut self, bound: Cost) {
        self.stats.bound = Some(bound);
    }

    /// `Err(MemoryLimit)` when holding `bytes` would exceed the cap.
    #[inline]
    pub fn check_memory(&self, bytes: u64) -> Result<(), Stop> {
        match self.limits.max_memory_bytes {
            Some(cap) if bytes > cap => Err(Stop::MemoryLimit),
            _ => Ok(()),
        }
    }

    /// `Err(TimeLimit)` when `work` more would end after the deadline: a search asks
    /// before a step it cannot interrupt (a big table growing), so as not to overrun.
    #[cold]
    pub fn check_time_for(&self, work: Duration) -> Result<(), Stop> {
        if self.deadline.is_some_and(|d| Instant::now() + work >= d) {
            return Err(Stop::TimeLimit);
        }
        Ok(())
    }

    #[cold]
    fn check(&mut self) -> Result<(), Stop> {
        let now = Instant::now();
        let gap = now - self.last_check;
        self.last_check = now;
        if gap > CHECK_GAP {
            self.interval = (self.interval / 2).max(1);
        } else if gap < CHECK_GAP / 4 {
            self.interval = (self.interval * 2).min(CHECK_INTERVAL);
        }
        self.countdown = self.next_countdown();
        if self.cancel.is_cancelled() {
            return Err(Stop::Cancelled);
        }
        if self
            .limits
            .max_nodes
            .is_some_and(|max| self.stats.nodes_expanded >= max)
        {
            return Err(Stop::NodeLimit);
        }
        if self.deadline.is_some_and(|d| now >= d) {
            return Err(Stop::TimeLimit);
        }
        if let Some((sink, interval)) = self.sink
            && now >= self.next_progress
        {
            self.next_progress = now + interval;
            sink.progress(&Progress {
                nodes_expanded: self.stats.nodes_expanded,
                nodes_generated: self.stats.nodes_generated,
                bound: self.stats.bound,
                elapsed: now - self.started,
            });
        }
        Ok(())
    }

    /// Expansions until the next real check: the interval, or fewer so the node
    /// limit is hit exactly.
    fn next_countdown(&self) -> u32 {
        match self.limits.max_nodes {
            Some(max) => {
                let left = max.saturating_sub(self.stats.nodes_expanded);
                left.clamp(1, u64::from(self.interval)) as u32
            }
            None => self.interval,
        }
    }

    /// Stamps the elapsed time and returns the statistics.
    pub fn finish(&mut self) -> Stats {
        self.stats.elapsed = self.started.elapsed();
        self.stats
    }
}
