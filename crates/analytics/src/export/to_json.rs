//! JSON: one array of the rows' serde form, streamed.

use std::io::{self, Write};

use serde::Serialize;
use serde_json::ser::{Formatter, PrettyFormatter};

use crate::AnalyticsError;

/// Writes a pretty-printed JSON array one element at a time, byte for byte as
/// `serde_json::to_writer_pretty` prints the whole slice (then a newline).
///
/// `serde_json` can stream a sequence only inside one call holding the serializer, which a
/// writer fed row by row from outside cannot do. So this writes the array's punctuation itself
/// and prints each element with a `PrettyFormatter` that has been moved one level in, the level
/// of an array's elements, so the element's own lines are indented as in the whole array.
pub(super) struct JsonArraySink<W: Write> {
    out: W,
    empty: bool,
}

impl<W: Write> JsonArraySink<W> {
    /// Opens the array.
    pub(super) fn new(mut out: W) -> Result<Self, AnalyticsError> {
        out.write_all(b"[")?;
        Ok(JsonArraySink { out, empty: true })
    }

    /// Writes one element.
    pub(super) fn write<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), AnalyticsError> {
        let mut formatter = PrettyFormatter::new();
        // The array's opening, on the formatter only: indentation one level in, as for an
        // element.
        formatter.begin_array(&mut io::sink())?;
        formatter.begin_array_value(&mut self.out, self.empty)?;
        let mut serializer = serde_json::Serializer::with_formatter(&mut self.out, formatter);
        value.serialize(&mut serializer)?;
        self.empty = false;
        Ok(())
    }

    /// Closes the array and flushes.
    pub(super) fn finish(mut self) -> Result<(), AnalyticsError> {
        if !self.empty {
            self.out.write_all(b"\n")?;
        }
        self.out.write_all(b"]\n")?;
        self.out.flush()?;
        Ok(())
    }
}
