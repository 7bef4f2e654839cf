//! Tuning files: values for a compiled program's thresholds ([`Threshold`]), one `name=value`
//! per line, a threshold named by its [`ThresholdId`]'s name (`suff_outer_par_0`). Blank lines
//! and lines starting with `#` are ignored; spaces around the name and the value are allowed.
//! Every name must be a threshold of the program, at most once; every value a non-negative
//! integer (sizes are never negative). A threshold the file does not name keeps its default.
//!
//! [`print_tuning`] writes the file that sets every threshold to its default, each preceded by
//! its doc comment, which is the starting point for tuning by hand.

use crate::kir::{Threshold, ThresholdId};
use std::collections::BTreeMap;
use std::fmt;
use std::path::Path;

/// A tuning file that cannot be used, naming the file and (when it is about a line) the line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TuningError {
    pub file: String,
    /// 1-based; `None` when the file cannot be read.
    pub line: Option<usize>,
    pub message: String,
}

impl fmt::Display for TuningError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(line) => write!(f, "{}:{}: {}", self.file, line, self.message),
            None => write!(f, "{}: {}", self.file, self.message),
        }
    }
}

impl std::error::Error for TuningError {}

/// Reads the tuning file at `path` for a program with these thresholds: the values it sets.
pub fn read_tuning(
    path: &Path,
    thresholds: &[Threshold],
) -> Result<BTreeMap<ThresholdId, i64>, TuningError> {
    let file = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| TuningError {
        file: file.clone(),
        line: None,
        message: format!("cannot read the tuning file: {e}"),
    })?;
    parse_tuning(&file, &text, thresholds)
}

/// Parses the text of a tuning file (`file` names it in errors): the values it sets.
pub fn parse_tuning(
    file: &str,
    text: &str,
    thresholds: &[Threshold],
) -> Result<BTreeMap<ThresholdId, i64>, TuningError> {
    let mut values = BTreeMap::new();
    for (i, line) in text.lines().enumerate() {
        let error = |message: String| TuningError {
            file: file.to_string(),
            line: Some(i + 1),
            message,
        };
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let Some((name, value)) = line.split_once('=') else {
            return Err(error(format!("expected `name=value`, found `{line}`")));
        };
        let (name, value) = (name.trim(), value.trim());
        let id = ThresholdId::parse(name).filter(|id| thresholds.iter().any(|t| t.id == *id));
        let Some(id) = id else {
            let known: Vec<String> = thresholds.iter().map(|t| t.id.to_string()).collect();
            let known = if known.is_empty() {
                "the program has none".to_string()
            } else {
                format!("the program has {}", known.join(", "))
            };
            return Err(error(format!("unknown threshold `{name}` ({known})")));
        };
        let value: i64 = match value.parse() {
            Ok(v) if v >= 0 => v,
            _ => {
                return Err(error(format!(
                    "the value of `{name}` must be a non-negative integer, found `{value}`"
                )));
            }
        };
        if values.insert(id, value).is_some() {
            return Err(error(format!("`{name}` is set twice")));
        }
    }
    Ok(values)
}

/// A tuning file setting every threshold to its default, each under its doc comment.
pub fn print_tuning(thresholds: &[Threshold]) -> String {
    thresholds
        .iter()
        .map(|t| format!("# {}\n{}={}\n", t.doc, t.id, t.default))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kir::ThresholdKind;

    fn thresholds() -> Vec<Threshold> {
        [ThresholdKind::SuffOuterPar, ThresholdKind::SuffIntraPar]
            .into_iter()
            .map(|kind| {
                let id = ThresholdId { kind, map: 0 };
                Threshold {
                    id,
                    default: 7,
                    doc: format!("what {id} decides"),
                }
            })
            .collect()
    }

    fn id(name: &str) -> ThresholdId {
        ThresholdId::parse(name).unwrap()
    }

    fn error(text: &str) -> String {
        parse_tuning("t.tuning", text, &thresholds())
            .unwrap_err()
            .to_string()
    }

    #[test]
    fn parses_values_comments_and_spaces() {
        let text = "# a comment\n\nsuff_outer_par_0=12\n  suff_intra_par_0 = 0  \n";
        let values = parse_tuning("t.tuning", text, &thresholds()).unwrap();
        assert_eq!(values[&id("suff_outer_par_0")], 12);
        assert_eq!(values[&id("suff_intra_par_0")], 0);
    }

    #[test]
    fn errors_name_the_file_and_line() {
        assert_eq!(
            error("suff_outer_par_0=1\nsuff_outer_par_9=2"),
            "t.tuning:2: unknown threshold `suff_outer_par_9` (the program has \
             suff_outer_par_0, suff_intra_par_0)"
        );
        assert_eq!(
            error("suff_outer_par_0=-1"),
            "t.tuning:1: the value of `suff_outer_par_0` must be a non-negative integer, \
             found `-1`"
        );
        assert_eq!(
            error("suff_outer_par_0=lots"),
            "t.tuning:1: the value of `suff_outer_par_0` must be a non-negative integer, \
             found `lots`"
        );
        assert_eq!(
            error("\nsuff_outer_par_0"),
            "t.tuning:2: expected `name=value`, found `suff_outer_par_0`"
        );
        assert_eq!(
            error("suff_intra_par_0=1\nsuff_intra_par_0=2"),
            "t.tuning:2: `suff_intra_par_0` is set twice"
        );
        let none = parse_tuning("t.tuning", "x=1", &[]).unwrap_err();
        assert_eq!(none.message, "unknown threshold `x` (the program has none)");
    }

    #[test]
    fn printed_defaults_parse_back() {
        let text = print_tuning(&thresholds());
        assert!(text.starts_with("# what suff_outer_par_0 decides\nsuff_outer_par_0=7\n"));
        let values = parse_tuning("t.tuning", &text, &thresholds()).unwrap();
        assert_eq!(values.len(), 2);
        assert!(values.values().all(|&v| v == 7));
    }

    #[test]
    fn an_autotuned_file_reads_back_by_name() {
        // As `ogham autotune` writes it: comments, then `name=value` per threshold.
        let text = "# ogham autotune: 2.000 ms with the defaults, 1.000 ms tuned\n\
                    # what suff_outer_par_0 decides\n\
                    # default 7; tried 7: 2.000 ms, 0: 1.000 ms\n\
                    suff_outer_par_0=0\n\
                    # what suff_intra_par_0 decides\n\
                    # default 7; tried 7: 1.000 ms, 0: 1.500 ms\n\
                    suff_intra_par_0=9223372036854775807\n";
        let values = parse_tuning("t.tuning", text, &thresholds()).unwrap();
        let mut written: Vec<String> = values.iter().map(|(id, v)| format!("{id}={v}")).collect();
        let mut settings: Vec<&str> = text.lines().filter(|l| !l.starts_with('#')).collect();
        written.sort();
        settings.sort();
        assert_eq!(written, settings);
        assert_eq!(values[&id("suff_intra_par_0")], i64::MAX);
    }

    #[test]
    fn unreadable_file_is_named() {
        let err = read_tuning(Path::new("/nonexistent/x.tuning"), &thresholds()).unwrap_err();
        assert_eq!(err.line, None);
        assert!(
            err.to_string()
                .starts_with("/nonexistent/x.tuning: cannot read")
        );
    }
}
