//! The SSRF guard: which addresses the crawler may connect to.
//!
//! Crawl targets come from operators *and* from the pages themselves (links, redirects), so a
//! hostile page can point the crawler at `http://169.254.169.254/` or at the admin port of a
//! database on the crawler's own network. The guard refuses every destination that is not a
//! public unicast address unless the operator opted in with
//! [`AddressPolicy::allow_private`] (or exempted specific addresses).
//!
//! Two holes are closed deliberately:
//!
//! * **IP-literal hosts** never reach a DNS resolver (reqwest/hyper connect to them directly), so
//!   [`AddressPolicy::check_url`] checks literals itself. The `url` crate canonicalises the odd
//!   IPv4 spellings (`127.1`, `0x7f.1`, `2130706433`) into dotted decimal first, and IPv6 forms
//!   that embed an IPv4 address (`::ffff:127.0.0.1`, `::127.0.0.1`, NAT64, 6to4) are judged by
//!   the embedded address.
//! * **DNS rebinding**: checking a name and then letting the HTTP client resolve it again would
//!   allow a second, different answer. [`GuardedResolver`] is installed as the client's resolver,
//!   so the lookup that is vetted is the very lookup whose addresses the client connects to.
//!   A name is refused if *any* of its addresses is non-public.

use std::error::Error as StdError;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::Arc;

use url::{Host, Url};

/// Which destinations the crawler may connect to.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AddressPolicy {
    /// Allow every address, including loopback and private ranges (local testing, intranets).
    pub allow_private: bool,
    /// Exact addresses that are allowed even when `allow_private` is false.
    pub allowed: Vec<IpAddr>,
}

/// Why a destination was refused or could not be vetted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GuardError {
    /// The URL's scheme is neither `http` nor `https`.
    #[error("unsupported URL scheme {scheme:?} (only http and https are crawled)")]
    UnsupportedScheme {
        /// The scheme found.
        scheme: String,
    },
    /// The URL has no host.
    #[error("URL has no host")]
    NoHost,
    /// The host is, or resolves to, a non-public address.
    #[error("refused private address {ip} ({class}) of host {host}")]
    Refused {
        /// The host as written in the URL (or the name being resolved).
        host: String,
        /// The offending address.
        ip: IpAddr,
        /// The kind of address, e.g. `loopback` or `private`.
        class: &'static str,
    },
    /// The name could not be resolved.
    #[error("could not resolve {host}: {message}")]
    Resolve {
        /// The name.
        host: String,
        /// The resolver's message.
        message: String,
    },
    /// The name resolved to no addresses at all.
    #[error("{host} resolved to no addresses")]
    NoAddresses {
        /// The name.
        host: String,
    },
}

impl AddressPolicy {
    /// A policy that refuses every non-public address.
    pub fn strict() -> Self {
        Self::default()
    }

    /// Checks a single address against the policy.
    ///
    /// Returns the address class (see [`non_public_class`]) when the address is refused.
    pub fn check_ip(&self, ip: IpAddr) -> Result<(), &'static str> {
        if self.allow_private || self.allowed.contains(&ip) {
            return Ok(());
        }
        match non_public_class(ip) {
            Some(class) => Err(class),
            None => Ok(()),
        }
    }

    /// Checks a URL without connecting: scheme, then the IP literal or every address the host
    /// name resolves to. Returns the vetted socket addresses.
    ///
    /// The crawler itself does not call this before each request (that would reopen the
    /// rebinding window); it checks literals with [`AddressPolicy::check_host_literal`] and lets
    /// [`GuardedResolver`] vet names during the connect. This is for callers that want a
    /// yes/no answer up front, e.g. when validating operator input.
    pub async fn check_url(&self, url: &Url) -> Result<Vec<SocketAddr>, GuardError> {
        check_scheme(url)?;
        let port = url.port_or_known_default().unwrap_or(80);
        match url.host() {
            None => Err(GuardError::NoHost),
            Some(Host::Ipv4(v4)) => {
                self.vet_literal(&url_host(url), IpAddr::V4(v4))?;
                Ok(vec![SocketAddr::new(IpAddr::V4(v4), port)])
            }
            Some(Host::Ipv6(v6)) => {
                self.vet_literal(&url_host(url), IpAddr::V6(v6))?;
                Ok(vec![SocketAddr::new(IpAddr::V6(v6), port)])
            }
            Some(Host::Domain(name)) => self.resolve(name, port).await,
        }
    }

    /// Checks the scheme and, when the host is an IP literal, the address itself. Names pass
    /// (they are vetted by [`GuardedResolver`] at connect time).
    pub fn check_host_literal(&self, url: &Url) -> Result<(), GuardError> {
        check_scheme(url)?;
        match url.host() {
            None => Err(GuardError::NoHost),
            Some(Host::Ipv4(v4)) => self.vet_literal(&url_host(url), IpAddr::V4(v4)),
            Some(Host::Ipv6(v6)) => self.vet_literal(&url_host(url), IpAddr::V6(v6)),
            Some(Host::Domain(_)) => Ok(()),
        }
    }

    fn vet_literal(&self, host: &str, ip: IpAddr) -> Result<(), GuardError> {
        self.check_ip(ip).map_err(|class| GuardError::Refused {
            host: host.to_owned(),
            ip,
            class,
        })
    }

    /// Resolves `host` with the system resolver and refuses it if *any* address is non-public.
    pub async fn resolve(&self, host: &str, port: u16) -> Result<Vec<SocketAddr>, GuardError> {
        // A bracketed IPv6 literal can arrive here from callers that pass `url.host_str()`.
        let bare = host.trim_start_matches('[').trim_end_matches(']');
        if let Ok(ip) = bare.parse::<IpAddr>() {
            self.vet_literal(host, ip)?;
            return Ok(vec![SocketAddr::new(ip, port)]);
        }
        let addrs: Vec<SocketAddr> = tokio::net::lookup_host((bare, port))
            .await
            .map_err(|e| GuardError::Resolve {
                host: host.to_owned(),
                message: e.to_string(),
            })?
            .collect();
        if addrs.is_empty() {
            return Err(GuardError::NoAddresses {
                host: host.to_owned(),
            });
        }
        for addr in &addrs {
            self.check_ip(addr.ip())
                .map_err(|class| GuardError::Refused {
                    host: host.to_owned(),
                    ip: addr.ip(),
                    class,
                })?;
        }
        Ok(addrs)
    }
}

fn check_scheme(url: &Url) -> Result<(), GuardError> {
    match url.scheme() {
        "http" | "https" => Ok(()),
        other => Err(GuardError::UnsupportedScheme {
            scheme: other.to_owned(),
        }),
    }
}

fn url_host(url: &Url) -> String {
    url.host_str().unwrap_or_default().to_owned()
}

/// Classifies an address: `None` for a public unicast address, otherwise a short name of the
/// reserved range it falls in (`"loopback"`, `"private"`, `"link-local"`, ...).
///
/// IPv6 addresses that embed an IPv4 address (IPv4-mapped `::ffff:a.b.c.d`, IPv4-compatible
/// `::a.b.c.d`, NAT64 `64:ff9b::/96`, 6to4 `2002::/16`) are judged by the embedded address. Other
/// IPv6 addresses must be global unicast (`2000::/3`) outside the documentation and IETF
/// protocol blocks.
pub fn non_public_class(ip: IpAddr) -> Option<&'static str> {
    match ip {
        IpAddr::V4(v4) => v4_class(v4),
        IpAddr::V6(v6) => v6_class(v6),
    }
}

fn v4_class(ip: Ipv4Addr) -> Option<&'static str> {
    let [a, b, c, _] = ip.octets();
    let class = match (a, b, c) {
        _ if ip.is_unspecified() => "unspecified",
        _ if ip.is_broadcast() => "broadcast",
        (0, _, _) => "this-network",
        (10, _, _) => "private",
        (100, 64..=127, _) => "shared (CGNAT)",
        (127, _, _) => "loopback",
        (169, 254, _) => "link-local",
        (172, 16..=31, _) => "private",
        (192, 0, 0) => "IETF protocol assignment",
        (192, 0, 2) | (198, 51, 100) | (203, 0, 113) => "documentation",
        (192, 88, 99) => "6to4 relay",
        (192, 168, _) => "private",
        (198, 18..=19, _) => "benchmarking",
        (224..=239, _, _) => "multicast",
        (240..=255, _, _) => "reserved",
        _ => return None,
    };
    Some(class)
}

fn v6_class(ip: Ipv6Addr) -> Option<&'static str> {
    if ip.is_unspecified() {
        return Some("unspecified");
    }
    if ip.is_loopback() {
        return Some("loopback");
    }
    let seg = ip.segments();
    // IPv4-mapped ::ffff:a.b.c.d
    if let Some(v4) = ip.to_ipv4_mapped() {
        return v4_class(v4).map(|_| "IPv4-mapped non-public");
    }
    // IPv4-compatible ::a.b.c.d (deprecated, but some stacks still route it)
    if seg[..6] == [0; 6] {
        let v4 = Ipv4Addr::new(
            (seg[6] >> 8) as u8,
            seg[6] as u8,
            (seg[7] >> 8) as u8,
            seg[7] as u8,
        );
        return Some(v4_class(v4).map_or("IPv4-compatible", |_| "IPv4-compatible non-public"));
    }
    // NAT64 well-known prefix 64:ff9b::/96 reaches the embedded IPv4 address.
    if seg[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
        let v4 = Ipv4Addr::new(
            (seg[6] >> 8) as u8,
            seg[6] as u8,
            (seg[7] >> 8) as u8,
            seg[7] as u8,
        );
        return v4_class(v4).map(|_| "NAT64 non-public");
    }
    // 6to4 2002:a.b.c.d::/48 reaches the embedded IPv4 address.
    if seg[0] == 0x2002 {
        let v4 = Ipv4Addr::new(
            (seg[1] >> 8) as u8,
            seg[1] as u8,
            (seg[2] >> 8) as u8,
            seg[2] as u8,
        );
        return v4_class(v4).map(|_| "6to4 non-public");
    }
    let class = match seg[0] {
        0xfc00..=0xfdff => "unique-local",
        0xfe80..=0xfebf => "link-local",
        0xfec0..=0xfeff => "site-local",
        0xff00..=0xffff => "multicast",
        0x2001 if seg[1] == 0x0db8 => "documentation",
        0x2001 if seg[1] < 0x0200 => "IETF protocol assignment",
        0x3fff if seg[1] < 0x1000 => "documentation",
        0x2000..=0x3fff => return None,
        _ => "reserved",
    };
    Some(class)
}

/// A `reqwest` DNS resolver that vets every answer with an [`AddressPolicy`].
///
/// Because the client connects to exactly the addresses this resolver returns, the vetted
/// answer is the one used: a DNS server that answers differently the second time (rebinding)
/// gets no second chance. IP-literal hosts bypass resolvers, so callers must also use
/// [`AddressPolicy::check_host_literal`] before every request and every redirect hop.
#[derive(Clone, Debug)]
pub struct GuardedResolver {
    policy: Arc<AddressPolicy>,
}

impl GuardedResolver {
    /// A resolver enforcing `policy`.
    pub fn new(policy: Arc<AddressPolicy>) -> Self {
        Self { policy }
    }
}

impl reqwest::dns::Resolve for GuardedResolver {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let policy = self.policy.clone();
        let host = name.as_str().to_owned();
        Box::pin(async move {
            // Port 0: reqwest substitutes the URL's port (or the scheme default).
            // `?` boxes the GuardError itself (not a `Box<GuardError>`), so that
            // `find_guard_error` can downcast it out of reqwest's error chain.
            let addrs = policy.resolve(&host, 0).await?;
            let addrs: reqwest::dns::Addrs = Box::new(addrs.into_iter());
            Ok(addrs)
        })
    }
}

/// Finds a [`GuardError`] anywhere in an error's source chain (reqwest wraps resolver errors a
/// few layers deep).
pub fn find_guard_error<'a>(error: &'a (dyn StdError + 'static)) -> Option<&'a GuardError> {
    let mut current: Option<&(dyn StdError + 'static)> = Some(error);
    while let Some(e) = current {
        if let Some(found) = e.downcast_ref::<GuardError>() {
            return Some(found);
        }
        current = e.source();
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fmt;

    fn strict() -> AddressPolicy {
        AddressPolicy::strict()
    }

    fn url(s: &str) -> Url {
        Url::parse(s).unwrap()
    }

    fn refused_ip(result: Result<Vec<SocketAddr>, GuardError>) -> IpAddr {
        match result {
            Err(GuardError::Refused { ip, .. }) => ip,
            other => panic!("expected a refusal, got {other:?}"),
        }
    }

    #[test]
    fn private_and_reserved_ipv4_ranges_are_not_public() {
        for ip in [
            "0.0.0.0",
            "0.1.2.3",
            "10.0.0.1",
            "10.255.255.255",
            "100.64.0.1",
            "100.127.255.254",
            "127.0.0.1",
            "127.8.9.10",
            "169.254.169.254",
            "172.16.0.1",
            "172.31.255.255",
            "192.0.0.8",
            "192.0.2.1",
            "192.168.1.1",
            "198.18.0.1",
            "198.51.100.7",
            "203.0.113.9",
            "224.0.0.1",
            "239.255.255.250",
            "240.0.0.1",
            "255.255.255.255",
        ] {
            let ip: IpAddr = ip.parse().unwrap();
            assert!(non_public_class(ip).is_some(), "{ip} should be refused");
        }
    }

    #[test]
    fn public_ipv4_addresses_pass() {
        for ip in [
            "1.1.1.1",
            "8.8.8.8",
            "100.63.255.255",
            "100.128.0.1",
            "172.15.255.255",
            "172.32.0.1",
            "192.169.0.1",
            "223.255.255.254",
        ] {
            let ip: IpAddr = ip.parse().unwrap();
            assert_eq!(non_public_class(ip), None, "{ip} should pass");
        }
    }

    #[test]
    fn private_and_reserved_ipv6_ranges_are_not_public() {
        for ip in [
            "::",
            "::1",
            "::ffff:127.0.0.1",
            "::ffff:10.1.2.3",
            "::ffff:169.254.169.254",
            "::127.0.0.1",
            "::8.8.8.8",
            "64:ff9b::a00:1",
            "2002:7f00:1::",
            "fc00::1",
            "fd12:3456::1",
            "fe80::1",
            "fec0::1",
            "ff02::1",
            "2001:db8::1",
            "2001::1",
            "3fff::1",
            "100::1",
            "64:ff9b:1::1",
        ] {
            let ip: IpAddr = ip.parse().unwrap();
            assert!(non_public_class(ip).is_some(), "{ip} should be refused");
        }
    }

    #[test]
    fn public_ipv6_addresses_pass() {
        for ip in [
            "2606:4700:4700::1111",
            "2001:4860:4860::8888",
            "::ffff:8.8.8.8",
            "64:ff9b::808:808",
            "2002:808:808::1",
        ] {
            let ip: IpAddr = ip.parse().unwrap();
            assert_eq!(non_public_class(ip), None, "{ip} should pass");
        }
    }

    #[test]
    fn odd_ipv4_spellings_are_canonicalised_by_the_url_crate() {
        for spelling in [
            "http://127.1/",
            "http://0x7f.1/",
            "http://2130706433/",
            "http://0177.0.0.1/",
            "http://127.0.0.1./",
        ] {
            let u = url(spelling);
            assert_eq!(
                u.host(),
                Some(Host::Ipv4(Ipv4Addr::LOCALHOST)),
                "{spelling} should parse as 127.0.0.1"
            );
        }
    }

    #[tokio::test]
    async fn loopback_literals_are_refused() {
        let policy = strict();
        for (spelling, expected) in [
            ("http://127.0.0.1/", "127.0.0.1"),
            ("http://127.1/", "127.0.0.1"),
            ("http://0x7f.1/", "127.0.0.1"),
            ("http://2130706433/", "127.0.0.1"),
            ("http://[::1]/", "::1"),
            ("http://[::ffff:127.0.0.1]/", "::ffff:127.0.0.1"),
            ("http://10.0.0.1/", "10.0.0.1"),
            ("https://[fe80::1]:8443/", "fe80::1"),
        ] {
            let ip = refused_ip(policy.check_url(&url(spelling)).await);
            assert_eq!(ip, expected.parse::<IpAddr>().unwrap(), "{spelling}");
            assert!(
                policy.check_host_literal(&url(spelling)).is_err(),
                "{spelling}"
            );
        }
    }

    #[tokio::test]
    async fn localhost_is_refused_because_it_resolves_to_loopback() {
        let ip = refused_ip(strict().check_url(&url("http://localhost:8080/")).await);
        assert!(ip.is_loopback());
    }

    #[tokio::test]
    async fn private_addresses_are_allowed_when_the_policy_says_so() {
        let policy = AddressPolicy {
            allow_private: true,
            allowed: vec![],
        };
        let addrs = policy.check_url(&url("http://127.0.0.1:9/")).await.unwrap();
        assert_eq!(addrs, vec!["127.0.0.1:9".parse().unwrap()]);
        assert!(policy.check_url(&url("http://localhost/")).await.is_ok());
    }

    #[tokio::test]
    async fn exempted_addresses_pass_and_others_stay_refused() {
        let policy = AddressPolicy {
            allow_private: false,
            allowed: vec![IpAddr::V4(Ipv4Addr::LOCALHOST)],
        };
        assert!(policy.check_url(&url("http://127.0.0.1/")).await.is_ok());
        refused_ip(policy.check_url(&url("http://127.0.0.2/")).await);
        refused_ip(policy.check_url(&url("http://[::1]/")).await);
    }

    #[tokio::test]
    async fn a_name_is_refused_if_any_of_its_addresses_is_private() {
        // `localhost` commonly resolves to both 127.0.0.1 and ::1; exempting only one of them
        // must not let the name through when the other is also returned.
        let addrs: Vec<SocketAddr> = tokio::net::lookup_host(("localhost", 80))
            .await
            .unwrap()
            .collect();
        let policy = AddressPolicy {
            allow_private: false,
            allowed: vec![addrs[0].ip()],
        };
        let result = policy.check_url(&url("http://localhost/")).await;
        if addrs.iter().all(|a| a.ip() == addrs[0].ip()) {
            assert!(result.is_ok());
        } else {
            refused_ip(result);
        }
    }

    #[tokio::test]
    async fn non_http_schemes_are_refused() {
        for spelling in ["ftp://example.com/", "file:///etc/passwd", "gopher://x/"] {
            assert!(matches!(
                strict().check_url(&url(spelling)).await,
                Err(GuardError::UnsupportedScheme { .. })
            ));
        }
    }

    #[test]
    fn a_guard_error_is_found_in_a_source_chain() {
        #[derive(Debug)]
        struct Outer(GuardError);
        impl fmt::Display for Outer {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("outer")
            }
        }
        impl StdError for Outer {
            fn source(&self) -> Option<&(dyn StdError + 'static)> {
                Some(&self.0)
            }
        }
        let err = Outer(GuardError::NoHost);
        assert_eq!(find_guard_error(&err), Some(&GuardError::NoHost));
    }
}
