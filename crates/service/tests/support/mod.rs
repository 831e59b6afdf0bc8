//! A real SMTP server for tests (mailin-embedded on a loopback port) that keeps every message
//! it is sent: what the alert and notice tests mail to.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

/// One message the SMTP server received.
#[derive(Debug, Clone)]
pub struct Mail {
    /// The envelope's recipients.
    pub to: Vec<String>,
    /// The message as received.
    pub data: String,
}

/// An SMTP handler keeping every message.
#[derive(Clone, Default)]
struct Mailbox {
    received: Arc<Mutex<Vec<Mail>>>,
    to: Vec<String>,
    data: Vec<u8>,
}

impl mailin_embedded::Handler for Mailbox {
    fn data_start(
        &mut self,
        _domain: &str,
        _from: &str,
        _is8bit: bool,
        to: &[String],
    ) -> mailin_embedded::Response {
        self.to = to.to_vec();
        self.data.clear();
        mailin_embedded::response::OK
    }

    fn data(&mut self, buf: &[u8]) -> std::io::Result<()> {
        self.data.extend_from_slice(buf);
        Ok(())
    }

    fn data_end(&mut self) -> mailin_embedded::Response {
        self.received.lock().unwrap().push(Mail {
            to: self.to.clone(),
            data: String::from_utf8_lossy(&self.data).into_owned(),
        });
        mailin_embedded::response::OK
    }
}

/// Starts an SMTP server on a free loopback port; returns its address and mailbox.
pub fn start_smtp() -> (SocketAddr, Arc<Mutex<Vec<Mail>>>) {
    let mailbox = Mailbox::default();
    let received = mailbox.received.clone();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let mut server = mailin_embedded::Server::new(mailbox);
    server
        .with_name("mail.test")
        .with_ssl(mailin_embedded::SslConfig::None)
        .unwrap()
        .with_tcp_listener(listener);
    std::thread::spawn(move || {
        if let Err(error) = server.serve() {
            panic!("the SMTP server stopped: {error}");
        }
    });
    (addr, received)
}
