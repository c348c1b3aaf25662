//! Request rates per caller: a token bucket for each (an API key, or an IP address when
//! the service has no keys), kept as GCRA does it, one instant per caller: when that
//! caller's bucket is full again. A request takes one token; the bucket holds `burst`
//! and refills at `per_second`. State lives in this process only: several API processes
//! each allow the full rate.

use std::time::{Duration, Instant};

use dashmap::DashMap;

pub struct RateLimiter {
    /// How long one token takes to come back: 1 / rate.
    interval: Duration,
    /// How far past now a caller's full-again instant may lie and still take a token:
    /// `burst - 1` intervals.
    tolerance: Duration,
    /// Per caller, when its bucket is full again. A caller whose instant has passed is
    /// the same as one never seen, so [`RateLimiter::evict_idle`] may drop it.
    full_at: DashMap<String, Instant>,
}

impl RateLimiter {
    /// `per_second` must be finite and at least 0.001, `burst` at least 1 (the flags'
    /// parsers hold them to that).
    pub fn new(per_second: f64, burst: u32) -> RateLimiter {
        let interval = Duration::from_secs_f64(1.0 / per_second);
        RateLimiter {
            interval,
            tolerance: interval * burst.saturating_sub(1),
            full_at: DashMap::new(),
        }
    }

    /// Takes a token of `client`'s at `now`, or says how long until one is free.
    pub fn check(&self, client: &str, now: Instant) -> Result<(), Duration> {
        // Known callers, the usual case, cost no allocation for the key.
        if let Some(mut full_at) = self.full_at.get_mut(client) {
            return self.take(&mut full_at, now);
        }
        let mut full_at = self.full_at.entry(client.to_string()).or_insert(now);
        self.take(&mut full_at, now)
    }

    fn take(&self, full_at: &mut Instant, now: Instant) -> Result<(), Duration> {
        let from = (*full_at).max(now);
        let ahead = from - now;
        if ahead > self.tolerance {
            return Err(ahead - self.tolerance);
        }
        *full_at = from + self.interval;
        Ok(())
    }

    /// Forgets callers whose bucket is full again at `now`, so that memory is bounded by
    /// the callers of the last `burst / per_second` seconds.
    pub fn evict_idle(&self, now: Instant) {
        self.full_at.retain(|_, full_at| *full_at > now);
    }

    /// Callers remembered now.
    pub fn callers(&self) -> usize {
        self.full_at.len()
    }
}

/// Whole seconds for `Retry-After`, rounded up so that a client that waits that long
/// finds a token, and at least 1.
pub fn retry_after_seconds(wait: Duration) -> u64 {
    (wait.as_secs_f64().ceil() as u64).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_burst_is_served_then_one_request_per_interval() {
        let limiter = RateLimiter::new(2.0, 3);
        let start = Instant::now();
        for _ in 0..3 {
            assert_eq!(limiter.check("a", start), Ok(()));
        }
        assert_eq!(
            limiter.check("a", start),
            Err(Duration::from_millis(500)),
            "the fourth waits one interval"
        );
        // Another caller has a bucket of its own.
        assert_eq!(limiter.check("b", start), Ok(()));
        let later = start + Duration::from_millis(400);
        assert_eq!(limiter.check("a", later), Err(Duration::from_millis(100)));
        let refilled = start + Duration::from_millis(500);
        assert_eq!(limiter.check("a", refilled), Ok(()));
        assert!(limiter.check("a", refilled).is_err());
        // After burst / rate seconds of quiet the whole burst is back.
        let quiet = refilled + Duration::from_millis(1500);
        for _ in 0..3 {
            assert_eq!(limiter.check("a", quiet), Ok(()));
        }
        assert!(limiter.check("a", quiet).is_err());
    }

    #[test]
    fn refused_requests_take_no_token() {
        let limiter = RateLimiter::new(1.0, 1);
        let start = Instant::now();
        assert_eq!(limiter.check("a", start), Ok(()));
        for _ in 0..10 {
            assert_eq!(limiter.check("a", start), Err(Duration::from_secs(1)));
        }
        assert_eq!(limiter.check("a", start + Duration::from_secs(1)), Ok(()));
    }

    #[test]
    fn idle_callers_are_forgotten_and_busy_ones_kept() {
        let limiter = RateLimiter::new(10.0, 5);
        let start = Instant::now();
        limiter.check("idle", start).expect("a token");
        let later = start + Duration::from_millis(50);
        for _ in 0..3 {
            limiter.check("busy", later).expect("a token");
        }
        limiter.evict_idle(start + Duration::from_millis(150));
        assert_eq!(limiter.callers(), 1);
        // Forgetting a full bucket changes nothing for its caller.
        for _ in 0..5 {
            limiter
                .check("idle", start + Duration::from_millis(150))
                .expect("a full bucket");
        }
    }

    #[test]
    fn retry_after_rounds_up_to_whole_seconds() {
        for (wait_ms, seconds) in [(1, 1), (999, 1), (1000, 1), (1001, 2), (0, 1)] {
            assert_eq!(
                retry_after_seconds(Duration::from_millis(wait_ms)),
                seconds,
                "{wait_ms} ms"
            );
        }
    }
}
