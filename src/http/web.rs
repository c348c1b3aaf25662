//! The web page (`GET /`), the embeddable widget (`GET /embed.js`) and their modules and
//! style sheets (`GET /assets/{file}`): the files of `web/`, compiled into the binary.
//! No build step: they are plain ES modules and CSS, served as they are.

use std::sync::OnceLock;

use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

use super::problem::Problem;
use super::routes::PathParam;

/// One file of `web/`, with its validator, computed on first use.
struct Asset {
    name: &'static str,
    content_type: &'static str,
    body: &'static str,
    etag: OnceLock<HeaderValue>,
}

const HTML: &str = "text/html; charset=utf-8";
const JAVASCRIPT: &str = "text/javascript; charset=utf-8";
const CSS: &str = "text/css; charset=utf-8";
const SVG: &str = "image/svg+xml";

macro_rules! asset {
    ($name:literal, $path:literal, $content_type:expr) => {
        Asset {
            name: $name,
            content_type: $content_type,
            body: include_str!(concat!("../../web/", $path)),
            etag: OnceLock::new(),
        }
    };
}

static PAGE: Asset = asset!("index.html", "index.html", HTML);
static EMBED: Asset = asset!("embed.js", "embed.js", JAVASCRIPT);
static ASSETS: [Asset; 11] = [
    asset!("app.js", "assets/app.js", JAVASCRIPT),
    asset!("board.js", "assets/board.js", JAVASCRIPT),
    asset!("client.js", "assets/client.js", JAVASCRIPT),
    asset!("player.js", "assets/player.js", JAVASCRIPT),
    asset!("puzzles.js", "assets/puzzles.js", JAVASCRIPT),
    asset!("samples.js", "assets/samples.js", JAVASCRIPT),
    asset!("twenty48.js", "assets/twenty48.js", JAVASCRIPT),
    asset!("view.js", "assets/view.js", JAVASCRIPT),
    asset!("player.css", "assets/player.css", CSS),
    asset!("style.css", "assets/style.css", CSS),
    asset!("icon.svg", "assets/icon.svg", SVG),
];

/// Everything from our own origin, nothing inline: the page's scripts and styles are
/// files, and boards are drawn through the DOM. No site may frame the page (against
/// clickjacking its Solve and Cancel); other sites embed the solver through `embed.js`,
/// a script, which framing rules do not touch.
const CONTENT_SECURITY_POLICY: &str = "default-src 'self'; img-src 'self' data:; object-src 'none'; \
     base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

impl Asset {
    fn etag(&self) -> &HeaderValue {
        self.etag.get_or_init(|| {
            use sha2::{Digest, Sha256};
            let digest = Sha256::digest(self.body.as_bytes());
            let hex: String = digest[..12].iter().map(|b| format!("{b:02x}")).collect();
            HeaderValue::from_str(&format!("\"{hex}\"")).unwrap_or(HeaderValue::from_static("\"\""))
        })
    }

    /// The file, or 304 when the client's copy is current. Names carry no version, so
    /// clients revalidate every time (`no-cache`) and a new build shows at once.
    fn respond(&self, request: &HeaderMap) -> Response {
        let etag = self.etag();
        let current = request
            .get(header::IF_NONE_MATCH)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|tags| {
                tags.split(',').any(|tag| {
                    let tag = tag.trim();
                    tag == "*" || tag.trim_start_matches("W/").as_bytes() == etag.as_bytes()
                })
            });
        let mut response = if current {
            StatusCode::NOT_MODIFIED.into_response()
        } else {
            (
                [(
                    header::CONTENT_TYPE,
                    HeaderValue::from_static(self.content_type),
                )],
                self.body,
            )
                .into_response()
        };
        let headers = response.headers_mut();
        headers.insert(header::ETAG, etag.clone());
        headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
        headers.insert(
            header::X_CONTENT_TYPE_OPTIONS,
            HeaderValue::from_static("nosniff"),
        );
        headers.insert(
            header::REFERRER_POLICY,
            HeaderValue::from_static("no-referrer"),
        );
        headers.insert(
            header::CONTENT_SECURITY_POLICY,
            HeaderValue::from_static(CONTENT_SECURITY_POLICY),
        );
        // frame-ancestors for browsers that predate it.
        headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
        response
    }
}

pub async fn page(headers: HeaderMap) -> Response {
    PAGE.respond(&headers)
}

pub async fn embed(headers: HeaderMap) -> Response {
    EMBED.respond(&headers)
}

pub async fn asset(
    PathParam(file): PathParam<String>,
    headers: HeaderMap,
) -> Result<Response, Problem> {
    ASSETS
        .iter()
        .find(|asset| asset.name == file)
        .map(|asset| asset.respond(&headers))
        .ok_or_else(|| Problem::not_found("asset with this name"))
}
