//! The matcher's own tests: what each directive accepts, and near misses it must reject.

use super::Checks;

const CLIF: &str = "\
function %main_k0(i64, i64) -> i32 system_v {
block0(v0: i64, v1: i64):
    v17 = iconst.i32 0
    v18 = fadd v17, v17
    v42 = iadd v18, v4
    brif v42, block3, block4

block3:
    return v18
}
";

/// The directives of `lines` (one a line, `-- ` prepended) checked against `text`.
fn run(lines: &[&str], text: &str) -> Result<(), String> {
    let file: String = lines.iter().map(|l| format!("-- {l}\n")).collect();
    Checks::parse(&file)?.check(text)
}

fn fails(lines: &[&str], text: &str) -> String {
    match run(lines, text) {
        Ok(()) => panic!("{lines:?} should not match"),
        Err(e) => e,
    }
}

#[test]
fn only_directive_lines_are_directives() {
    let checks = Checks::parse("-- A test.\nentry main\n-- checked: no\n-- check: v1\n").unwrap();
    assert_eq!(checks.directives.len(), 1);
    assert_eq!(checks.directives[0].line, 4);
    assert!(Checks::parse("-- nothing here\n").unwrap().is_empty());
}

#[test]
fn check_matches_in_order() {
    run(
        &["check: iconst.i32 0", "check: fadd", "check: return"],
        CLIF,
    )
    .unwrap();
    let e = fails(&["check: fadd", "check: iconst"], CLIF);
    assert!(e.starts_with("line 2: `check: iconst`"), "{e}");
    assert!(e.contains("scanned:") && e.contains("v42 = iadd"), "{e}");
}

#[test]
fn patterns_match_whole_words_at_their_ends() {
    run(&["check: v42 = iadd"], CLIF).unwrap();
    // `v4` is in the text only as part of `v42`, and as a whole word at `v18, v4`.
    run(&["check: iadd v18, v4"], CLIF).unwrap();
    fails(&["check: v4 = iadd"], CLIF);
    fails(&["check: block"], "    blocks\n");
    // Inside a pattern, text is matched exactly.
    fails(&["check: v1 = fadd"], CLIF);
}

#[test]
fn spaces_match_runs_of_blanks() {
    run(&["check: v18 = fadd v17, v17"], "v18  =\tfadd v17,   v17\n").unwrap();
    fails(&["check: v18 = fadd"], "v18 =\nfadd\n");
    fails(&["check: v18 = fadd"], "v18 =fadd\n");
}

#[test]
fn nextln_and_sameln() {
    run(
        &[
            "check: block0",
            "nextln: iconst",
            "sameln: 0",
            "nextln: fadd",
        ],
        CLIF,
    )
    .unwrap();
    let e = fails(&["check: block0", "nextln: fadd"], CLIF);
    assert!(
        e.contains("line 2: `nextln: fadd`") && e.contains("output lines 3-3"),
        "{e}"
    );
    // `sameln` looks after the previous match only.
    fails(&["check: fadd", "sameln: v18"], CLIF);
    fails(&["check: return", "nextln: return"], CLIF);
    assert!(fails(&["nextln: v1"], CLIF).contains("needs an earlier match"));
}

#[test]
fn not_forbids_between_matches() {
    run(&["check: block0", "not: fsub", "check: return"], CLIF).unwrap();
    let e = fails(&["check: block0", "not: iadd", "check: return"], CLIF);
    assert!(
        e.contains("line 2: `not: iadd`") && e.contains("output line 5"),
        "{e}"
    );
    // Only the region between the two matches counts.
    run(&["check: iadd", "not: iconst", "check: return"], CLIF).unwrap();
    // A trailing `not` runs to the end of the text, a leading one from its start.
    fails(&["check: block3", "not: }"], CLIF);
    fails(&["not: function", "check: block0"], CLIF);
    run(&["not: function", "check: function"], CLIF).unwrap();
}

#[test]
fn unordered_matches_in_any_order_without_overlap() {
    run(
        &[
            "check: block0",
            "unordered: fadd",
            "unordered: iconst",
            "check: brif",
        ],
        CLIF,
    )
    .unwrap();
    // Two directives cannot claim the same match.
    let e = fails(&["unordered: return v18", "unordered: return"], CLIF);
    assert!(e.contains("line 2: `unordered: return`"), "{e}");
    run(
        &["unordered: v18", "unordered: v18", "unordered: v18"],
        CLIF,
    )
    .unwrap();
    // After the run, matching continues after its last match.
    fails(
        &["unordered: iadd", "unordered: iconst", "check: fadd"],
        CLIF,
    );
}

#[test]
fn variables_survive_renumbering() {
    let checks = [
        "check: $(zero=v\\d+) = iconst.i32 0",
        "check: $(sum=v\\d+) = fadd $zero, $zero",
        "check: return $sum",
    ];
    run(&checks, CLIF).unwrap();
    let renumbered = CLIF.replace("v17", "v3").replace("v18", "v9");
    run(&checks, &renumbered).unwrap();
    // The bound value must recur: here `return` gives another value.
    let e = fails(&checks, &CLIF.replace("return v18", "return v17"));
    assert!(
        e.contains("line 3") && e.contains("return[ \\t]+v18"),
        "{e}"
    );
    // `v$(n=...)` binds the number; `$(n)` separates a name from the text after it.
    run(
        &[
            "check: block$(b=\\d+):",
            "check: return",
            "check: brif v42, block$(b)",
        ],
        CLIF,
    )
    .unwrap_err();
    run(
        &["check: brif v42, block$(b=\\d+)", "check: block$(b):"],
        CLIF,
    )
    .unwrap();
}

#[test]
fn a_variable_recurs_in_the_pattern_that_binds_it() {
    run(&["check: fadd $(a=v\\d+), $a"], CLIF).unwrap();
    // `v18 = fadd v18, v18` is not in the text.
    fails(&["check: $(a=v\\d+) = fadd $a, $a"], CLIF);
    // Later places on the line are tried when the first does not repeat.
    run(&["check: $(a=v\\d) $a"], "x v1 v2 v3 v3\n").unwrap();
    fails(&["check: $(a=v\\d) $a"], "x v1 v2 v3 v4\n");
    // The binding holds after the pattern.
    run(&["check: $(a=v\\d) $a", "check: y $a"], "v3 v3 y v3\n").unwrap();
}

#[test]
fn non_ascii_text_is_stepped_by_characters() {
    run(&["unordered: é", "unordered: é"], "é é\n").unwrap();
    fails(&["unordered: é", "unordered: é"], "é xé\n");
    run(&["check: $(a=\\w) $a"], "é ü ü\n").unwrap();
}

#[test]
fn anonymous_regexes_and_dollars() {
    run(&["check: v$(=\\d+) = iadd"], CLIF).unwrap();
    fails(&["check: v$(=\\d) = iadd"], CLIF);
    run(&["check: cost $$5"], "a cost $5 here\n").unwrap();
    // Parentheses inside the regex nest.
    run(
        &["check: $(x=(iconst|fadd)\\.?(i32)?) 0", "check: $x"],
        CLIF,
    )
    .unwrap_err();
    run(&["check: $(x=(iconst|fadd)(\\.i32)?) 0"], CLIF).unwrap();
}

#[test]
fn malformed_directives_are_errors() {
    let e = |lines: &[&str]| {
        let file: String = lines.iter().map(|l| format!("-- {l}\n")).collect();
        Checks::parse(&file).unwrap_err()
    };
    assert!(e(&["check: $(x=\\d+"]).contains("not closed"));
    assert!(e(&["check: $(x=[)"]).contains("bad regular expression"));
    assert!(e(&["check: $(1x=\\d)"]).contains("not a variable name"));
    assert!(e(&["check: a $ b"]).contains("names no variable"));
    assert!(e(&["check: $(x=\\d) $(x=\\d)"]).contains("bound twice"));
    assert!(e(&["not: $(x=\\d)"]).contains("cannot bind"));
    assert!(e(&["check: ok", "check:"]).starts_with("line 2:"));
    let unbound = run(&["check: $y"], CLIF).unwrap_err();
    assert!(
        unbound.contains("which no earlier directive binds"),
        "{unbound}"
    );
}
