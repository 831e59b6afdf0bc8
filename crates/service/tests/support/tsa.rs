//! A real RFC 3161 time-stamping authority for tests: OpenSSL's `openssl ts -reply` signs the
//! replies, behind a small HTTP server on a loopback port in the test process.
//!
//! Each [`TestTsa`] makes its own CA (key and self-signed certificate) and a TSA certificate it
//! signs, with the extended key usage `timeStamping` marked critical as RFC 3161 requires,
//! all in a temporary directory, with `openssl req` and `openssl x509`. So two of them are two
//! unrelated authorities: a token of one does not chain to the other's CA.
//!
//! The `openssl` command is required: `./scripts/test` installs it when missing, and a test
//! that cannot run it fails, naming it, rather than skipping. Shared by the service's and the
//! CLI's tests (included with `#[path]`).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// A running test TSA.
pub struct TestTsa {
    /// Where to POST `application/timestamp-query` requests.
    pub url: String,
    /// The CA certificate (PEM) its TSA certificate chains to: what `--tsa-cert` trusts.
    pub ca_cert: PathBuf,
    /// How many requests it answered.
    answered: Arc<AtomicUsize>,
    _dir: tempfile::TempDir,
}

const CONFIG: &str = "\
[ req ]
distinguished_name = dn
prompt = no
[ dn ]
CN = unused
[ ca_ext ]
basicConstraints = critical, CA:true
keyUsage = critical, keyCertSign, cRLSign
subjectKeyIdentifier = hash
[ tsa_ext ]
basicConstraints = critical, CA:false
keyUsage = critical, digitalSignature, nonRepudiation
extendedKeyUsage = critical, timeStamping
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
[ tsa ]
default_tsa = tsa_config
[ tsa_config ]
serial = serial
crypto_device = builtin
signer_digest = sha256
default_policy = 1.3.6.1.4.1.99999.1
other_policies = 1.3.6.1.4.1.99999.2
digests = sha256, sha384, sha512
accuracy = secs:1
ordering = no
tsa_name = yes
ess_cert_id_chain = no
ess_cert_id_alg = sha256
";

/// Runs `openssl ARGS` in `dir`; panics with its output when it fails or is missing.
fn openssl(dir: &Path, args: &[&str]) {
    let output = Command::new("openssl")
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap_or_else(|e| {
            panic!(
                "cannot run `openssl` ({e}): the TSA tests need it; ./scripts/test installs \
                 Debian's openssl package when it is missing"
            )
        });
    assert!(
        output.status.success(),
        "openssl {args:?} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
}

impl TestTsa {
    /// Makes a CA and a TSA certificate named after `name`, and starts serving.
    pub fn start(name: &str) -> TestTsa {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let root = dir.path().to_owned();
        std::fs::write(root.join("tsa.cnf"), CONFIG).unwrap();
        std::fs::write(root.join("serial"), "01\n").unwrap();
        let ca_subject = format!("/CN={name} Test Root CA");
        let tsa_subject = format!("/CN={name} Test TSA");
        openssl(
            &root,
            &[
                "req",
                "-x509",
                "-new",
                "-newkey",
                "rsa:2048",
                "-nodes",
                "-keyout",
                "ca.key",
                "-out",
                "ca.pem",
                "-days",
                "3650",
                "-subj",
                &ca_subject,
                "-config",
                "tsa.cnf",
                "-extensions",
                "ca_ext",
            ],
        );
        openssl(
            &root,
            &[
                "req",
                "-new",
                "-newkey",
                "rsa:2048",
                "-nodes",
                "-keyout",
                "tsa.key",
                "-out",
                "tsa.csr",
                "-subj",
                &tsa_subject,
                "-config",
                "tsa.cnf",
            ],
        );
        openssl(
            &root,
            &[
                "x509",
                "-req",
                "-in",
                "tsa.csr",
                "-CA",
                "ca.pem",
                "-CAkey",
                "ca.key",
                "-CAcreateserial",
                "-out",
                "tsa.pem",
                "-days",
                "3650",
                "-extfile",
                "tsa.cnf",
                "-extensions",
                "tsa_ext",
            ],
        );
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let url = format!("http://{}/tsr", listener.local_addr().unwrap());
        let answered = Arc::new(AtomicUsize::new(0));
        let state = (root.clone(), answered.clone());
        std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            runtime.block_on(async move {
                let listener = tokio::net::TcpListener::from_std(listener).unwrap();
                let app = axum::Router::new()
                    .route("/tsr", axum::routing::post(reply))
                    .with_state(state);
                axum::serve(listener, app).await.unwrap();
            });
        });
        TestTsa {
            url,
            ca_cert: root.join("ca.pem"),
            answered,
            _dir: dir,
        }
    }

    /// How many requests it answered with a reply.
    pub fn answered(&self) -> usize {
        self.answered.load(Ordering::SeqCst)
    }
}

/// Answers one query with `openssl ts -reply`, one at a time (they share the serial file).
async fn reply(
    axum::extract::State((root, answered)): axum::extract::State<(PathBuf, Arc<AtomicUsize>)>,
    headers: axum::http::HeaderMap,
    body: axum::body::Bytes,
) -> axum::response::Response {
    use axum::response::IntoResponse;
    static ONE_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());
    if headers
        .get(axum::http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        != Some("application/timestamp-query")
    {
        return (axum::http::StatusCode::UNSUPPORTED_MEDIA_TYPE, "").into_response();
    }
    let _turn = ONE_AT_A_TIME.lock().await;
    let reply = tokio::task::spawn_blocking(move || {
        std::fs::write(root.join("query.tsq"), &body).unwrap();
        openssl(
            &root,
            &[
                "ts",
                "-reply",
                "-queryfile",
                "query.tsq",
                "-config",
                "tsa.cnf",
                "-inkey",
                "tsa.key",
                "-signer",
                "tsa.pem",
                "-chain",
                "ca.pem",
                "-out",
                "reply.tsr",
            ],
        );
        answered.fetch_add(1, Ordering::SeqCst);
        std::fs::read(root.join("reply.tsr")).unwrap()
    })
    .await
    .unwrap();
    (
        [(
            axum::http::header::CONTENT_TYPE,
            "application/timestamp-reply",
        )],
        reply,
    )
        .into_response()
}
