//! The edge: wire types now; routes, problem+json and SSE arrive with the service.

pub mod wire;
