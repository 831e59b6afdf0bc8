//! RFC 3161 trusted timestamps: a time-stamping authority (TSA) signs that a SHA-256 digest
//! existed at its `genTime`. Evidence packages get one for their manifest, sent notices for the
//! text they mailed, so that "when" rests on a third party's signature rather than on this
//! machine's clock.
//!
//! **Requesting** ([`request`]): a `TimeStampReq` with the SHA-256 message imprint, a random
//! 64-bit nonce and `certReq` true (so the token carries the TSA's certificate), posted as
//! `application/timestamp-query`; the `TimeStampResp` must be *granted*, echo the nonce and the
//! imprint, and its signature must verify with the certificate it carries, or the token is
//! refused there and then, rather than found broken the day it is needed. What is kept is the
//! response as the TSA sent it (DER), the same bytes `openssl ts -verify -in` reads.
//!
//! **Verifying** ([`verify`]) checks, in order: the response is granted and holds a
//! `SignedData` of a `TSTInfo`; the token's message imprint is SHA-256 and equals the digest of
//! the data as it is now; the token has exactly one signer, whose signed attributes name the
//! `TSTInfo` content type and carry its digest; the CMS signature over those attributes
//! verifies with the signer's certificate (found by issuer and serial number among the token's
//! certificates); that certificate is for time stamping (extended key usage `timeStamping`)
//! and was valid at `genTime`; and, when trusted certificates are given, that it chains to one
//! of them (through CA certificates the token carries, each signature checked, each valid at
//! `genTime`). Without trusted certificates the answer says that the signature was checked
//! against the token's own certificate only and that trust was not established: anyone can
//! make a token that passes that far.
//!
//! **Not checked**: revocation (no CRL or OCSP is fetched; verification stays offline), and the
//! ESS signing-certificate attribute (the signer is found by issuer and serial number and its
//! chain checked instead). Signers named by subject key identifier are not supported (OpenSSL's
//! TSA, the one the tests run, names its signer by issuer and serial number, as RFC 3161 TSAs
//! commonly do).
//!
//! The ASN.1 types and the signature checks (RSA PKCS#1 v1.5 and ECDSA P-256/P-384 through
//! `ring`) come from `cryptographic-message-syntax` and `x509-certificate`: the RustCrypto
//! `cms` and `x509-tsp` crates parse the same structures but verify no signature, and
//! hand-written CMS verification is where such checks usually go wrong (the signed attributes
//! are signed as a SET, not as the `[0]` they are stored as).

use std::path::Path;
use std::time::Duration;

use bcder::decode::Constructed;
use bcder::encode::Values;
use bcder::{ConstOid, Integer, Mode, OctetString, Oid};
use chrono::{DateTime, Utc};
use cryptographic_message_syntax::SignedData;
use cryptographic_message_syntax::asn1::rfc3161::{
    MessageImprint, OID_CONTENT_TYPE_TST_INFO, PkiStatus, TimeStampReq, TimeStampResp, TstInfo,
};
use cryptographic_message_syntax::asn1::rfc5652::OID_ID_SIGNED_DATA;
use futures_util::StreamExt;
use ring::rand::SecureRandom;
use url::Url;
use x509_certificate::{CapturedX509Certificate, DigestAlgorithm};

/// The media type of a request.
pub const QUERY_TYPE: &str = "application/timestamp-query";
/// The media type of a response.
pub const REPLY_TYPE: &str = "application/timestamp-reply";

/// The largest response read from a TSA: a token with a certificate chain is a few KiB.
const MAX_RESPONSE: usize = 1 << 20;

/// extendedKeyUsage, 2.5.29.37.
const OID_EXTENDED_KEY_USAGE: ConstOid = Oid(&[85, 29, 37]);
/// basicConstraints, 2.5.29.19.
const OID_BASIC_CONSTRAINTS: ConstOid = Oid(&[85, 29, 19]);
/// id-kp-timeStamping, 1.3.6.1.5.5.7.3.8.
const OID_KP_TIME_STAMPING: ConstOid = Oid(&[43, 6, 1, 5, 5, 7, 3, 8]);

/// Where timestamps come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TsaSettings {
    /// The TSA's URL (`--tsa-url`, `COPYTRACE_TSA_URL`, `tsa_url` in the configuration file).
    pub url: Url,
    /// Longest wait for its answer.
    pub timeout: Duration,
}

impl TsaSettings {
    /// A TSA at `url` (http or https), answering within 30 seconds.
    pub fn parse(url: &str) -> Result<Self, TimestampError> {
        let parsed = Url::parse(url.trim()).map_err(|e| {
            TimestampError::Settings(format!("the TSA URL {url:?} is not a URL: {e}"))
        })?;
        if !matches!(parsed.scheme(), "http" | "https") {
            return Err(TimestampError::Settings(format!(
                "the TSA URL {url:?} is not http or https"
            )));
        }
        Ok(Self {
            url: parsed,
            timeout: Duration::from_secs(30),
        })
    }
}

/// What went wrong getting or checking a timestamp.
#[derive(Debug, thiserror::Error)]
pub enum TimestampError {
    /// The settings are unusable (a bad URL, an unreadable certificate file).
    #[error("{0}")]
    Settings(String),
    /// The TSA could not be reached or answered with an HTTP error.
    #[error("the time-stamping authority {url} {reason}")]
    Unreachable {
        /// The TSA.
        url: String,
        /// What happened.
        reason: String,
    },
    /// The TSA answered, but did not grant a timestamp.
    #[error("the time-stamping authority refused: status {status}{detail}")]
    Refused {
        /// The PKIStatus.
        status: String,
        /// Its status text and failure information, when given.
        detail: String,
    },
    /// Not a time-stamp response, or not one this client accepts.
    #[error("not a valid time-stamp token: {0}")]
    Malformed(String),
    /// The token stamps another digest.
    #[error(
        "the token is for another hash: it stamps SHA-256 {stamped}, the data hashes to {actual}"
    )]
    ImprintMismatch {
        /// The digest in the token, hex.
        stamped: String,
        /// The digest of the data, hex.
        actual: String,
    },
    /// The token does not answer this request (replayed or mixed up).
    #[error("the token does not carry the nonce of the request (a replayed or foreign answer)")]
    NonceMismatch,
    /// The CMS signature does not verify.
    #[error("bad signature: {0}")]
    BadSignature(String),
    /// The signer's certificate is unfit, or does not chain to a trusted one.
    #[error("certificate: {0}")]
    Certificate(String),
}

/// A timestamp just obtained from a TSA.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Timestamp {
    /// The DER `TimeStampResp` as the TSA sent it.
    pub response: Vec<u8>,
    /// The TSA's URL.
    pub tsa_url: String,
    /// What the token says (checked against its own certificate).
    pub token: TokenInfo,
}

impl Timestamp {
    /// As the store keeps it.
    pub fn stored(&self) -> copytrace_store::TrustedTimestamp {
        copytrace_store::TrustedTimestamp {
            tsa_url: self.tsa_url.clone(),
            gen_time: self.token.gen_time,
            token: self.response.clone(),
        }
    }
}

/// What a verified token says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenInfo {
    /// When the TSA saw the digest.
    pub gen_time: DateTime<Utc>,
    /// The token's serial number, hex.
    pub serial: String,
    /// The TSA's policy OID.
    pub policy: String,
    /// The signer certificate's subject.
    pub signer: String,
    /// How far the signer is trusted.
    pub trust: Trust,
}

/// How far a verified token's signer is trusted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Trust {
    /// The signer chains to this trusted certificate (its subject).
    Chained(String),
    /// No trusted certificate was given: the signature was checked against the certificate the
    /// token carries only, which proves nothing about who signed.
    EmbeddedOnly,
}

/// Reads trusted TSA certificates (the TSA's own or its CA's): PEM (one or several) or DER.
pub fn read_trusted(path: &Path) -> Result<Vec<CapturedX509Certificate>, TimestampError> {
    let bytes = std::fs::read(path).map_err(|e| {
        TimestampError::Settings(format!(
            "cannot read the TSA certificate file {}: {e}",
            path.display()
        ))
    })?;
    let certs = if bytes.starts_with(b"-----") || bytes.windows(11).any(|w| w == b"-----BEGIN ") {
        CapturedX509Certificate::from_pem_multiple(&bytes).map_err(|e| e.to_string())
    } else {
        CapturedX509Certificate::from_der(bytes)
            .map(|c| vec![c])
            .map_err(|e| e.to_string())
    }
    .map_err(|e| {
        TimestampError::Settings(format!(
            "{} holds no readable X.509 certificate: {e}",
            path.display()
        ))
    })?;
    if certs.is_empty() {
        return Err(TimestampError::Settings(format!(
            "{} holds no certificate (expected PEM or DER)",
            path.display()
        )));
    }
    Ok(certs)
}

/// The DER `TimeStampReq` for a SHA-256 `digest` with `nonce`, asking for the certificate.
pub fn encode_request(digest: &[u8; 32], nonce: u64) -> Vec<u8> {
    let request = TimeStampReq {
        version: Integer::from(1u8),
        message_imprint: MessageImprint {
            hash_algorithm: DigestAlgorithm::Sha256.into(),
            hashed_message: OctetString::new(digest.to_vec().into()),
        },
        req_policy: None,
        nonce: Some(Integer::from(nonce)),
        cert_req: Some(true),
        extensions: None,
    };
    let mut body = Vec::new();
    request
        .encode_ref()
        .write_encoded(Mode::Der, &mut body)
        .expect("writing to a Vec does not fail");
    body
}

/// Asks the TSA of `settings` to timestamp the SHA-256 `digest`; see the module documentation.
pub async fn request(
    settings: &TsaSettings,
    digest: &[u8; 32],
) -> Result<Timestamp, TimestampError> {
    let mut random = [0u8; 8];
    ring::rand::SystemRandom::new()
        .fill(&mut random)
        .map_err(|_| TimestampError::Settings("no random numbers for the nonce".into()))?;
    let nonce = u64::from_be_bytes(random);
    let url = settings.url.to_string();
    let unreachable = |reason: String| TimestampError::Unreachable {
        url: url.clone(),
        reason,
    };
    let client = reqwest::Client::builder()
        .timeout(settings.timeout)
        .connect_timeout(settings.timeout)
        .redirect(reqwest::redirect::Policy::limited(3))
        .user_agent(concat!("copytrace/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(|e| unreachable(format!("cannot be asked: {e}")))?;
    let response = client
        .post(settings.url.clone())
        .header(reqwest::header::CONTENT_TYPE, QUERY_TYPE)
        .body(encode_request(digest, nonce))
        .send()
        .await
        .map_err(|e| unreachable(format!("cannot be reached: {}", crate::error::one_line(&e))))?;
    let status = response.status();
    if !status.is_success() {
        return Err(unreachable(format!("answered HTTP {status}")));
    }
    let mut body = Vec::new();
    let mut stream = response.bytes_stream();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(|e| unreachable(format!("broke off its answer: {e}")))?;
        if body.len() + chunk.len() > MAX_RESPONSE {
            return Err(unreachable(format!(
                "answered more than {MAX_RESPONSE} bytes: not a time-stamp response"
            )));
        }
        body.extend_from_slice(&chunk);
    }
    let token = check(&body, digest, None, Some(nonce))?;
    Ok(Timestamp {
        response: body,
        tsa_url: url,
        token,
    })
}

/// Verifies the DER `TimeStampResp` `response` as a timestamp of the SHA-256 `digest`, its
/// signer chained to one of `trusted` when given; see the module documentation.
pub fn verify(
    response: &[u8],
    digest: &[u8],
    trusted: Option<&[CapturedX509Certificate]>,
) -> Result<TokenInfo, TimestampError> {
    check(response, digest, trusted, None)
}

fn malformed(what: impl std::fmt::Display) -> TimestampError {
    TimestampError::Malformed(what.to_string())
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The response's status, its token's `SignedData` and `TSTInfo`.
fn parse(response: &[u8]) -> Result<(SignedData, TstInfo), TimestampError> {
    let response = match Constructed::decode(response, Mode::Ber, TimeStampResp::take_from) {
        Ok(response) => response,
        Err(error) => {
            return Err(refusal(response)
                .unwrap_or_else(|| malformed(format!("not a TimeStampResp: {error}"))));
        }
    };
    if !matches!(
        response.status.status,
        PkiStatus::Granted | PkiStatus::GrantedWithMods
    ) {
        let mut detail = String::new();
        if let Some(text) = &response.status.status_string {
            detail.push_str(&format!(" ({text:?})"));
        }
        if let Some(fail) = &response.status.fail_info {
            detail.push_str(&format!(", failure {fail:?}"));
        }
        return Err(TimestampError::Refused {
            status: format!("{:?}", response.status.status),
            detail,
        });
    }
    let token = response
        .time_stamp_token
        .ok_or_else(|| malformed("granted, but no token"))?;
    if token.content_type != OID_ID_SIGNED_DATA {
        return Err(malformed("the token is not CMS SignedData"));
    }
    let raw = token
        .content
        .clone()
        .decode(cryptographic_message_syntax::asn1::rfc5652::SignedData::take_from)
        .map_err(|e| malformed(format!("its SignedData does not decode: {e}")))?;
    if raw.content_info.content_type != OID_CONTENT_TYPE_TST_INFO {
        return Err(malformed("the token's content is not a TSTInfo"));
    }
    let signed = SignedData::try_from(&raw)
        .map_err(|e| malformed(format!("its SignedData is not usable: {e}")))?;
    let content = signed
        .signed_content()
        .ok_or_else(|| malformed("the token holds no TSTInfo"))?;
    let info = Constructed::decode(content, Mode::Der, TstInfo::take_from)
        .map_err(|e| malformed(format!("its TSTInfo does not decode: {e}")))?;
    Ok((signed, info))
}

/// The refusal a response that did not decode as a whole states, if it is one: the status
/// and its text and failure bits. (`cryptographic-message-syntax` reads `failInfo` as an
/// INTEGER, but RFC 3161 makes it a BIT STRING, so a refusal with failure bits, the usual
/// kind, does not decode as a `TimeStampResp` there.)
fn refusal(response: &[u8]) -> Option<TimestampError> {
    let (status, text, fail) = Constructed::decode(response, Mode::Ber, |cons| {
        let status = cons.take_sequence(|cons| {
            cons.take_sequence(|cons| {
                let status = Integer::take_from(cons)?;
                let text = cons.take_opt_sequence(|cons| {
                    let mut lines = Vec::new();
                    while let Some(line) = bcder::Utf8String::take_opt_from(cons)? {
                        lines.push(line.to_string());
                    }
                    Ok(lines)
                })?;
                let fail =
                    cons.take_opt_value_if(bcder::Tag::BIT_STRING, bcder::BitString::from_content)?;
                Ok((status, text, fail))
            })
            .and_then(|status| {
                cons.skip_all()?;
                Ok(status)
            })
        })?;
        Ok(status)
    })
    .ok()?;
    let status = i8::try_from(status).ok()?;
    if status <= 1 {
        return None;
    }
    let names = [
        (0, "badAlg"),
        (2, "badRequest"),
        (5, "badDataFormat"),
        (14, "timeNotAvailable"),
        (15, "unacceptedPolicy"),
        (16, "unacceptedExtension"),
        (17, "addInfoNotAvailable"),
        (25, "systemFailure"),
    ];
    let mut detail = String::new();
    if let Some(text) = text.filter(|t| !t.is_empty()) {
        detail.push_str(&format!(" ({})", text.join("; ")));
    }
    if let Some(fail) = fail {
        let set: Vec<&str> = names
            .iter()
            .filter(|(bit, _)| fail.bit(*bit))
            .map(|(_, name)| *name)
            .collect();
        if !set.is_empty() {
            detail.push_str(&format!(", failure {}", set.join(", ")));
        }
    }
    let status = match status {
        2 => "Rejection".to_owned(),
        3 => "Waiting".to_owned(),
        4 => "RevocationWarning".to_owned(),
        5 => "RevocationNotification".to_owned(),
        other => other.to_string(),
    };
    Some(TimestampError::Refused { status, detail })
}

fn check(
    response: &[u8],
    digest: &[u8],
    trusted: Option<&[CapturedX509Certificate]>,
    nonce: Option<u64>,
) -> Result<TokenInfo, TimestampError> {
    let (signed, info) = parse(response)?;
    let imprint = &info.message_imprint;
    match DigestAlgorithm::try_from(&imprint.hash_algorithm) {
        Ok(DigestAlgorithm::Sha256) => {}
        _ => {
            return Err(malformed(format!(
                "its message imprint is not SHA-256 (algorithm {})",
                imprint.hash_algorithm.algorithm
            )));
        }
    }
    let stamped = imprint.hashed_message.to_bytes();
    if stamped.as_ref() != digest {
        return Err(TimestampError::ImprintMismatch {
            stamped: hex(&stamped),
            actual: hex(digest),
        });
    }
    if let Some(nonce) = nonce
        && info.nonce != Some(Integer::from(nonce))
    {
        return Err(TimestampError::NonceMismatch);
    }
    let gen_time: DateTime<Utc> = info.gen_time.clone().into();

    let mut signers = signed.signers();
    let (Some(signer), None) = (signers.next(), signers.next()) else {
        return Err(malformed("a time-stamp token has exactly one signer"));
    };
    let attributes = signer
        .signed_attributes()
        .ok_or_else(|| malformed("its signer has no signed attributes"))?;
    if *attributes.content_type() != OID_CONTENT_TYPE_TST_INFO {
        return Err(TimestampError::BadSignature(
            "the signed content type is not TSTInfo".into(),
        ));
    }
    signer
        .verify_message_digest_with_signed_data(&signed)
        .map_err(|_| {
            TimestampError::BadSignature(
                "the signed message digest is not the digest of the token's TSTInfo".into(),
            )
        })?;
    let (issuer, serial) = signer
        .certificate_issuer_and_serial()
        .ok_or_else(|| malformed("its signer is not named by issuer and serial number"))?;
    let certificates: Vec<&CapturedX509Certificate> = signed
        .certificates()
        .chain(trusted.unwrap_or_default())
        .collect();
    let certificate = certificates
        .iter()
        .copied()
        .find(|c| {
            x509_certificate::certificate::certificate_is_subset_of(
                serial,
                issuer,
                c.serial_number_asn1(),
                c.issuer_name(),
            )
        })
        .ok_or_else(|| {
            TimestampError::BadSignature(
                "the signer's certificate is neither in the token nor among the trusted ones"
                    .into(),
            )
        })?;
    let verifier = signer
        .signature_verifier(std::iter::once(certificate))
        .map_err(|e| TimestampError::BadSignature(format!("cannot check it: {e}")))?;
    verifier
        .verify(
            &signer.signed_content_with_signed_data(&signed),
            signer.signature(),
        )
        .map_err(|_| {
            TimestampError::BadSignature(format!(
                "the token's signature does not verify with the signer's certificate ({})",
                subject(certificate)
            ))
        })?;
    if !for_time_stamping(certificate)? {
        return Err(TimestampError::Certificate(format!(
            "the signer's certificate ({}) is not for time stamping (no extended key usage \
             timeStamping)",
            subject(certificate)
        )));
    }
    if !certificate.time_constraints_valid(Some(gen_time)) {
        return Err(TimestampError::Certificate(format!(
            "the signer's certificate ({}) was not valid at the token's time {gen_time}",
            subject(certificate)
        )));
    }
    let trust = match trusted {
        None => Trust::EmbeddedOnly,
        Some(anchors) => Trust::Chained(chain(certificate, &certificates, anchors, gen_time)?),
    };
    Ok(TokenInfo {
        gen_time,
        serial: hex(info.serial_number.as_slice()),
        policy: info.policy.to_string(),
        signer: subject(certificate),
        trust,
    })
}

/// A certificate's subject, readable.
fn subject(certificate: &CapturedX509Certificate) -> String {
    certificate
        .subject_name()
        .user_friendly_str()
        .unwrap_or_else(|_| "an unreadable subject".to_owned())
}

/// The extension `oid` of a certificate: its critical flag and value.
fn extension<'a>(
    certificate: &'a CapturedX509Certificate,
    oid: &ConstOid,
) -> Option<&'a x509_certificate::rfc5280::Extension> {
    certificate.iter_extensions().find(|e| e.id == *oid)
}

/// Whether the certificate's extended key usage includes timeStamping.
fn for_time_stamping(certificate: &CapturedX509Certificate) -> Result<bool, TimestampError> {
    let Some(usage) = extension(certificate, &OID_EXTENDED_KEY_USAGE) else {
        return Ok(false);
    };
    let purposes = Constructed::decode(usage.value.to_bytes(), Mode::Der, |cons| {
        cons.take_sequence(|cons| {
            let mut purposes = Vec::new();
            while let Some(oid) = Oid::take_opt_from(cons)? {
                purposes.push(oid);
            }
            Ok(purposes)
        })
    })
    .map_err(|e| TimestampError::Certificate(format!("unreadable extended key usage: {e}")))?;
    Ok(purposes.iter().any(|p| *p == OID_KP_TIME_STAMPING))
}

/// Whether the certificate is a CA's (basicConstraints cA true).
fn is_ca(certificate: &CapturedX509Certificate) -> bool {
    extension(certificate, &OID_BASIC_CONSTRAINTS).is_some_and(|constraints| {
        Constructed::decode(constraints.value.to_bytes(), Mode::Der, |cons| {
            cons.take_sequence(|cons| {
                let ca = cons.take_opt_bool()?.unwrap_or(false);
                cons.skip_all()?;
                Ok(ca)
            })
        })
        .unwrap_or(false)
    })
}

/// Follows the signer's issuers, through CA certificates of `pool`, to one of `anchors`;
/// returns that anchor's subject. Every signature is checked, every certificate must have been
/// valid at `at`.
fn chain(
    signer: &CapturedX509Certificate,
    pool: &[&CapturedX509Certificate],
    anchors: &[CapturedX509Certificate],
    at: DateTime<Utc>,
) -> Result<String, TimestampError> {
    let same = |a: &CapturedX509Certificate, b: &CapturedX509Certificate| {
        a.constructed_data() == b.constructed_data()
    };
    let signed_by = |child: &CapturedX509Certificate, parent: &CapturedX509Certificate| {
        child.issuer_name() == parent.subject_name()
            && child.verify_signed_by_certificate(parent).is_ok()
    };
    let mut current = signer;
    for _ in 0..8 {
        if let Some(anchor) = anchors.iter().find(|a| same(a, current)) {
            return Ok(subject(anchor));
        }
        if let Some(anchor) = anchors
            .iter()
            .find(|a| signed_by(current, a) && a.time_constraints_valid(Some(at)))
        {
            return Ok(subject(anchor));
        }
        let next = pool.iter().copied().find(|c| {
            !same(c, current)
                && is_ca(c)
                && signed_by(current, c)
                && c.time_constraints_valid(Some(at))
        });
        match next {
            Some(issuer) => current = issuer,
            None => break,
        }
    }
    Err(TimestampError::Certificate(format!(
        "the signer's certificate ({}) does not chain to the trusted certificate(s) ({})",
        subject(signer),
        anchors.iter().map(subject).collect::<Vec<_>>().join("; ")
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_is_der_with_the_imprint_the_nonce_and_cert_req() {
        let digest = [7u8; 32];
        let der = encode_request(&digest, 0x8000_0000_0000_0001);
        let request = Constructed::decode(der.as_slice(), Mode::Der, TimeStampReq::take_from)
            .expect("a TimeStampReq");
        assert_eq!(request.version, Integer::from(1u8));
        assert_eq!(
            DigestAlgorithm::try_from(&request.message_imprint.hash_algorithm).unwrap(),
            DigestAlgorithm::Sha256
        );
        assert_eq!(
            request.message_imprint.hashed_message.to_bytes().as_ref(),
            &digest
        );
        // A nonce with its top bit set stays positive (a leading zero byte).
        assert_eq!(request.nonce, Some(Integer::from(0x8000_0000_0000_0001u64)));
        assert_eq!(
            request.nonce.unwrap().as_slice(),
            &[0, 0x80, 0, 0, 0, 0, 0, 0, 1]
        );
        assert_eq!(request.cert_req, Some(true));
    }

    #[test]
    fn what_is_not_a_response_is_refused_as_malformed() {
        for bytes in [&b""[..], b"not DER", &[0x30, 0x03, 0x02, 0x01, 0x00]] {
            let error = verify(bytes, &[0; 32], None).unwrap_err();
            assert!(matches!(error, TimestampError::Malformed(_)), "{error}");
        }
    }

    #[test]
    fn a_rejection_is_reported_with_its_status() {
        // TimeStampResp { status { rejection(2), failInfo badAlg } } without a token.
        let rejection = [
            0x30, 0x09, 0x30, 0x07, 0x02, 0x01, 0x02, 0x03, 0x02, 0x07, 0x80,
        ];
        let error = verify(&rejection, &[0; 32], None).unwrap_err();
        assert!(
            matches!(&error, TimestampError::Refused { status, .. } if status == "Rejection"),
            "{error}"
        );
        assert!(error.to_string().contains("failure badAlg"), "{error}");
    }

    #[test]
    fn tsa_urls_must_be_http() {
        assert!(TsaSettings::parse("https://freetsa.org/tsr").is_ok());
        assert!(TsaSettings::parse("ftp://tsa.example/").is_err());
        assert!(TsaSettings::parse("not a url").is_err());
    }
}
