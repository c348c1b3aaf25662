//! Job ids: made by the store when a job is accepted, opaque to clients.

use std::fmt;

/// A job's id (a random UUID); any text a client sends is only ever looked up.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct JobId(String);

impl JobId {
    /// A fresh id.
    pub fn random() -> JobId {
        JobId(uuid::Uuid::new_v4().to_string())
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// An id as a client or the store spells it.
impl From<String> for JobId {
    fn from(text: String) -> JobId {
        JobId(text)
    }
}

impl fmt::Display for JobId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}
