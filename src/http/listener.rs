//! The listener: accepts TCP connections and serves HTTP/1.1 on them under
//! [`ConnectionLimits`], so that no client can hold the process's sockets or keep it from
//! stopping. [`serve`] is the accept loop; every connection is a task of its own with an
//! `Activity` record (requests in flight, when it last went idle, when the next request's
//! first byte came), which its watchdog turns into one deadline at a time:
//!
//! - a new connection: its first request's headers must be in within the header timeout
//!   of the accept;
//! - between requests: the next request's first byte must come within the idle timeout,
//!   and its headers within the header timeout of that byte;
//! - a request in flight (its body read, its handler running, its answer or event stream
//!   written): no deadline for the connection. The body has its own ([`TimedBody`], 408
//!   when it is late); the answer has none, so event streams and long polls last as long
//!   as they need.
//!
//! Connections are counted per peer IP address and in all; one over either cap is closed
//! as soon as it is accepted, before anything is read from it, so a client at its cap
//! cannot take the descriptors other clients need.

use std::collections::HashMap;
use std::convert::Infallible;
use std::future::Future;
use std::io;
use std::net::{IpAddr, SocketAddr};
use std::pin::{Pin, pin};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, ready};
use std::time::Duration;

use axum::Router;
use axum::extract::ConnectInfo;
use hyper::body::{Body as HttpBody, Bytes, Frame, Incoming, SizeHint};
use hyper::server::conn::http1;
use hyper_util::rt::TokioIo;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Notify, watch};
use tokio::task::JoinSet;
use tokio::time::{Instant, Sleep};
use tower::ServiceExt;

/// How long a connection may take over each part of a request, and how many may be open.
#[derive(Clone, Copy, Debug)]
pub struct ConnectionLimits {
    /// From the accept (or the first byte of a later request) to the end of its headers.
    pub header_timeout: Duration,
    /// Between requests on a kept-alive connection, with none in flight.
    pub idle_timeout: Duration,
    /// From the end of a request's headers to the end of its body.
    pub body_timeout: Duration,
    /// Open connections, all clients together.
    pub max_connections: usize,
    /// Open connections from one peer IP address.
    pub max_connections_per_client: usize,
}

/// Serves `app` on `listener` until `stop` resolves, then stops accepting, closes the
/// connections with no request in flight and lets the others finish their answer until
/// the instant `stop` resolved to; whatever is still open then is closed.
pub async fn serve(
    listener: TcpListener,
    app: Router,
    limits: ConnectionLimits,
    stop: impl Future<Output = Instant>,
) {
    let open = Arc::new(OpenConnections::default());
    let (stopping, stop_watch) = watch::channel(false);
    let mut connections = JoinSet::new();
    let mut stop = pin!(stop);
    let deadline = loop {
        tokio::select! {
            deadline = &mut stop => break deadline,
            accepted = listener.accept() => match accepted {
                Ok((stream, peer)) => match open.admit(peer.ip(), &limits) {
                    Ok(slot) => {
                        connections.spawn(serve_connection(
                            stream,
                            peer,
                            app.clone(),
                            limits,
                            slot,
                            stop_watch.clone(),
                        ));
                    }
                    // Dropped unread: the client sees the connection closed at once.
                    Err(refusal) => {
                        metrics::counter!("puzzled_connections_refused_total", "reason" => refusal.name())
                            .increment(1);
                        tracing::debug!(%peer, reason = refusal.name(), "connection refused");
                    }
                },
                Err(error) if is_connection_error(&error) => {}
                // Out of descriptors, most likely: wait a little rather than spin.
                Err(error) => {
                    tracing::warn!(%error, "accepting a connection failed");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
            },
            Some(_) = connections.join_next() => {}
        }
    };
    drop(listener);
    stopping.send_replace(true);
    let drained = tokio::time::timeout_at(deadline, async {
        while connections.join_next().await.is_some() {}
    })
    .await;
    if drained.is_err() {
        tracing::info!(
            open = connections.len(),
            "closing the connections still open at the end of the grace period"
        );
    }
    // Dropping the set aborts every connection task left, closing its socket.
}

fn is_connection_error(error: &io::Error) -> bool {
    matches!(
        error.kind(),
        io::ErrorKind::ConnectionRefused
            | io::ErrorKind::ConnectionAborted
            | io::ErrorKind::ConnectionReset
    )
}

/// One connection, from the accept to its close.
async fn serve_connection(
    stream: TcpStream,
    peer: SocketAddr,
    app: Router,
    limits: ConnectionLimits,
    _slot: Slot,
    mut stop: watch::Receiver<bool>,
) {
    let activity = Arc::new(Activity::new());
    let io = TokioIo::new(Watched {
        stream,
        activity: Arc::clone(&activity),
    });
    let answering = Arc::clone(&activity);
    let service = hyper::service::service_fn(move |request: hyper::Request<Incoming>| {
        let in_flight = InFlight::begin(Arc::clone(&answering));
        let mut request =
            request.map(|body| axum::body::Body::new(TimedBody::new(body, limits.body_timeout)));
        // The peer names the client for request rates and queue limits without API keys.
        request.extensions_mut().insert(ConnectInfo(peer));
        let answer = app.clone().oneshot(request);
        async move {
            let response = answer.await.unwrap_or_else(|never| match never {});
            Ok::<_, Infallible>(response.map(|body| Answer {
                body,
                _in_flight: in_flight,
            }))
        }
    });
    // hyper's own header timeout would also run between requests, cutting kept-alive
    // connections at the header timeout; the watchdog below times both apart.
    let connection = http1::Builder::new()
        .header_read_timeout(None)
        .serve_connection(io, service);
    let mut connection = pin!(connection);
    let mut stopping = false;
    loop {
        tokio::select! {
            served = connection.as_mut() => {
                if let Err(error) = served {
                    tracing::debug!(%peer, %error, "connection ended with an error");
                }
                return;
            }
            // Nothing in flight: dropping the connection closes it, and loses no answer.
            expired = activity.expired(&limits) => {
                metrics::counter!("puzzled_connections_closed_total", "reason" => expired.name())
                    .increment(1);
                tracing::debug!(%peer, reason = expired.name(), "connection closed");
                return;
            }
            _ = stop.wait_for(|stop| *stop), if !stopping => {
                stopping = true;
                if activity.in_flight() == 0 {
                    return;
                }
                // Closes once the answer in flight has been written.
                connection.as_mut().graceful_shutdown();
            }
        }
    }
}

/// Why a connection was refused at the accept.
#[derive(Clone, Copy, Debug)]
enum Refusal {
    AllClients,
    ThisClient,
}

impl Refusal {
    fn name(self) -> &'static str {
        match self {
            Refusal::AllClients => "max_connections",
            Refusal::ThisClient => "max_connections_per_client",
        }
    }
}

/// The open connections, in all and per peer address.
#[derive(Default)]
struct OpenConnections {
    counts: Mutex<Counts>,
}

#[derive(Default)]
struct Counts {
    total: usize,
    per_client: HashMap<IpAddr, usize>,
}

impl OpenConnections {
    fn admit(self: &Arc<Self>, peer: IpAddr, limits: &ConnectionLimits) -> Result<Slot, Refusal> {
        // An IPv4 client reaching a dual-stack socket is the same client as over IPv4.
        let client = peer.to_canonical();
        let mut counts = self
            .counts
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if counts.total >= limits.max_connections {
            return Err(Refusal::AllClients);
        }
        let of_client = counts.per_client.entry(client).or_insert(0);
        if *of_client >= limits.max_connections_per_client {
            return Err(Refusal::ThisClient);
        }
        *of_client += 1;
        counts.total += 1;
        Ok(Slot {
            open: Arc::clone(self),
            client,
        })
    }
}

/// One admitted connection's place in the counts, given back when it closes.
struct Slot {
    open: Arc<OpenConnections>,
    client: IpAddr,
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut counts = self
            .open
            .counts
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        counts.total -= 1;
        if let Some(of_client) = counts.per_client.get_mut(&self.client) {
            *of_client -= 1;
            if *of_client == 0 {
                counts.per_client.remove(&self.client);
            }
        }
    }
}

/// Which deadline closed a connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Expiry {
    HeaderTimeout,
    IdleTimeout,
}

impl Expiry {
    fn name(self) -> &'static str {
        match self {
            Expiry::HeaderTimeout => "header_timeout",
            Expiry::IdleTimeout => "idle_timeout",
        }
    }
}

/// Not yet (an instant as milliseconds after the accept).
const NEVER: u64 = u64::MAX;

/// What a connection is doing, as its watchdog needs it. Instants are milliseconds after
/// the accept, so that they fit atomics the reads and the answers update without a lock.
struct Activity {
    accepted: Instant,
    in_flight: AtomicUsize,
    /// When the last request in flight ended; `NEVER` while the first is awaited.
    idle_since: AtomicU64,
    /// When the first byte after `idle_since` came: the next request has begun.
    request_began: AtomicU64,
    /// Wakes the watchdog when its deadline may have moved.
    changed: Notify,
}

impl Activity {
    fn new() -> Activity {
        Activity {
            accepted: Instant::now(),
            in_flight: AtomicUsize::new(0),
            idle_since: AtomicU64::new(NEVER),
            request_began: AtomicU64::new(NEVER),
            changed: Notify::new(),
        }
    }

    fn now(&self) -> u64 {
        self.accepted.elapsed().as_millis() as u64
    }

    fn at(&self, millis: u64) -> Instant {
        self.accepted + Duration::from_millis(millis)
    }

    fn in_flight(&self) -> usize {
        self.in_flight.load(Ordering::SeqCst)
    }

    /// Bytes came from the client: between requests, the next one has begun.
    fn bytes_came(&self) {
        if self.in_flight() == 0
            && self
                .request_began
                .compare_exchange(NEVER, self.now(), Ordering::SeqCst, Ordering::SeqCst)
                .is_ok()
        {
            self.changed.notify_one();
        }
    }

    /// The instant the connection is closed at unless something happens first, and why;
    /// `None` while a request is in flight.
    fn deadline(&self, limits: &ConnectionLimits) -> Option<(Instant, Expiry)> {
        if self.in_flight() > 0 {
            return None;
        }
        let idle_since = self.idle_since.load(Ordering::SeqCst);
        let request_began = self.request_began.load(Ordering::SeqCst);
        Some(if idle_since == NEVER {
            (self.accepted + limits.header_timeout, Expiry::HeaderTimeout)
        } else if request_began != NEVER {
            (
                self.at(request_began) + limits.header_timeout,
                Expiry::HeaderTimeout,
            )
        } else {
            (
                self.at(idle_since) + limits.idle_timeout,
                Expiry::IdleTimeout,
            )
        })
    }

    /// Resolves when the connection's deadline has passed with nothing in flight.
    async fn expired(&self, limits: &ConnectionLimits) -> Expiry {
        loop {
            // Taken before the state is read: a change in between leaves a permit.
            let changed = self.changed.notified();
            match self.deadline(limits) {
                None => changed.await,
                Some((deadline, _)) => {
                    tokio::select! {
                        () = tokio::time::sleep_until(deadline) => {
                            match self.deadline(limits) {
                                Some((deadline, why)) if deadline <= Instant::now() => return why,
                                _ => {}
                            }
                        }
                        () = changed => {}
                    }
                }
            }
        }
    }
}

/// A request in flight on a connection, from its headers until its answer's body has
/// been written (or dropped).
struct InFlight {
    activity: Arc<Activity>,
}

impl InFlight {
    fn begin(activity: Arc<Activity>) -> InFlight {
        activity.in_flight.fetch_add(1, Ordering::SeqCst);
        InFlight { activity }
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        let activity = &self.activity;
        activity.request_began.store(NEVER, Ordering::SeqCst);
        activity.idle_since.store(activity.now(), Ordering::SeqCst);
        activity.in_flight.fetch_sub(1, Ordering::SeqCst);
        activity.changed.notify_one();
    }
}

/// The socket, noting when bytes come in.
struct Watched {
    stream: TcpStream,
    activity: Arc<Activity>,
}

impl AsyncRead for Watched {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let read = Pin::new(&mut self.stream).poll_read(cx, buf);
        if buf.filled().len() > before {
            self.activity.bytes_came();
        }
        read
    }
}

impl AsyncWrite for Watched {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.stream).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.stream).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_shutdown(cx)
    }
}

/// An answer's body, holding its request in flight until hyper has written and dropped it.
struct Answer {
    body: axum::body::Body,
    _in_flight: InFlight,
}

impl HttpBody for Answer {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

/// The request body did not arrive in full in time: answered 408 (`problem.rs`).
#[derive(Debug, thiserror::Error)]
#[error(
    "the request body did not arrive in full within {} ms of its headers",
    .after.as_millis()
)]
pub struct BodyTimedOut {
    pub after: Duration,
}

/// A request body that fails with [`BodyTimedOut`] once `timeout` has passed since its
/// headers, however the client trickles it: a slow or endless body takes a connection
/// for that long at most.
pub struct TimedBody {
    body: Incoming,
    timeout: Duration,
    deadline: Instant,
    /// Made on the first read that has to wait: most bodies arrive with their headers.
    timer: Option<Pin<Box<Sleep>>>,
}

impl TimedBody {
    fn new(body: Incoming, timeout: Duration) -> TimedBody {
        TimedBody {
            body,
            timeout,
            deadline: Instant::now() + timeout,
            timer: None,
        }
    }
}

impl HttpBody for TimedBody {
    type Data = Bytes;
    type Error = Box<dyn std::error::Error + Send + Sync>;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        let this = &mut *self;
        if let Poll::Ready(frame) = Pin::new(&mut this.body).poll_frame(cx) {
            return Poll::Ready(frame.map(|frame| frame.map_err(Into::into)));
        }
        let deadline = this.deadline;
        let timer = this
            .timer
            .get_or_insert_with(|| Box::pin(tokio::time::sleep_until(deadline)));
        ready!(timer.as_mut().poll(cx));
        Poll::Ready(Some(Err(Box::new(BodyTimedOut {
            after: this.timeout,
        }))))
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits(max_connections: usize, max_connections_per_client: usize) -> ConnectionLimits {
        ConnectionLimits {
            header_timeout: Duration::from_secs(1),
            idle_timeout: Duration::from_secs(1),
            body_timeout: Duration::from_secs(1),
            max_connections,
            max_connections_per_client,
        }
    }

    #[test]
    fn connections_are_counted_per_address_and_in_all_and_given_back() {
        let open = Arc::new(OpenConnections::default());
        let limits = limits(3, 2);
        let a: IpAddr = [192, 0, 2, 1].into();
        let b: IpAddr = [192, 0, 2, 2].into();
        // The same client over a dual-stack socket.
        let a_mapped: IpAddr = "::ffff:192.0.2.1".parse().expect("an address");
        let first = open.admit(a, &limits).expect("a's first");
        let _second = open.admit(a_mapped, &limits).expect("a's second");
        assert!(matches!(open.admit(a, &limits), Err(Refusal::ThisClient)));
        let third = open.admit(b, &limits).expect("b's first");
        assert!(matches!(open.admit(b, &limits), Err(Refusal::AllClients)));
        drop(first);
        let _again = open.admit(a, &limits).expect("a's slot given back");
        drop(third);
        let counts = open.counts.lock().expect("counts");
        assert_eq!(counts.total, 2);
        assert_eq!(counts.per_client.get(&b), None, "no entry left for b");
    }
}
