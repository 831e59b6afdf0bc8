//! How a capture's body is stored: gzip (pure Rust, `flate2`'s default backend; HTML shrinks
//! four- to eightfold) with the SHA-256 of the uncompressed bytes beside it. gzip rather than a
//! faster codec because an operator can read a body out of a database dump with `gunzip`.

use std::io::{Read, Write};

use sha2::{Digest, Sha256};

use crate::{Result, StoreError};

/// The one compression written (the `compression` column says it, so another can follow).
pub(crate) const GZIP: &str = "gzip";

/// A body ready to store.
pub(crate) struct Packed {
    pub(crate) sha256: String,
    pub(crate) size: i64,
    pub(crate) data: Vec<u8>,
}

/// SHA-256 of `bytes` in lower-case hex: the form captures are stored with
/// ([`crate::PageCapture::body_sha256`]), so callers comparing hashes use this one.
pub fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Hashes and compresses a body.
pub(crate) fn pack(body: &[u8]) -> Result<Packed> {
    let mut encoder = flate2::write::GzEncoder::new(
        Vec::with_capacity(body.len() / 4 + 64),
        flate2::Compression::default(),
    );
    encoder
        .write_all(body)
        .and_then(|()| encoder.finish())
        .map(|data| Packed {
            sha256: sha256_hex(body),
            size: i64::try_from(body.len()).unwrap_or(i64::MAX),
            data,
        })
        .map_err(|e| StoreError::Invalid(format!("cannot compress a page capture: {e}")))
}

/// The body a stored capture holds; `Invalid` when it does not decompress to `size` bytes.
pub(crate) fn unpack(compression: &str, data: &[u8], size: i64) -> Result<Vec<u8>> {
    if compression != GZIP {
        return Err(StoreError::Invalid(format!(
            "unknown capture compression {compression:?}"
        )));
    }
    let mut body = Vec::with_capacity(usize::try_from(size).unwrap_or(0));
    flate2::read::GzDecoder::new(data)
        .read_to_end(&mut body)
        .map_err(|e| StoreError::Invalid(format!("a stored page capture is corrupt: {e}")))?;
    if i64::try_from(body.len()).ok() != Some(size) {
        return Err(StoreError::Invalid(format!(
            "a stored page capture decompresses to {} bytes, not the {size} stored",
            body.len()
        )));
    }
    Ok(body)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_body_round_trips_with_its_hash() {
        let body = "<p>第一章 风起</p>".repeat(200).into_bytes();
        let packed = pack(&body).unwrap();
        assert!(packed.data.len() < body.len() / 4);
        assert_eq!(unpack(GZIP, &packed.data, packed.size).unwrap(), body);
        assert_eq!(
            sha256_hex(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert!(unpack(GZIP, &packed.data, packed.size + 1).is_err());
        assert!(unpack("zstd", &packed.data, packed.size).is_err());
    }
}
