//! What a rendered page received: the responses its scripts worked with, kept as evidence.
//!
//! A page whose text a script writes shows a court nothing in its served HTML: the text came
//! from an `XMLHttpRequest` answer, a decoded string in a script file, a frame. So while
//! [`Browser::render_page`](crate::Browser::render_page) renders a page it records, through the
//! DevTools protocol's Network domain of the page itself, every response of the kinds a script
//! writes text from ([`KEPT_TYPES`]: scripts, XHR, `fetch`, event streams and frame
//! documents), with its URL, status, headers and body (`Network.getResponseBody`).
//!
//! Why the DevTools protocol and not the proxy: for `https` the proxy sees only a `CONNECT`
//! tunnel, and the bytes inside are encrypted; the browser sees the responses as the page did.
//! The price: Chromium hands a *text* response's body over decoded to a string, so such a body is
//! kept as that text in UTF-8 ([`Subresponse::decoded_text`]), byte for byte what the script
//! read, but not necessarily the bytes on the wire when the server sent another charset.
//!
//! Bounds ([`CaptureLimits`]): at most `max_responses` responses are kept (later ones are only
//! counted), a body over `max_body_bytes`, or one that would bring the bodies kept past
//! `max_total_bytes`, is recorded without its body and says why. Images, media, fonts and
//! style sheets are not kept: no script writes text from them.

use std::collections::HashSet;

use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;
use chromiumoxide::cdp::browser_protocol::network::{
    EventLoadingFailed, EventLoadingFinished, EventResponseReceived, GetResponseBodyParams,
    ResourceType,
};
use chromiumoxide::listeners::EventStream;
use futures_util::{FutureExt, StreamExt};
use url::Url;

use crate::BrowserError;

/// The kinds of response a page's scripts may write its text from, and which are kept.
/// ("Other", e.g. the browser's own `favicon.ico` request, is not: no script asked for it.)
pub const KEPT_TYPES: [&str; 5] = ["Script", "XHR", "Fetch", "EventSource", "Document"];

/// How much of a rendered page's traffic is kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CaptureLimits {
    /// Responses kept per page; later ones are counted in
    /// [`RenderedPage::responses_not_kept`].
    pub max_responses: usize,
    /// Largest body kept (the crawler passes its body cap).
    pub max_body_bytes: usize,
    /// Most bytes of bodies kept per page, all responses together.
    pub max_total_bytes: usize,
}

impl Default for CaptureLimits {
    /// 64 responses, 8 MiB a body, 32 MiB in all.
    fn default() -> Self {
        Self {
            max_responses: 64,
            max_body_bytes: 8 * 1024 * 1024,
            max_total_bytes: 32 * 1024 * 1024,
        }
    }
}

/// One response a rendered page received besides its own document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Subresponse {
    /// The URL that answered (after redirects).
    pub url: String,
    /// Chromium's resource type: `Script`, `XHR`, `Fetch`, `Document` (a frame)…
    pub resource_type: String,
    /// HTTP status.
    pub status: u16,
    /// Response headers as Chromium reports them (names lower-case), sorted by name.
    pub headers: Vec<(String, String)>,
    /// The MIME type Chromium took it for.
    pub mime_type: String,
    /// The body, when it was kept (see [`Subresponse::body_note`] when not).
    pub body: Option<Vec<u8>>,
    /// Whether `body` is the text Chromium decoded (kept as UTF-8) rather than the bytes
    /// received (a binary body).
    pub decoded_text: bool,
    /// Why there is no body (failed load, over a limit, not available).
    pub body_note: Option<String>,
}

/// A page as the browser rendered it: the DOM after its scripts ran, and what they received.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RenderedPage {
    /// The DOM's HTML once the page settled (with its doctype, when it has one).
    pub html: String,
    /// The responses of [`KEPT_TYPES`] received by the page, in the order they arrived.
    pub subresponses: Vec<Subresponse>,
    /// Responses over [`CaptureLimits::max_responses`], not kept.
    pub responses_not_kept: usize,
    /// From navigation to the moment the DOM was read (the settle wait included).
    pub settled_after: std::time::Duration,
}

/// The page's Network events, listened to from before the navigation.
pub(crate) struct Recorder {
    received: EventStream<EventResponseReceived>,
    finished: EventStream<EventLoadingFinished>,
    failed: EventStream<EventLoadingFailed>,
}

impl Recorder {
    /// Starts listening on `page` (whose Network domain chromiumoxide enables).
    pub(crate) async fn listen(page: &chromiumoxide::Page) -> Result<Recorder, BrowserError> {
        Ok(Recorder {
            received: page.event_listener::<EventResponseReceived>().await?,
            finished: page.event_listener::<EventLoadingFinished>().await?,
            failed: page.event_listener::<EventLoadingFailed>().await?,
        })
    }

    /// The responses received so far (the page's own document at `url` excepted), with their
    /// bodies within `limits`.
    pub(crate) async fn collect(
        mut self,
        page: &chromiumoxide::Page,
        url: &Url,
        limits: CaptureLimits,
    ) -> (Vec<Subresponse>, usize) {
        let received = drain(&mut self.received);
        let finished: HashSet<String> = drain(&mut self.finished)
            .iter()
            .map(|e| e.request_id.inner().clone())
            .collect();
        let failed: Vec<(String, String)> = drain(&mut self.failed)
            .iter()
            .map(|e| (e.request_id.inner().clone(), e.error_text.clone()))
            .collect();
        let mut kept = Vec::new();
        let mut not_kept = 0;
        let mut total = 0usize;
        for event in received {
            let kind: &str = event.r#type.as_ref();
            let own_document = matches!(event.r#type, ResourceType::Document)
                && event.response.url == url.as_str();
            if own_document || !KEPT_TYPES.contains(&kind) {
                continue;
            }
            if kept.len() >= limits.max_responses {
                not_kept += 1;
                continue;
            }
            let id = event.request_id.inner();
            let response = &event.response;
            let mut subresponse = Subresponse {
                url: response.url.clone(),
                resource_type: kind.to_owned(),
                status: u16::try_from(response.status).unwrap_or(0),
                headers: headers(&response.headers),
                mime_type: response.mime_type.clone(),
                body: None,
                decoded_text: false,
                body_note: None,
            };
            if let Some((_, error)) = failed.iter().find(|(failed, _)| failed == id) {
                subresponse.body_note = Some(format!("the load failed: {error}"));
            } else if !finished.contains(id) {
                subresponse.body_note = Some("still loading when the page settled".into());
            } else {
                match body(page, &event).await {
                    Ok((bytes, text)) if bytes.len() > limits.max_body_bytes => {
                        subresponse.body_note = Some(format!(
                            "{} bytes, over the {} bytes kept of one body",
                            bytes.len(),
                            limits.max_body_bytes
                        ));
                        subresponse.decoded_text = text;
                    }
                    Ok((bytes, text)) if total + bytes.len() > limits.max_total_bytes => {
                        subresponse.body_note = Some(format!(
                            "{} bytes, past the {} bytes kept of one page's responses",
                            bytes.len(),
                            limits.max_total_bytes
                        ));
                        subresponse.decoded_text = text;
                    }
                    Ok((bytes, text)) => {
                        total += bytes.len();
                        subresponse.body = Some(bytes);
                        subresponse.decoded_text = text;
                    }
                    Err(error) => {
                        subresponse.body_note = Some(format!("Chromium kept no body: {error}"));
                    }
                }
            }
            kept.push(subresponse);
        }
        (kept, not_kept)
    }
}

/// The events queued on `stream` so far (the stream is fed by the handler as they arrive).
fn drain<T: chromiumoxide::cdp::IntoEventKind + Unpin>(
    stream: &mut EventStream<T>,
) -> Vec<std::sync::Arc<T>> {
    let mut events = Vec::new();
    while let Some(Some(event)) = stream.next().now_or_never() {
        events.push(event);
    }
    events
}

/// The body of a finished response: bytes, and whether they are decoded text.
async fn body(
    page: &chromiumoxide::Page,
    event: &EventResponseReceived,
) -> Result<(Vec<u8>, bool), BrowserError> {
    let reply = page
        .execute(GetResponseBodyParams::new(event.request_id.clone()))
        .await?
        .result;
    if reply.base64_encoded {
        let bytes = BASE64
            .decode(reply.body.as_bytes())
            .map_err(|e| BrowserError::Protocol(format!("a response body is not base64: {e}")))?;
        Ok((bytes, false))
    } else {
        Ok((reply.body.into_bytes(), true))
    }
}

/// Header pairs from the protocol's JSON object, names lower-case, sorted by name (the protocol
/// keeps no order; repeated headers arrive joined by newlines).
fn headers(
    headers: &chromiumoxide::cdp::browser_protocol::network::Headers,
) -> Vec<(String, String)> {
    let mut pairs: Vec<(String, String)> = headers
        .inner()
        .as_object()
        .map(|object| {
            object
                .iter()
                .map(|(name, value)| {
                    let value = value
                        .as_str()
                        .map_or_else(|| value.to_string(), str::to_owned);
                    (name.to_ascii_lowercase(), value)
                })
                .collect()
        })
        .unwrap_or_default();
    pairs.sort();
    pairs
}
