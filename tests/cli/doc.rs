//! `ogham doc`: the standard library's reference (every module a page, signatures with their
//! sizes, doc text, links that resolve to anchors, the same bytes twice), a library given as a
//! directory with links across its modules, and the errors (a library that does not type-check
//! gets `ogham check`'s diagnostics and no pages; an output path that is a file is named).

use super::{assert_user_error, code, ogham, scratch, stderr, stdout, write};
use regex::Regex;
use std::collections::BTreeMap;
use std::path::Path;

/// The `.html` pages of `dir`, by file name.
fn read_pages(dir: &Path) -> BTreeMap<String, String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "html"))
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read_to_string(&p).unwrap())
        })
        .collect()
}

/// The text of a piece of HTML: tags removed, the entities the generator writes decoded.
fn text(html: &str) -> String {
    Regex::new("<[^>]*>")
        .unwrap()
        .replace_all(html, "")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&amp;", "&")
}

/// Every link of every page: `(page, href)`; asserts each points at an existing page and, with
/// a fragment, at an element with that id there.
fn check_links(pages: &BTreeMap<String, String>) -> Vec<(String, String)> {
    let href = Regex::new(r#"href="([^"]*)""#).unwrap();
    let mut links = Vec::new();
    for (name, html) in pages {
        for c in href.captures_iter(html) {
            let target = c[1].replace("&#39;", "'");
            let (file, anchor) = target.split_once('#').unwrap_or((&target, ""));
            let file = if file.is_empty() { name.as_str() } else { file };
            let page = pages
                .get(file)
                .unwrap_or_else(|| panic!("{name}: link to a missing page: {target}"));
            if !anchor.is_empty() {
                let id = format!("id=\"{}\"", anchor.replace('\'', "&#39;"));
                assert!(
                    page.contains(&id),
                    "{name}: link to a missing anchor: {target}"
                );
            }
            links.push((name.clone(), target.clone()));
        }
    }
    links
}

#[test]
fn the_standard_library_reference() {
    let dir = scratch("doc-stdlib");
    let out = dir.join("ref");
    let run = ogham(&["doc", "-o", out.to_str().unwrap()]);
    assert_eq!(code(&run), 0, "stderr: {}", stderr(&run));
    let modules = ogham::compiler::stdlib::MODULES.len();
    assert!(
        stdout(&run).contains(&format!("ok: {modules} modules documented")),
        "{}",
        stdout(&run)
    );
    let pages = read_pages(&out);
    for (module, _) in ogham::compiler::stdlib::MODULES {
        let page = format!("{}.html", module.trim_start_matches("lib/"));
        assert!(pages.contains_key(&page), "no page {page}");
        assert!(pages["index.html"].contains(&format!("href=\"{page}\"")));
    }

    // A signature with its sizes and its doc text; the index lists the function.
    let stats = text(&pages["stats.html"]);
    assert!(
        stats.contains("def nanmedian ('t: float) [n] (xs: [n]t) : t"),
        "{stats}"
    );
    assert!(stats.contains("The median of the valid (non-NaN) elements of xs"));
    assert!(pages["index.html"].contains("href=\"stats.html#def-nanmedian\""));
    // The module's header comment, rendered.
    assert!(stats.contains("Statistics of series: sorting"));

    // Links resolve; the stats module links into the module it imports (its doc text names
    // `filter_nan_with_keys`, defined in lib/segmented).
    let links = check_links(&pages);
    assert!(
        links.iter().any(|(page, href)| page == "stats.html"
            && href == "segmented.html#def-filter_nan_with_keys")
    );
    // A type alias in a signature links to its definition.
    assert!(
        pages["bfast.html"].contains("href=\"bfast.html#type-bfast_pixel\""),
        "no link to bfast_pixel"
    );

    // The same bytes again.
    let again = dir.join("again");
    assert_eq!(
        code(&ogham(&["doc", "--stdlib", "-o", again.to_str().unwrap()])),
        0
    );
    assert_eq!(pages, read_pages(&again));
}

#[test]
fn a_library_directory_links_across_its_modules() {
    let dir = scratch("doc-dir");
    let lib = dir.join("mylib");
    std::fs::create_dir_all(&lib).unwrap();
    write(
        &lib,
        "shapes.og",
        "-- | Shapes.\n\n-- | A point: <x, y> & more.\ntype point = {x: f32, y: f32}\n\n\
         -- | The origin.\ndef origin : point = {x = 0, y = 0}\n",
    );
    write(
        &lib,
        "moves.og",
        "-- | Moving **shapes**.\nimport \"shapes\"\n\n-- | Moves `p` by `d`; see `origin` and <script>alert(1)</script>.\n\
         def shift (p: point) (d: f32) = {x = p.x + d, y = p.y}\n\n\
         -- | Swaps `a` and `b`, which are not `shift`.\n\
         def swap (a, b) = (b, a)\n",
    );
    let out = dir.join("ref");
    let run = ogham(&["doc", lib.to_str().unwrap(), "-o", out.to_str().unwrap()]);
    assert_eq!(code(&run), 0, "stderr: {}", stderr(&run));
    let pages = read_pages(&out);
    assert_eq!(
        pages.keys().collect::<Vec<_>>(),
        ["index.html", "moves.html", "shapes.html"]
    );
    let moves = &pages["moves.html"];
    // The inferred result type, the alias linked across modules, the comment escaped.
    assert!(
        text(moves).contains("def shift (p: point) (d: f32) : {x: f32, y: f32}"),
        "{moves}"
    );
    assert!(moves.contains("<a href=\"shapes.html#type-point\">point</a>"));
    // Type parameters that inference introduced; the parameters are never links.
    assert!(
        text(moves).contains("def swap 'a 'b ((a, b): (a, b)) : (b, a)"),
        "{moves}"
    );
    assert!(moves.contains(
        "Swaps <code>a</code> and <code>b</code>, which are not \
         <code><a href=\"moves.html#def-shift\">shift</a></code>."
    ));
    assert!(moves.contains("<a href=\"shapes.html#def-origin\">origin</a>"));
    assert!(moves.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
    // The module's comment (right above an import) heads its page and the index.
    assert!(moves.contains("<p>Moving <strong>shapes</strong>.</p>"));
    assert!(pages["index.html"].contains("Moving <strong>shapes</strong>."));
    assert!(!moves.contains("<script>"));
    assert!(pages["shapes.html"].contains("A point: &lt;x, y&gt; &amp; more."));
    check_links(&pages);
}

#[test]
fn errors_are_check_s_diagnostics_or_name_the_path() {
    let dir = scratch("doc-errors");
    let bad = write(
        &dir,
        "bad.og",
        "-- | Adds.\ndef f (x: f32) (k: i64) : f32 = x + k\n",
    );
    let out = dir.join("ref");
    let doc = ogham(&["doc", bad.to_str().unwrap(), "-o", out.to_str().unwrap()]);
    let check = ogham(&["check", bad.to_str().unwrap()]);
    assert_eq!(code(&doc), 1);
    assert!(stderr(&doc).contains("error[E0301]"), "{}", stderr(&doc));
    assert_eq!(stderr(&doc), stderr(&check));
    assert!(
        !out.exists(),
        "pages written for a library that does not check"
    );

    let good = write(&dir, "good.og", "def g (x: f32) = x\n");
    let file = write(&dir, "file", "not a directory\n");
    let doc = ogham(&["doc", good.to_str().unwrap(), "-o", file.to_str().unwrap()]);
    assert_user_error(&doc, &format!("`{}`", file.display()));

    let empty = dir.join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let doc = ogham(&["doc", empty.to_str().unwrap(), "-o", out.to_str().unwrap()]);
    assert_user_error(&doc, "has no `.og` files");
}
