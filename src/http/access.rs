//! Who may call the API, and how often. [`ApiKeys`] holds the optional keys as SHA-256
//! digests only; [`Caller`] is who a request acts as (a key, or the peer's address when
//! the service has no keys); [`admit`] names a request's caller, or refuses a missing or
//! unknown key and a caller over its request rate ([`super::guard`] answers for it).

use std::collections::HashMap;
use std::net::IpAddr;
use std::time::Instant;

use axum::http::{HeaderMap, header};
use sha2::{Digest, Sha256};

use super::rate_limit::{RateLimiter, retry_after_seconds};
use crate::jobs::store::Owner;

/// The access rules of one process.
pub struct Access {
    /// `None`: the service has no keys, and every caller sees every job.
    pub keys: Option<ApiKeys>,
    /// `None`: no request-rate limit (`--rate-limit 0`).
    pub limiter: Option<RateLimiter>,
}

/// The keys that may call, as their SHA-256 digests, each with the id its jobs are
/// stored under.
#[derive(Debug)]
pub struct ApiKeys {
    owners: HashMap<[u8; 32], String>,
}

/// Hex digits of a key's SHA-256 that name it in the store: 64 bits, enough to tell a
/// handful of keys apart, and nothing an attacker could log in with.
const KEY_ID_HEX_DIGITS: usize = 16;
/// Fewer characters than this are too easy to guess.
const MIN_KEY_CHARS: usize = 16;

#[derive(Debug, thiserror::Error)]
pub enum KeysError {
    #[error("line {line} of the keys file: {why}")]
    FileLine { line: usize, why: &'static str },
    #[error("key {item} of PUZZLED_API_KEYS: {why}")]
    Listed { item: usize, why: &'static str },
    #[error(
        "the API keys name no key; an empty list would leave the API open, so give at least one or none at all"
    )]
    Empty,
}

impl ApiKeys {
    /// Keys from a keys file's `text` (one a line: a key, or `sha256:` and the key's
    /// digest in hex; blank lines and `#` comments skipped) and from `listed` plain keys
    /// (`PUZZLED_API_KEYS`, comma-separated; empty items skipped). `None` when neither
    /// was given; an error when a given file names no key.
    pub fn parse(text: Option<&str>, listed: &[String]) -> Result<Option<ApiKeys>, KeysError> {
        let mut digests = Vec::new();
        if let Some(text) = text {
            for (index, line) in text.lines().enumerate() {
                let line = line.trim();
                if line.is_empty() || line.starts_with('#') {
                    continue;
                }
                let digest = match line.strip_prefix("sha256:") {
                    Some(hex) => parse_digest(hex),
                    None => check_key(line).map(digest_of),
                };
                digests.push(digest.map_err(|why| KeysError::FileLine {
                    line: index + 1,
                    why,
                })?);
            }
            if digests.is_empty() {
                return Err(KeysError::Empty);
            }
        }
        for (index, key) in listed.iter().map(|k| k.trim()).enumerate() {
            if !key.is_empty() {
                let key = check_key(key).map_err(|why| KeysError::Listed {
                    item: index + 1,
                    why,
                })?;
                digests.push(digest_of(key));
            }
        }
        if text.is_none() && digests.is_empty() {
            return Ok(None);
        }
        let owners = digests
            .into_iter()
            .map(|digest| (digest, hex(&digest)[..KEY_ID_HEX_DIGITS].to_string()))
            .collect();
        Ok(Some(ApiKeys { owners }))
    }

    /// The id of the key `token` is, if it is one. The token is hashed and the digest
    /// looked up: how long that takes says nothing about how close a guess came.
    fn owner(&self, token: &str) -> Option<&str> {
        self.owners.get(&digest_of(token)).map(String::as_str)
    }

    /// How many keys may call.
    pub fn count(&self) -> usize {
        self.owners.len()
    }
}

/// A plain key as the `Authorization` header can carry it (RFC 6750's b64token).
fn check_key(key: &str) -> Result<&str, &'static str> {
    let token_char = |c: char| c.is_ascii_alphanumeric() || "-._~+/=".contains(c);
    if !key.chars().all(token_char) {
        return Err("a key may hold only letters, digits and - . _ ~ + / =");
    }
    if key.len() < MIN_KEY_CHARS {
        return Err("a key needs at least 16 characters (`openssl rand -hex 32` makes one)");
    }
    Ok(key)
}

fn parse_digest(hex: &str) -> Result<[u8; 32], &'static str> {
    const WHY: &str = "after sha256: give the key's SHA-256 as 64 hex digits";
    if hex.len() != 64 || !hex.is_ascii() {
        return Err(WHY);
    }
    let mut digest = [0; 32];
    for (byte, pair) in digest.iter_mut().zip(hex.as_bytes().chunks(2)) {
        let pair = std::str::from_utf8(pair).map_err(|_| WHY)?;
        *byte = u8::from_str_radix(pair, 16).map_err(|_| WHY)?;
    }
    Ok(digest)
}

fn digest_of(key: &str) -> [u8; 32] {
    Sha256::digest(key.as_bytes()).into()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Who a request acts as.
#[derive(Clone, Debug)]
pub struct Caller {
    /// Whose jobs it sees, and whom the jobs it submits belong to.
    pub owner: Owner,
    /// Whom its request rate and queued jobs count against: the key's id, or the peer's
    /// IP address when the service has no keys.
    pub client: String,
}

/// Why a request was refused before it reached its route.
#[derive(Debug, thiserror::Error)]
pub enum AccessError {
    #[error("this service needs an API key: send Authorization: Bearer <key>")]
    MissingKey,
    #[error("this API key is not one the service knows")]
    UnknownKey,
    #[error("too many requests from this client; try again in {retry_after} s")]
    RateLimited {
        /// Whole seconds until the client's next request is served.
        retry_after: u64,
    },
}

/// Names the caller of a request from `peer` with `headers` at `now`, and takes a token
/// of its request rate.
pub fn admit(
    access: &Access,
    peer: IpAddr,
    headers: &HeaderMap,
    now: Instant,
) -> Result<Caller, AccessError> {
    let address = || peer.to_string();
    let caller = match &access.keys {
        None => Ok(Caller {
            owner: Owner::Anyone,
            client: address(),
        }),
        Some(keys) => bearer_token(headers)
            .ok_or(AccessError::MissingKey)
            .and_then(|token| keys.owner(token).ok_or(AccessError::UnknownKey))
            .map(|id| Caller {
                owner: Owner::Key(id.to_string()),
                client: id.to_string(),
            }),
    };
    if let Some(limiter) = &access.limiter {
        // A refused request counts against its address, so guessing keys is rate-limited
        // too (a key id is hex digits, never an address: the buckets cannot mix).
        let refused_address;
        let client = match &caller {
            Ok(caller) => caller.client.as_str(),
            Err(_) => {
                refused_address = address();
                refused_address.as_str()
            }
        };
        limiter
            .check(client, now)
            .map_err(|wait| AccessError::RateLimited {
                retry_after: retry_after_seconds(wait),
            })?;
    }
    caller
}

/// The token of an `Authorization: Bearer <token>` header (the scheme in any case).
fn bearer_token(headers: &HeaderMap) -> Option<&str> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.split_once(' ')?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then(|| token.trim())
        .filter(|token| !token.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    const KEY_A: &str = "alpha-0123456789abcdef";
    const KEY_B: &str = "bravo-0123456789abcdef";

    fn keys(text: Option<&str>, listed: &[&str]) -> Result<Option<ApiKeys>, KeysError> {
        let listed: Vec<String> = listed.iter().map(|k| k.to_string()).collect();
        ApiKeys::parse(text, &listed)
    }

    fn headers(authorization: Option<&str>) -> HeaderMap {
        let mut headers = HeaderMap::new();
        if let Some(value) = authorization {
            headers.insert(
                header::AUTHORIZATION,
                HeaderValue::from_str(value).expect("ascii"),
            );
        }
        headers
    }

    #[test]
    fn a_keys_file_holds_keys_or_their_digests_with_comments() {
        let digest_b = hex(&digest_of(KEY_B));
        let text = format!(
            "# clients\n\n{KEY_A}\n  sha256:{}  # not a comment here\n",
            "0".repeat(64)
        );
        assert!(matches!(
            keys(Some(&text), &[]),
            Err(KeysError::FileLine { line: 4, .. })
        ));
        let text = format!(
            "# clients\n\n{KEY_A}\n  sha256:{}  \n",
            digest_b.to_uppercase()
        );
        let keys = keys(Some(&text), &[]).expect("parses").expect("keys on");
        assert_eq!(keys.count(), 2);
        assert_eq!(keys.owner(KEY_A), Some(&hex(&digest_of(KEY_A))[..16]));
        assert_eq!(keys.owner(KEY_B), Some(&digest_b[..16]));
        assert_eq!(keys.owner("sha256:whatever-0123456789"), None);
        assert_eq!(keys.owner(&digest_b), None, "a digest is not a key");
    }

    #[test]
    fn bad_or_absent_keys_are_refused_at_start_up() {
        assert!(keys(None, &[]).expect("no keys").is_none());
        assert!(keys(None, &["", " "]).expect("no keys").is_none());
        assert!(matches!(
            keys(Some("# nothing\n"), &[]),
            Err(KeysError::Empty)
        ));
        for (text, line) in [
            ("short\n", 1),
            (&*format!("{KEY_A}\nwith space 0123456789\n"), 2),
            ("sha256:abc\n", 1),
            (&*format!("sha256:{}\n", "g".repeat(64)), 1),
        ] {
            assert!(
                matches!(keys(Some(text), &[]), Err(KeysError::FileLine { line: l, .. }) if l == line),
                "{text:?}"
            );
        }
        assert!(matches!(
            keys(None, &[KEY_A, "short"]),
            Err(KeysError::Listed { item: 2, .. })
        ));
        let both = keys(Some(KEY_A), &[KEY_B]).expect("parses").expect("on");
        assert_eq!(both.count(), 2);
    }

    #[test]
    fn callers_are_keys_when_there_are_keys_and_addresses_otherwise() {
        let peer: IpAddr = [192, 0, 2, 7].into();
        let now = Instant::now();
        let open = Access {
            keys: None,
            limiter: None,
        };
        let caller = admit(&open, peer, &headers(None), now).expect("open");
        assert_eq!(
            (caller.owner, caller.client.as_str()),
            (Owner::Anyone, "192.0.2.7")
        );

        // Bursts of five: the address's bucket and the key's are apart.
        let locked = Access {
            keys: keys(None, &[KEY_A]).expect("parses"),
            limiter: Some(RateLimiter::new(1.0, 5)),
        };
        for authorization in [None, Some("Basic abc"), Some("Bearer "), Some(KEY_A)] {
            assert!(matches!(
                admit(&locked, peer, &headers(authorization), now),
                Err(AccessError::MissingKey)
            ));
        }
        let wrong = headers(Some("Bearer wrong-0123456789abcdef"));
        assert!(matches!(
            admit(&locked, peer, &wrong, now),
            Err(AccessError::UnknownKey)
        ));
        assert!(
            matches!(
                admit(&locked, peer, &wrong, now),
                Err(AccessError::RateLimited { retry_after: 1 })
            ),
            "guesses from one address are limited"
        );
        let keyed = headers(Some(&format!("bearer {KEY_A}")));
        for _ in 0..5 {
            let caller = admit(&locked, peer, &keyed, now).expect("the key");
            assert_eq!(caller.owner, Owner::Key(caller.client.clone()));
            assert_eq!(caller.client.len(), KEY_ID_HEX_DIGITS);
        }
        assert!(matches!(
            admit(&locked, peer, &keyed, now),
            Err(AccessError::RateLimited { retry_after: 1 })
        ));
    }
}
