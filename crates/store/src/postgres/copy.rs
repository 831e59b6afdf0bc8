//! Bulk loading with `COPY ... FROM STDIN (FORMAT binary)`, the fastest way into a PostgreSQL
//! table: no SQL to parse per row, no text to convert, and the data streams to the server while
//! the next rows are encoded.
//!
//! Only what the store bulk-loads is supported: rows of `BIGINT` columns, none of them NULL. The
//! binary format needs no escaping (every value is a length and its bytes), so no value can be
//! misread as a delimiter, a NULL marker or an end of data, which a text `COPY` would have to
//! guard against by hand. Reference: the "Binary Format" section of PostgreSQL's `COPY` page.

use sqlx::PgConnection;
use sqlx::postgres::PgCopyIn;

use crate::Result;

/// Signature, flags (no OIDs) and header extension length (none) of a binary COPY stream.
const HEADER: &[u8] = b"PGCOPY\n\xff\r\n\0\0\0\0\0\0\0\0\0";

/// The end of a binary COPY stream: a tuple field count of -1.
const TRAILER: [u8; 2] = (-1i16).to_be_bytes();

/// Bytes handed to the connection at a time: large enough that messages are few, small enough
/// that a work of any size does not need its whole encoding in memory, and the server starts
/// inserting while the rest is encoded.
const CHUNK: usize = 256 * 1024;

/// Appends one row to a binary COPY stream: the field count, then each value as its byte
/// length (8) and its big-endian two's complement bytes, which is PostgreSQL's `int8send`.
pub(super) fn encode_row<const N: usize>(buf: &mut Vec<u8>, row: &[i64; N]) {
    let fields = i16::try_from(N).expect("a row has fewer than 32768 columns");
    buf.extend_from_slice(&fields.to_be_bytes());
    for value in row {
        buf.extend_from_slice(&8i32.to_be_bytes());
        buf.extend_from_slice(&value.to_be_bytes());
    }
}

/// A `COPY table (columns) FROM STDIN (FORMAT binary)` in progress, fed row by row, over `N`
/// `BIGINT` columns.
///
/// [`BinaryCopy::finish`] must end it; dropped before that (an error on the way), it tells the
/// server to fail the COPY, so the enclosing transaction cannot commit part of the rows.
pub(super) struct BinaryCopy<'c, const N: usize> {
    copy: PgCopyIn<&'c mut PgConnection>,
    buf: Vec<u8>,
}

impl<'c, const N: usize> BinaryCopy<'c, N> {
    /// Starts `statement`, which must be a binary `COPY ... FROM STDIN` of `N` columns.
    pub(super) async fn begin(
        conn: &'c mut PgConnection,
        statement: &'static str,
    ) -> Result<BinaryCopy<'c, N>> {
        let copy = conn.copy_in_raw(statement).await?;
        let mut buf = Vec::with_capacity(CHUNK + 2 + N * 12);
        buf.extend_from_slice(HEADER);
        Ok(BinaryCopy { copy, buf })
    }

    /// Adds one row; every [`CHUNK`] bytes the rows so far go to the server.
    pub(super) async fn row(&mut self, row: [i64; N]) -> Result<()> {
        encode_row(&mut self.buf, &row);
        if self.buf.len() >= CHUNK {
            self.copy.send(self.buf.as_slice()).await?;
            self.buf.clear();
        }
        Ok(())
    }

    /// Sends the rest and ends the COPY. Returns the number of rows the server stored; a row
    /// the table refuses (a broken constraint) fails the whole statement here.
    pub(super) async fn finish(mut self) -> Result<u64> {
        self.buf.extend_from_slice(&TRAILER);
        self.copy.send(self.buf).await?;
        Ok(self.copy.finish().await?)
    }
}

#[cfg(test)]
mod tests {
    use super::{HEADER, TRAILER, encode_row};

    #[test]
    fn the_header_is_the_eleven_byte_signature_then_two_zero_words() {
        assert_eq!(&HEADER[..11], b"PGCOPY\n\xff\r\n\0");
        assert_eq!(&HEADER[11..], [0u8; 8]);
        assert_eq!(TRAILER, [0xff, 0xff]);
    }

    #[test]
    fn a_row_is_its_field_count_then_length_prefixed_big_endian_values() {
        let mut buf = Vec::new();
        encode_row(&mut buf, &[1, -1, i64::MIN, 0x0102_0304_0506_0708]);
        let expected: Vec<u8> = [
            &[0, 4][..],
            &[0, 0, 0, 8, 0, 0, 0, 0, 0, 0, 0, 1],
            &[0, 0, 0, 8, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff],
            &[0, 0, 0, 8, 0x80, 0, 0, 0, 0, 0, 0, 0],
            &[0, 0, 0, 8, 1, 2, 3, 4, 5, 6, 7, 8],
        ]
        .concat();
        assert_eq!(buf, expected);
    }

    #[test]
    fn rows_follow_each_other_without_separators() {
        let mut one = Vec::new();
        encode_row(&mut one, &[7, 8]);
        let mut two = one.clone();
        encode_row(&mut two, &[7, 8]);
        assert_eq!(one.len(), 2 + 2 * 12);
        assert_eq!(two, [one.clone(), one].concat());
    }
}
