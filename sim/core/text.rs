//! Reading input files as text: every reader (configs, kernels, litmus tests, traces, sweep specs,
//! suites, measurement files) goes through [`read`] or [`decode`], so that a file that is not UTF-8
//! names the line and column of its first bad byte instead of "stream did not contain valid UTF-8".
//!
//! Lines are counted at `\n`; the column is 1-based and counts characters (a valid multi-byte
//! character before the bad byte is one column), as every other `line:col` in the tool does.

use std::path::Path;
use thiserror::Error;

#[derive(Debug, Error)]
pub enum TextError {
    #[error("{file}: cannot read: {source}")]
    Io {
        file: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{file}:{line}:{col}: {}", not_utf8_message(*.byte))]
    NotUtf8 {
        file: String,
        line: u32,
        col: u32,
        /// The first byte that is not part of a valid UTF-8 sequence.
        byte: u8,
    },
}

/// What a [`TextError::NotUtf8`] says after its `file:line:col`.
pub fn not_utf8_message(byte: u8) -> String {
    format!("not UTF-8 text: byte 0x{byte:02x} starts no valid UTF-8 character (save the file as UTF-8)")
}

/// The most bytes [`read`] takes from one file: far more than any config, kernel, litmus test, spec,
/// suite or measurement file holds (the largest shipped is under 1 MiB), and a bound on what a path
/// like `/dev/zero` costs and on the tokens a parser makes of it. Traces have their own bound.
pub const MAX_BYTES: u64 = 32 << 20;

/// Reads `path` as UTF-8 text, at most [`MAX_BYTES`].
pub fn read(path: &Path) -> Result<String, TextError> {
    read_up_to(path, MAX_BYTES)
}

/// Reads `path` as UTF-8 text, refusing a file of more than `limit` bytes.
pub fn read_up_to(path: &Path, limit: u64) -> Result<String, TextError> {
    use std::io::Read;
    let file = path.display().to_string();
    let io = |source| TextError::Io {
        file: file.clone(),
        source,
    };
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(limit + 1).read_to_end(&mut bytes))
        .map_err(io)?;
    if bytes.len() as u64 > limit {
        return Err(io(std::io::Error::new(
            std::io::ErrorKind::FileTooLarge,
            format!("more than {limit} bytes (the most this kind of input may hold)"),
        )));
    }
    decode(bytes, &file)
}

/// `bytes` as UTF-8 text; `file` names it in the error.
pub fn decode(bytes: Vec<u8>, file: &str) -> Result<String, TextError> {
    String::from_utf8(bytes).map_err(|e| {
        let bytes = e.as_bytes();
        let (line, col) = position(bytes, e.utf8_error().valid_up_to());
        TextError::NotUtf8 {
            file: file.to_string(),
            line,
            col,
            byte: bytes[e.utf8_error().valid_up_to()],
        }
    })
}

/// A character as an error message shows it: in backquotes when it is visible, else by its code
/// point (`U+0000`), so that a NUL byte, a control character, an invisible space or a
/// bidirectional override is named instead of printed raw into the terminal.
pub fn shown_char(c: char) -> String {
    let invisible = c.is_control()
        || (c.is_whitespace() && c != ' ')
        || matches!(c, '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2060}'..='\u{2069}' | '\u{FEFF}');
    if invisible {
        format!("U+{:04X}", c as u32)
    } else {
        format!("`{c}`")
    }
}

/// 1-based line and column (in characters) of byte `offset`, where `bytes[..offset]` is valid UTF-8.
fn position(bytes: &[u8], offset: usize) -> (u32, u32) {
    let before = std::str::from_utf8(&bytes[..offset]).unwrap_or("");
    let line = before.matches('\n').count() + 1;
    let col = before
        .rsplit_once('\n')
        .map_or(before, |(_, l)| l)
        .chars()
        .count()
        + 1;
    (
        u32::try_from(line).unwrap_or(u32::MAX),
        u32::try_from(col).unwrap_or(u32::MAX),
    )
}

impl TextError {
    /// `(line, col)` of the first bad byte, for readers whose errors carry a position of their own.
    pub fn position(&self) -> Option<(u32, u32)> {
        match self {
            TextError::NotUtf8 { line, col, .. } => Some((*line, *col)),
            TextError::Io { .. } => None,
        }
    }

    /// The error as a reader puts it into its own: `Err((file, why))` when the file could not be
    /// read, else the bad byte's place and what to say there.
    pub fn located(self) -> Result<Located, (String, std::io::Error)> {
        match self {
            TextError::Io { file, source } => Err((file, source)),
            TextError::NotUtf8 {
                file,
                line,
                col,
                byte,
            } => Ok(Located {
                file,
                line,
                col,
                message: not_utf8_message(byte),
            }),
        }
    }
}

/// An error at a place in a file: `file:line:col: message`. The one located error of the readers
/// (kernel language, C, PTX, litmus, measurement files): each reader's error wraps it
/// (`KernelError::At(Located)`, ...) rather than repeating its four fields; a bad byte's place comes
/// out of [`TextError::located`] as one.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("{file}:{line}:{col}: {message}")]
pub struct Located {
    pub file: String,
    pub line: u32,
    pub col: u32,
    pub message: String,
}

impl Located {
    pub fn new(
        file: impl Into<String>,
        line: u32,
        col: u32,
        message: impl Into<String>,
    ) -> Located {
        Located {
            file: file.into(),
            line,
            col,
            message: message.into(),
        }
    }

    /// `file:line:col`.
    pub fn at(&self) -> String {
        format!("{}:{}:{}", self.file, self.line, self.col)
    }
}

// Each reader converts a `TextError` into its own error beside that error's type (config, kernel,
// litmus, gpu schema and suite), so that a reader says `crate::text::read(path)?` and the position
// lands where that reader puts positions; this leaf imports none of them.

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn invisible_characters_are_shown_by_code_point() {
        assert_eq!(shown_char('\0'), "U+0000");
        assert_eq!(shown_char('\u{202E}'), "U+202E");
        assert_eq!(shown_char('\t'), "U+0009");
        assert_eq!(shown_char('@'), "`@`");
        assert_eq!(shown_char('é'), "`é`");
    }

    #[test]
    fn bad_bytes_are_placed_by_line_and_character_column() {
        let e = decode(b"ok\nx\xc3\xa9y\xffz\n".to_vec(), "f.kern").unwrap_err();
        assert_eq!(e.position(), Some((2, 4)));
        assert_eq!(
            e.to_string(),
            "f.kern:2:4: not UTF-8 text: byte 0xff starts no valid UTF-8 character (save the file as UTF-8)"
        );
        // A truncated multi-byte sequence at the end of the file.
        let e = decode(b"abc\xe2\x82".to_vec(), "t").unwrap_err();
        assert_eq!(e.position(), Some((1, 4)));
        assert_eq!(decode(b"fine\n".to_vec(), "t").unwrap(), "fine\n");
    }

    #[test]
    fn endless_files_are_cut_off() {
        let e = read_up_to(Path::new("/dev/zero"), 1000).unwrap_err();
        assert!(e.to_string().contains("more than 1000 bytes"), "{e}");
    }
}
