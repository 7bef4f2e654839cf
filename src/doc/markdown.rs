//! The light markdown of `-- |` doc comments, rendered to HTML for `ogham doc`.
//!
//! Blocks: paragraphs (lines separated by blank lines) and lists (lines starting with `* `,
//! `- ` or `1. `/`1) `; the lines after an item that start with no marker continue it; the
//! lexer has already dropped the comment markers and the indentation). Inline: `` `code` ``
//! spans (any run of backticks closed by a run of the same length, as in CommonMark) and
//! `**strong**`. Nothing else is markup: no raw HTML, no links, no headings.
//!
//! Invariant (the renderer is safe on any comment): every character of the comment reaches
//! the output through [`escape`] or through the caller's `code` function, which gets the raw
//! text of a code span and must escape it itself (`doc::html` escapes and adds links).

/// `text` with the characters that are special in HTML text and attribute values escaped.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// A block of a doc comment.
enum Block {
    Paragraph(Vec<String>),
    /// Items (each its lines) and whether the list is numbered.
    List(Vec<Vec<String>>, bool),
}

/// The text after a list marker (`* x`, `- x`, `3. x`, `3) x`), and whether it is a number.
fn list_item(line: &str) -> Option<(&str, bool)> {
    if let Some(rest) = line.strip_prefix("* ").or_else(|| line.strip_prefix("- ")) {
        return Some((rest, false));
    }
    let digits = line.len() - line.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    let rest = &line[digits..];
    if (1..=9).contains(&digits) {
        let rest = rest
            .strip_prefix(". ")
            .or_else(|| rest.strip_prefix(") "))?;
        return Some((rest, true));
    }
    None
}

fn blocks(text: &str) -> Vec<Block> {
    let mut blocks = Vec::new();
    let mut current: Option<Block> = None;
    for line in text.lines().map(str::trim) {
        if line.is_empty() {
            blocks.extend(current.take());
            continue;
        }
        match (list_item(line), &mut current) {
            (Some((item, numbered)), Some(Block::List(items, n))) if *n == numbered => {
                items.push(vec![item.to_string()]);
            }
            (Some((item, numbered)), _) => {
                blocks.extend(current.take());
                current = Some(Block::List(vec![vec![item.to_string()]], numbered));
            }
            (None, Some(Block::List(items, _))) => {
                items
                    .last_mut()
                    .expect("lists have items")
                    .push(line.to_string());
            }
            (None, Some(Block::Paragraph(lines))) => lines.push(line.to_string()),
            (None, None) => current = Some(Block::Paragraph(vec![line.to_string()])),
        }
    }
    blocks.extend(current);
    blocks
}

/// A doc comment as HTML blocks (`<p>`, `<ul>`, `<ol>`); `code` renders a code span's text.
pub fn render(text: &str, code: &dyn Fn(&str) -> String) -> String {
    let mut out = String::new();
    for block in blocks(text) {
        match block {
            Block::Paragraph(lines) => {
                out.push_str("<p>");
                out.push_str(&inline(&lines.join("\n"), code));
                out.push_str("</p>\n");
            }
            Block::List(items, numbered) => {
                let tag = if numbered { "ol" } else { "ul" };
                out.push_str(&format!("<{tag}>\n"));
                for item in items {
                    out.push_str("<li>");
                    out.push_str(&inline(&item.join("\n"), code));
                    out.push_str("</li>\n");
                }
                out.push_str(&format!("</{tag}>\n"));
            }
        }
    }
    out
}

/// The first paragraph of a doc comment as inline HTML (for summaries), or nothing.
pub fn summary(text: &str, code: &dyn Fn(&str) -> String) -> String {
    let first: Vec<&str> = text
        .lines()
        .map(str::trim)
        .skip_while(|l| l.is_empty())
        .take_while(|l| !l.is_empty())
        .collect();
    inline(&first.join("\n"), code)
}

/// Inline markup: code spans and `**strong**`; everything else escaped.
fn inline(text: &str, code: &dyn Fn(&str) -> String) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(i) = rest.find(['`', '*']) {
        out.push_str(&escape(&rest[..i]));
        rest = &rest[i..];
        if rest.starts_with('`') {
            let ticks = rest.len() - rest.trim_start_matches('`').len();
            let body = &rest[ticks..];
            match closing(body, ticks) {
                Some(end) => {
                    out.push_str("<code>");
                    out.push_str(&code(body[..end].trim()));
                    out.push_str("</code>");
                    rest = &body[end + ticks..];
                }
                None => {
                    out.push_str(&rest[..ticks]);
                    rest = body;
                }
            }
        } else if let Some(end) = strong_end(rest) {
            out.push_str("<strong>");
            out.push_str(&inline(&rest[2..end], code));
            out.push_str("</strong>");
            rest = &rest[end + 2..];
        } else {
            let stars = rest.len() - rest.trim_start_matches('*').len();
            out.push_str(&rest[..stars]);
            rest = &rest[stars..];
        }
    }
    out.push_str(&escape(rest));
    out
}

/// For `text` starting with `**`: where the `**` that closes it starts, if the text between
/// them is not empty and neither starts nor ends with whitespace (so `x ** 2` is no markup).
fn strong_end(text: &str) -> Option<usize> {
    let body = text.strip_prefix("**")?;
    if body.starts_with(|c: char| c.is_whitespace() || c == '*') {
        return None;
    }
    let end = body.find("**")?;
    let inner = &body[..end];
    (!inner.is_empty() && !inner.ends_with(char::is_whitespace)).then_some(end + 2)
}

/// Where the run of exactly `ticks` backticks that closes a code span starts in `body`.
fn closing(body: &str, ticks: usize) -> Option<usize> {
    let mut from = 0;
    while let Some(i) = body[from..].find('`') {
        let start = from + i;
        let run = body[start..].len() - body[start..].trim_start_matches('`').len();
        if run == ticks {
            return Some(start);
        }
        from = start + run;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plain(text: &str) -> String {
        render(text, &|c| escape(c))
    }

    #[test]
    fn everything_is_escaped() {
        let html = plain("Beware <script>alert('x')</script> & `<script>` \"q\"");
        assert_eq!(
            html,
            "<p>Beware &lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; \
             <code>&lt;script&gt;</code> &quot;q&quot;</p>\n"
        );
        assert_eq!(
            plain("**<b>** `` a`<i>`b ``"),
            "<p><strong>&lt;b&gt;</strong> <code>a`&lt;i&gt;`b</code></p>\n"
        );
    }

    #[test]
    fn paragraphs_and_lists() {
        let html = plain("First line\nsecond.\n\n* one\n  more\n* two `x`\n\n1. a\n2. b\nafter");
        assert_eq!(
            html,
            "<p>First line\nsecond.</p>\n<ul>\n<li>one\nmore</li>\n<li>two <code>x</code></li>\n\
             </ul>\n<ol>\n<li>a</li>\n<li>b\nafter</li>\n</ol>\n"
        );
    }

    #[test]
    fn unclosed_markup_stays_text() {
        assert_eq!(plain("a ` b * c ** d"), "<p>a ` b * c ** d</p>\n");
        assert_eq!(plain("x ** y ** z"), "<p>x ** y ** z</p>\n");
        assert_eq!(
            plain("**not** `**`"),
            "<p><strong>not</strong> <code>**</code></p>\n"
        );
        assert_eq!(summary("\nOne\ntwo\n\nthree", &|c| escape(c)), "One\ntwo");
    }
}
