//! Logging in and out, and choosing the language.

use std::net::{IpAddr, SocketAddr};

use askama::Template;
use axum::Form;
use axum::Router;
use axum::extract::{ConnectInfo, Path, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::{get, post};
use axum_extra::extract::CookieJar;
use axum_extra::extract::cookie::{Cookie, SameSite};
use chrono::Utc;
use copytrace_service::accounts::{self, Login};
use serde::Deserialize;

use super::i18n::{LANG_COOKIE, Lang, Texts};
use super::{LOGIN_CSRF_COOKIE, SESSION_COOKIE, WebState, cookie, current_session, failure, page};

/// This module's pages.
pub(super) fn routes() -> Router<WebState> {
    Router::new()
        .route("/login", get(login_page).post(login_submit))
        .route("/logout", post(logout))
        .route("/lang/{lang}", get(choose_language))
}

#[derive(Template)]
#[template(path = "web/login.html")]
struct LoginPage {
    t: &'static Texts,
    csrf: String,
    email: String,
    error: Option<&'static str>,
}

/// The login form, with a fresh CSRF token in a cookie and in the form.
fn login_form(
    state: &WebState,
    jar: CookieJar,
    lang: Lang,
    email: String,
    error: Option<&'static str>,
    status: StatusCode,
) -> Response {
    let csrf = accounts::random_token();
    let jar = jar.add(cookie(
        state,
        LOGIN_CSRF_COOKIE,
        csrf.clone(),
        SameSite::Strict,
    ));
    let t = lang.texts();
    (
        status,
        jar,
        page(LoginPage {
            t,
            csrf,
            email,
            error,
        }),
    )
        .into_response()
}

async fn login_page(State(state): State<WebState>, jar: CookieJar, headers: HeaderMap) -> Response {
    let lang = Lang::of_request(&jar, &headers);
    match current_session(&state, &jar).await {
        Ok(Some(_)) => Redirect::to("/").into_response(),
        Ok(None) => login_form(&state, jar, lang, String::new(), None, StatusCode::OK),
        Err(response) => response,
    }
}

#[derive(Deserialize)]
struct LoginForm {
    #[serde(default)]
    csrf: String,
    email: String,
    password: String,
}

async fn login_submit(
    State(state): State<WebState>,
    ConnectInfo(client): ConnectInfo<SocketAddr>,
    jar: CookieJar,
    headers: HeaderMap,
    Form(form): Form<LoginForm>,
) -> Response {
    let lang = Lang::of_request(&jar, &headers);
    let t = lang.texts();
    let expected = jar.get(LOGIN_CSRF_COOKIE).map(|c| c.value().to_owned());
    if expected.as_deref() != Some(form.csrf.as_str()) || form.csrf.is_empty() {
        return login_form(
            &state,
            jar,
            lang,
            form.email,
            Some(t.expired_form),
            StatusCode::FORBIDDEN,
        );
    }
    let outcome = accounts::login(
        state.store.as_ref(),
        &form.email,
        &form.password,
        &client_address(client.ip(), &headers, &state.trusted_proxies).to_string(),
        Utc::now(),
    )
    .await;
    match outcome {
        Ok(Login::Started { token, .. }) => {
            let jar = jar
                .remove(Cookie::build(LOGIN_CSRF_COOKIE).path("/"))
                .add(cookie(&state, SESSION_COOKIE, token, SameSite::Lax));
            (jar, Redirect::to("/")).into_response()
        }
        Ok(Login::Refused) => login_form(
            &state,
            jar,
            lang,
            form.email,
            Some(t.wrong_login),
            StatusCode::UNAUTHORIZED,
        ),
        Ok(Login::Limited) => login_form(
            &state,
            jar,
            lang,
            form.email,
            Some(t.too_many_attempts),
            StatusCode::TOO_MANY_REQUESTS,
        ),
        Err(error) => failure(error),
    }
}

#[derive(Deserialize)]
struct CsrfForm {
    #[serde(default)]
    csrf: String,
}

async fn logout(
    State(state): State<WebState>,
    jar: CookieJar,
    Form(form): Form<CsrfForm>,
) -> Response {
    let session = match current_session(&state, &jar).await {
        Ok(Some(session)) => session,
        Ok(None) => return Redirect::to("/login").into_response(),
        Err(response) => return response,
    };
    if form.csrf != session.csrf_token {
        return (StatusCode::FORBIDDEN, "invalid form token").into_response();
    }
    if let Some(token) = jar.get(SESSION_COOKIE)
        && let Err(error) = accounts::logout(state.store.as_ref(), token.value()).await
    {
        return failure(error);
    }
    let jar = jar.remove(Cookie::build(SESSION_COOKIE).path("/"));
    (jar, Redirect::to("/login")).into_response()
}

async fn choose_language(
    State(state): State<WebState>,
    Path(lang): Path<String>,
    jar: CookieJar,
    headers: HeaderMap,
) -> Response {
    let Some(lang) = Lang::parse(&lang) else {
        return StatusCode::NOT_FOUND.into_response();
    };
    let code = match lang {
        Lang::Zh => "zh",
        Lang::En => "en",
    };
    let mut remembered = cookie(&state, LANG_COOKIE, code.to_owned(), SameSite::Lax);
    remembered.make_permanent();
    // Back to the page it was chosen on, when that was one of ours.
    let back = headers
        .get(header::REFERER)
        .and_then(|v| v.to_str().ok())
        .and_then(url_path)
        .unwrap_or_else(|| "/".to_owned());
    (jar.add(remembered), Redirect::to(&back)).into_response()
}

/// The path (and query) of a URL, never another site: `/a?b` of `http://host/a?b`. Browsers
/// read a backslash as a slash and drop tabs and line breaks, so `/\host` and `/<tab>/host`
/// are refused like `//host`.
fn url_path(referer: &str) -> Option<String> {
    let rest = referer.split_once("://").map_or(referer, |(_, rest)| rest);
    let path = &rest[rest.find('/')?..];
    (!path.starts_with("//") && !path.contains(['\\', '\t', '\r', '\n'])).then(|| path.to_owned())
}

/// The address of the client behind `peer`: `peer` itself, unless it is one of the
/// `trusted_proxies`; then the nearest address in `X-Forwarded-For` (read from the right, the
/// end each proxy appends to) that is not itself a trusted proxy.
///
/// Behind a reverse proxy every request comes from the proxy: without this, the login limiter's
/// per-address count (20 failures in 15 minutes) would lock everyone out at once. Only trusted
/// proxies are believed, because any client can send the header; a value that is not an
/// address stops the walk at the last proxy that was believed.
pub(crate) fn client_address(
    peer: IpAddr,
    headers: &HeaderMap,
    trusted_proxies: &[ipnet::IpNet],
) -> IpAddr {
    let trusted = |address: &IpAddr| trusted_proxies.iter().any(|net| net.contains(address));
    if !trusted(&peer) {
        return peer;
    }
    let hops: Vec<&str> = headers
        .get_all("x-forwarded-for")
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(','))
        .map(str::trim)
        .collect();
    let mut client = peer;
    for hop in hops.iter().rev() {
        let Ok(address) = hop.parse::<IpAddr>() else {
            break;
        };
        client = address;
        if !trusted(&address) {
            break;
        }
    }
    client
}

/// A trusted proxy as `serve --trusted-proxy` takes it: a network (`10.0.0.0/8`) or one address
/// (`192.0.2.7`, `::1`).
pub fn parse_trusted_proxy(text: &str) -> Result<ipnet::IpNet, String> {
    let text = text.trim();
    text.parse::<ipnet::IpNet>()
        .or_else(|_| text.parse::<IpAddr>().map(ipnet::IpNet::from))
        .map_err(|_| format!("{text:?} is neither an IP address nor a network such as 10.0.0.0/8"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    #[test]
    fn a_referer_a_browser_reads_as_another_site_is_not_followed_back() {
        // Replayed through the `web` fuzz target's redirect check: choosing a language
        // redirected to `/\evil.example/`, which browsers follow to evil.example.
        assert_eq!(url_path("http://x/\\evil.example/"), None);
        assert_eq!(url_path("http://x/\t/evil.example/"), None);
        assert_eq!(url_path("http://x//evil.example/"), None);
        assert_eq!(
            url_path("http://x/works?page=2").as_deref(),
            Some("/works?page=2")
        );
    }

    fn forwarded(values: &[&str]) -> HeaderMap {
        let mut headers = HeaderMap::new();
        for value in values {
            headers.append("x-forwarded-for", HeaderValue::from_str(value).unwrap());
        }
        headers
    }

    fn ip(text: &str) -> IpAddr {
        text.parse().unwrap()
    }

    #[test]
    fn the_forwarded_address_is_believed_from_trusted_proxies_only() {
        let proxies = [parse_trusted_proxy("10.0.0.0/8").unwrap()];
        let headers = forwarded(&["203.0.113.9"]);
        // From the proxy: the client it names.
        assert_eq!(
            client_address(ip("10.0.0.2"), &headers, &proxies),
            ip("203.0.113.9")
        );
        // From anyone else, the header is the sender's claim: ignored.
        assert_eq!(
            client_address(ip("198.51.100.4"), &headers, &proxies),
            ip("198.51.100.4")
        );
        // No proxies configured: the peer, whatever the header says.
        assert_eq!(
            client_address(ip("10.0.0.2"), &headers, &[]),
            ip("10.0.0.2")
        );
    }

    #[test]
    fn a_client_cannot_hide_behind_a_forged_first_hop() {
        let proxies = [
            parse_trusted_proxy("10.0.0.0/8").unwrap(),
            parse_trusted_proxy("192.0.2.7").unwrap(),
        ];
        // The client wrote "1.2.3.4" itself; the proxies appended what they saw.
        let headers = forwarded(&["1.2.3.4, 203.0.113.9", "10.1.1.1"]);
        assert_eq!(
            client_address(ip("192.0.2.7"), &headers, &proxies),
            ip("203.0.113.9")
        );
        // Garbage stops the walk at the last proxy believed.
        let headers = forwarded(&["203.0.113.9, not-an-address, 10.1.1.1"]);
        assert_eq!(
            client_address(ip("10.0.0.2"), &headers, &proxies),
            ip("10.1.1.1")
        );
        // No header at all: the proxy itself.
        assert_eq!(
            client_address(ip("10.0.0.2"), &HeaderMap::new(), &proxies),
            ip("10.0.0.2")
        );
    }

    #[test]
    fn trusted_proxies_are_networks_or_single_addresses() {
        assert!(parse_trusted_proxy("10.0.0.0/8").is_ok());
        assert!(parse_trusted_proxy("::1").unwrap().contains(&ip("::1")));
        assert!(
            parse_trusted_proxy("192.0.2.7")
                .unwrap()
                .contains(&ip("192.0.2.7"))
        );
        assert!(parse_trusted_proxy("proxy.internal").is_err());
    }
}
