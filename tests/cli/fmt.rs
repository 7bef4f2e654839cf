//! `ogham fmt`: in-place formatting of files and directories, `--check` (exit status 1 and a
//! line per unformatted file, nothing written), standard input to standard output, the
//! `-- ogham-fmt: off` marker, and a file that does not parse (its diagnostics, with the
//! location, and the file left as it was).

use super::{assert_user_error, code, ogham, ogham_with_stdin, scratch, stderr, stdout, write};

const MESSY: &str = "def   f (x:i32) :i32=(x+1)*2\n";
const TIDY: &str = "def f (x: i32) : i32 = (x + 1) * 2\n";

#[test]
fn check_reports_and_changes_nothing() {
    let dir = scratch("fmt-check");
    let messy = write(&dir, "messy.og", MESSY);
    let tidy = write(&dir, "tidy.og", TIDY);
    let out = ogham(&["fmt", "--check", dir.to_str().unwrap()]);
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    assert_eq!(
        stdout(&out),
        format!("would reformat {}\n", messy.display())
    );
    assert!(
        stderr(&out).contains("1 file would be reformatted"),
        "{}",
        stderr(&out)
    );
    assert_eq!(std::fs::read_to_string(&messy).unwrap(), MESSY);
    let out = ogham(&["fmt", "--check", tidy.to_str().unwrap()]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(stdout(&out), "");
}

#[test]
fn formats_in_place() {
    let dir = scratch("fmt-in-place");
    let messy = write(&dir, "messy.og", MESSY);
    let sub = dir.join("sub");
    std::fs::create_dir_all(&sub).unwrap();
    let nested = write(&sub, "nested.og", MESSY);
    let out = ogham(&["fmt", dir.to_str().unwrap()]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(
        stdout(&out),
        format!(
            "formatted {}\nformatted {}\n",
            messy.display(),
            nested.display()
        )
    );
    assert_eq!(std::fs::read_to_string(&messy).unwrap(), TIDY);
    assert_eq!(std::fs::read_to_string(&nested).unwrap(), TIDY);
    // Formatted files are not written again.
    let out = ogham(&["fmt", dir.to_str().unwrap()]);
    assert_eq!((code(&out), stdout(&out)), (0, String::new()));
}

#[test]
fn off_marker_leaves_a_file_alone() {
    let dir = scratch("fmt-off");
    let text = format!("{MESSY}\n-- ogham-fmt: off\n");
    let file = write(&dir, "off.og", &text);
    let out = ogham(&["fmt", "--check", file.to_str().unwrap()]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let out = ogham(&["fmt", file.to_str().unwrap()]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(std::fs::read_to_string(&file).unwrap(), text);
}

#[test]
fn a_file_that_does_not_parse_is_reported_and_kept() {
    let dir = scratch("fmt-broken");
    let broken_text = "def f (x: i32) : i32 =\n  x + * 2\n";
    let broken = write(&dir, "broken.og", broken_text);
    let messy = write(&dir, "messy.og", MESSY);
    let out = ogham(&["fmt", dir.to_str().unwrap()]);
    assert_user_error(&out, "error[E0105]: expected an expression, found `*`");
    assert!(
        stderr(&out).contains(&format!("{}:2:7", broken.display())),
        "{}",
        stderr(&out)
    );
    assert!(
        stderr(&out).contains("1 file could not be formatted"),
        "{}",
        stderr(&out)
    );
    assert_eq!(std::fs::read_to_string(&broken).unwrap(), broken_text);
    // The other files are formatted all the same.
    assert_eq!(std::fs::read_to_string(&messy).unwrap(), TIDY);
    let out = ogham(&["fmt", "--check", broken.to_str().unwrap()]);
    assert_user_error(&out, "E0105");
}

#[test]
fn stdin_to_stdout() {
    let run = |input: &str| ogham_with_stdin(&["fmt", "-"], input);
    let out = run(MESSY);
    assert_eq!(
        (code(&out), stdout(&out)),
        (0, TIDY.to_string()),
        "{}",
        stderr(&out)
    );
    let out = run("def f = (\n");
    assert_user_error(&out, "<stdin>:1:10");
    assert_eq!(stdout(&out), "");
    let out = ogham(&["fmt", "-", "x.og"]);
    assert_user_error(&out, "cannot be given with other paths");
}
