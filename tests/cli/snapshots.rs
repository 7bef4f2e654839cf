//! `ogham test` on a file anywhere: a kernel snapshot is reported as missing (with the reason),
//! stored by `--accept`, re-checked, and a changed one fails and leaves a pending file that
//! `--accept` removes.

use super::{code, ogham, scratch, stdout, write};

#[test]
fn kernel_snapshots_of_any_file() {
    let dir = scratch("snapshot_workflow");
    let file = write(
        &dir,
        "scale.og",
        "-- ==\n-- input { [1f32, 2f32] }\n-- output { [2f32, 4f32] }\n\
         -- snapshot { clif kernel = main_k0 }\n\
         entry main (xs: []f32) : []f32 = map (\\x -> x * 2) xs\n",
    );
    let f = file.to_str().unwrap();
    let stored = dir.join("__snapshots__").join("scale.og.clif.snap");
    let pending = dir.join("__snapshots__").join("scale.og.clif.snap.new");

    let out = ogham(&["test", f]);
    assert_eq!(code(&out), 0);
    assert!(
        stdout(&out).contains("SKIP snapshot-clif::"),
        "{}",
        stdout(&out)
    );
    assert!(
        stdout(&out).contains("no stored snapshot"),
        "{}",
        stdout(&out)
    );

    let out = ogham(&["test", "--accept", f]);
    assert_eq!(code(&out), 0, "{}", stdout(&out));
    let text = std::fs::read_to_string(&stored).unwrap();
    assert!(text.starts_with("; kernel main_k0\n"), "{text}");
    assert_eq!(text.matches("; kernel").count(), 1, "{text}");

    let out = ogham(&["test", f]);
    assert_eq!(code(&out), 0);
    assert!(
        stdout(&out).contains("2 passed, 0 failed, 0 skipped"),
        "{}",
        stdout(&out)
    );

    std::fs::write(&stored, text.replacen("function", "changed", 1)).unwrap();
    let out = ogham(&["test", f]);
    assert_eq!(code(&out), 1);
    assert!(stdout(&out).contains("differs from"), "{}", stdout(&out));
    assert!(pending.is_file());
    let out = ogham(&["test", "--accept", f]);
    assert_eq!(code(&out), 0);
    assert!(!pending.exists());
    assert_eq!(std::fs::read_to_string(&stored).unwrap(), text);

    write(
        &dir,
        "bad.og",
        &std::fs::read_to_string(&file)
            .unwrap()
            .replace("main_k0", "main_k9"),
    );
    let out = ogham(&["test", dir.join("bad.og").to_str().unwrap()]);
    assert_eq!(code(&out), 1);
    assert!(
        stdout(&out).contains("no kernel `main_k9`; the kernels are main_k0"),
        "{}",
        stdout(&out)
    );
}
