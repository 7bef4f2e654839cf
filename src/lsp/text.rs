//! Positions and file names as the protocol has them: `line:character` positions counted in
//! UTF-16 code units (the protocol's default encoding) to and from byte offsets, and `file:`
//! URIs to and from paths.
//!
//! Invariants: every conversion is total: a position past the end of a line or of the text is
//! clamped to it, a byte offset inside a character or past the text moves back to the nearest
//! character boundary, so no request can make the server index out of bounds.

use lsp_types::{Position, Range, Uri};
use std::path::{Path, PathBuf};
use std::str::FromStr;

/// The byte offsets where the lines of a text start.
pub struct LineIndex<'a> {
    text: &'a str,
    starts: Vec<usize>,
}

impl<'a> LineIndex<'a> {
    pub fn new(text: &'a str) -> LineIndex<'a> {
        let starts = std::iter::once(0)
            .chain(text.match_indices('\n').map(|(i, _)| i + 1))
            .collect();
        LineIndex { text, starts }
    }

    /// The byte offset of `pos`, clamped to its line and to the text.
    pub fn offset(&self, pos: Position) -> usize {
        let Some(&start) = self.starts.get(pos.line as usize) else {
            return self.text.len();
        };
        let line = &self.text[start..];
        let line = &line[..line.find('\n').unwrap_or(line.len())];
        let mut units = 0;
        for (i, c) in line.char_indices() {
            if units >= pos.character as usize {
                return start + i;
            }
            units += c.len_utf16();
        }
        start + line.len()
    }

    /// The position of byte offset `offset` (moved back to a character boundary).
    pub fn position(&self, offset: usize) -> Position {
        let mut offset = offset.min(self.text.len());
        while !self.text.is_char_boundary(offset) {
            offset -= 1;
        }
        let line = self.starts.partition_point(|&s| s <= offset) - 1;
        let start = self.starts[line];
        let character: usize = self.text[start..offset].chars().map(char::len_utf16).sum();
        Position::new(line as u32, character as u32)
    }

    pub fn range(&self, start: usize, end: usize) -> Range {
        Range::new(self.position(start), self.position(end))
    }

    /// The text of line `line` without its newline (empty past the end).
    pub fn line(&self, line: usize) -> &'a str {
        let Some(&start) = self.starts.get(line) else {
            return "";
        };
        let rest = &self.text[start..];
        rest[..rest.find('\n').unwrap_or(rest.len())].trim_end_matches('\r')
    }

    /// The byte offset where line `line` starts (the text's end past the last line).
    pub fn line_start(&self, line: usize) -> usize {
        self.starts.get(line).copied().unwrap_or(self.text.len())
    }
}

/// The path of a `file:` URI (percent-decoded), or `None` for other schemes.
pub fn uri_to_path(uri: &Uri) -> Option<PathBuf> {
    let rest = uri.as_str().strip_prefix("file://")?;
    // `file://host/path`: only the local host (empty or `localhost`) is a path here.
    let path = rest.strip_prefix("localhost").unwrap_or(rest);
    if !path.starts_with('/') {
        return None;
    }
    let bytes = path.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        match (
            bytes[i],
            bytes.get(i + 1).copied(),
            bytes.get(i + 2).copied(),
        ) {
            (b'%', Some(h), Some(l)) if hex(h).is_some() && hex(l).is_some() => {
                out.push((hex(h).unwrap_or(0) * 16 + hex(l).unwrap_or(0)) as u8);
                i += 3;
            }
            (b, _, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    Some(PathBuf::from(String::from_utf8_lossy(&out).into_owned()))
}

/// The `file:` URI of an absolute path (bytes outside the unreserved set percent-encoded).
pub fn path_to_uri(path: &Path) -> Option<Uri> {
    let mut s = String::from("file://");
    for b in path.to_string_lossy().bytes() {
        if b.is_ascii_alphanumeric() || b"/-._~".contains(&b) {
            s.push(b as char);
        } else {
            s.push_str(&format!("%{b:02X}"));
        }
    }
    Uri::from_str(&s).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_count_utf16_units_and_clamp() {
        let text = "ab\nx\u{1F600}y\n";
        let idx = LineIndex::new(text);
        assert_eq!(idx.offset(Position::new(1, 3)), 3 + 1 + 4);
        assert_eq!(idx.position(3 + 1 + 4), Position::new(1, 3));
        assert_eq!(idx.offset(Position::new(0, 99)), 2);
        assert_eq!(idx.offset(Position::new(9, 0)), text.len());
        assert_eq!(idx.position(3 + 2), Position::new(1, 1));
        assert_eq!(idx.line(1), "x\u{1F600}y");
    }

    #[test]
    fn uris_round_trip() {
        let path = Path::new("/tmp/a b/c%.og");
        let uri = path_to_uri(path).unwrap();
        assert_eq!(uri.as_str(), "file:///tmp/a%20b/c%25.og");
        assert_eq!(uri_to_path(&uri).unwrap(), path);
        assert_eq!(uri_to_path(&Uri::from_str("untitled:x").unwrap()), None);
    }
}
