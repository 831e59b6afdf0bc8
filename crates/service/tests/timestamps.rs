//! RFC 3161 timestamps against a real time-stamping authority (OpenSSL's, started here): a
//! token is granted for a digest, verifies against its TSA's CA, and is refused for another
//! digest, against another TSA's CA, and with its signature altered.

#[path = "support/tsa.rs"]
mod tsa;

use copytrace_service::timestamp::{
    self, TimestampError, Trust, TsaSettings, read_trusted, request, verify,
};
use sha2::{Digest, Sha256};
use tsa::TestTsa;

fn digest_of(text: &str) -> [u8; 32] {
    Sha256::digest(text.as_bytes()).into()
}

#[tokio::test]
async fn a_token_verifies_for_its_digest_and_its_tsa_only() {
    let authority = TestTsa::start("Alpha");
    let other = TestTsa::start("Beta");
    let settings = TsaSettings::parse(&authority.url).unwrap();
    let digest = digest_of("manifest one");
    let stamp = request(&settings, &digest).await.unwrap();
    assert_eq!(authority.answered(), 1);
    assert_eq!(stamp.tsa_url, authority.url);
    let age = chrono::Utc::now() - stamp.token.gen_time;
    assert!(
        age.num_seconds().abs() < 120,
        "genTime {}",
        stamp.token.gen_time
    );
    assert!(
        stamp.token.signer.contains("Alpha Test TSA"),
        "{}",
        stamp.token.signer
    );
    assert_eq!(stamp.token.policy, "1.3.6.1.4.1.99999.1");

    // Trusted: the signer chains to Alpha's CA.
    let alpha = read_trusted(&authority.ca_cert).unwrap();
    let info = verify(&stamp.response, &digest, Some(&alpha)).unwrap();
    assert_eq!(info.gen_time, stamp.token.gen_time);
    assert!(
        matches!(&info.trust, Trust::Chained(anchor) if anchor.contains("Alpha Test Root CA")),
        "{:?}",
        info.trust
    );
    // Without a trusted certificate, the signature is checked and trust is not claimed.
    assert_eq!(
        verify(&stamp.response, &digest, None).unwrap().trust,
        Trust::EmbeddedOnly
    );
    // Another digest.
    let error = verify(&stamp.response, &digest_of("manifest two"), Some(&alpha)).unwrap_err();
    assert!(
        matches!(error, TimestampError::ImprintMismatch { .. }),
        "{error}"
    );
    assert!(error.to_string().contains("another hash"), "{error}");
    // Another TSA's CA.
    let beta = read_trusted(&other.ca_cert).unwrap();
    let error = verify(&stamp.response, &digest, Some(&beta)).unwrap_err();
    assert!(matches!(error, TimestampError::Certificate(_)), "{error}");
    assert!(error.to_string().contains("does not chain"), "{error}");
    // The signature is the token's last field: one bit of it changed.
    let mut forged = stamp.response.clone();
    *forged.last_mut().unwrap() ^= 1;
    let error = verify(&forged, &digest, Some(&alpha)).unwrap_err();
    assert!(matches!(error, TimestampError::BadSignature(_)), "{error}");
}

#[tokio::test]
async fn an_unreachable_or_foreign_authority_is_a_clear_error() {
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/tsr", closed.local_addr().unwrap());
    drop(closed);
    let error = request(&TsaSettings::parse(&url).unwrap(), &digest_of("x"))
        .await
        .unwrap_err();
    assert!(
        matches!(&error, TimestampError::Unreachable { url: u, .. } if *u == url),
        "{error}"
    );
    assert!(error.to_string().contains("cannot be reached"), "{error}");
    // A certificate file that is no certificate.
    let dir = tempfile::tempdir().unwrap();
    let junk = dir.path().join("junk.pem");
    std::fs::write(
        &junk,
        "-----BEGIN CERTIFICATE-----\nnot base64\n-----END CERTIFICATE-----\n",
    )
    .unwrap();
    let error = timestamp::read_trusted(&junk).unwrap_err();
    assert!(error.to_string().contains("junk.pem"), "{error}");
}
