//! The page skeleton: one self-contained HTML file (inline CSS, no scripts, no fonts, nothing
//! fetched), HTML escaping, and the small pieces every document kind uses (verdict badges,
//! tables, values with units).

use crate::report::document::CheckVerdict;
use crate::report::units::broken_down;

/// Escapes text for HTML element content and quoted attribute values.
pub(crate) fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
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

/// System fonts only: a web font would be a download, and the page must work offline.
const CSS: &str = r#"
:root{--fg:#1f2328;--muted:#59636e;--line:#d1d9e0;--bg:#fff;--soft:#f6f8fa;
--pass:#1a7f37;--warn:#9a6700;--fail:#cf222e;--other:#59636e;
--s0:#0969da;--s1:#cf222e;--s2:#8250df;--s3:#bf8700;--s4:#1a7f37}
*{box-sizing:border-box}
body{margin:0 auto;max-width:1100px;padding:16px;font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);background:var(--bg)}
h1{font-size:1.5em;margin:.2em 0 .4em}h2{font-size:1.25em;margin:1.6em 0 .4em;padding-bottom:.2em;border-bottom:1px solid var(--line)}
h3{font-size:1.05em;margin:1.2em 0 .3em}h4{font-size:1em;margin:1em 0 .3em}
p{margin:.4em 0}.muted{color:var(--muted)}
code,pre{font:13px/1.4 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
pre{background:var(--soft);border:1px solid var(--line);border-radius:6px;padding:10px;overflow-x:auto;white-space:pre}
.verdict{display:flex;flex-wrap:wrap;align-items:center;gap:12px;padding:12px 16px;border-radius:8px;border:2px solid var(--other);margin:8px 0 12px}
.verdict .big{font-size:2em;font-weight:700;letter-spacing:.04em}
.verdict.pass{border-color:var(--pass)}.verdict.warn{border-color:var(--warn)}.verdict.fail{border-color:var(--fail)}
.v{display:inline-block;min-width:3.6em;text-align:center;font-weight:700;font-size:.85em;padding:1px 6px;border-radius:4px;color:#fff;background:var(--other)}
.v.pass{background:var(--pass)}.v.warn{background:var(--warn)}.v.fail{background:var(--fail)}
.big.pass{color:var(--pass)}.big.warn{color:var(--warn)}.big.fail{color:var(--fail)}
.scroll{overflow-x:auto;max-width:100%}
table{border-collapse:collapse;margin:6px 0;font-size:.92em}
th,td{border:1px solid var(--line);padding:4px 8px;text-align:left;vertical-align:top}
th{background:var(--soft)}td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
dl.facts{display:grid;grid-template-columns:max-content 1fr;gap:2px 14px;margin:6px 0}
dl.facts dt{color:var(--muted)}dl.facts dd{margin:0;overflow-wrap:anywhere}
ul.notes{margin:.3em 0;padding-left:1.3em}ul.notes li{margin:.2em 0}
.charts{display:grid;grid-template-columns:repeat(auto-fill,minmax(min(100%,470px),1fr));gap:14px}
figure.chart{margin:0;padding:8px;border:1px solid var(--line);border-radius:6px;break-inside:avoid}
figure.chart svg{width:100%;height:auto;display:block}
div.legend{font-size:.85em}
figcaption{font-size:.88em;color:var(--muted);margin-top:4px}
details{margin-top:4px;font-size:.88em}summary{cursor:pointer;color:var(--muted)}
svg text{font:13px system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;fill:#1f2328}
svg .title{font-size:15px;font-weight:600}svg .axis{stroke:#59636e;stroke-width:1;fill:none}
svg .halo{paint-order:stroke;stroke:#fff;stroke-width:3px;stroke-linejoin:round}
svg .grid{stroke:#d1d9e0;stroke-width:1;fill:none}svg .lbl{fill:#59636e}
svg .line{fill:none;stroke-width:2;stroke-linejoin:round}
svg .ref{stroke-width:1.5;stroke-dasharray:6 4;fill:none}
svg .threshold{stroke:var(--fail)}svg .mean{stroke:#59636e}
svg .bar{fill:#8c959f}svg .bar.hi{fill:var(--s0)}svg .hist{fill:var(--s0)}
svg .c0{stroke:var(--s0);fill:var(--s0)}svg .c1{stroke:var(--s1);fill:var(--s1)}svg .c2{stroke:var(--s2);fill:var(--s2)}
svg .c3{stroke:var(--s3);fill:var(--s3)}svg .c4{stroke:var(--s4);fill:var(--s4)}svg .line.c0,svg .line.c1,svg .line.c2,svg .line.c3,svg .line.c4{fill:none}
.key{display:inline-block;width:14px;height:3px;vertical-align:middle;margin:0 4px 0 10px}
.key.c0{background:var(--s0)}.key.c1{background:var(--s1)}.key.c2{background:var(--s2)}.key.c3{background:var(--s3)}.key.c4{background:var(--s4)}
.key.threshold{background:var(--fail)}.key.mean{background:#59636e}
footer{margin-top:2em;font-size:.85em;color:var(--muted)}
@media (max-width:600px){body{padding:8px;font-size:14px}table.wide{min-width:640px}.verdict .big{font-size:1.5em}th,td{padding:3px 5px}}
@media print{body{max-width:none;padding:0;font-size:11pt}details,summary{display:none}
h2{break-after:avoid}.charts{grid-template-columns:1fr 1fr}pre{white-space:pre-wrap}a{color:inherit}}
"#;

/// The whole page around `body`.
pub(crate) fn page(title: &str, body: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{}</title>\n<style>{CSS}</style>\n</head>\n<body>\n{body}\
         <footer>Written by iogauge. Self-contained: no scripts, nothing loaded from elsewhere; \
         each chart's numbers are in its “Data” table.</footer>\n</body>\n</html>\n",
        esc(title)
    )
}

/// The CSS class of a verdict's colour.
pub(crate) fn verdict_class(v: CheckVerdict) -> &'static str {
    match v {
        CheckVerdict::Pass => "pass",
        CheckVerdict::Warn => "warn",
        CheckVerdict::Fail | CheckVerdict::Error => "fail",
        CheckVerdict::Interrupted | CheckVerdict::Skipped => "other",
    }
}

/// `PASS` in its colour; the word stays, so the page reads without colour (print, screen readers).
pub(crate) fn badge(v: CheckVerdict) -> String {
    format!("<span class=\"v {}\">{}</span>", verdict_class(v), v.word())
}

/// The big verdict box at the top of a page; `about` is HTML.
pub(crate) fn verdict_box(v: CheckVerdict, about: &str) -> String {
    let c = verdict_class(v);
    format!(
        "<div class=\"verdict {c}\"><span class=\"big {c}\">{}</span><span>{about}</span></div>\n",
        v.word()
    )
}

/// A table; `head` is text, every cell is HTML already (escaped by the caller).
pub(crate) fn table(head: &[&str], rows: &[Vec<String>]) -> String {
    let mut s = String::from("<div class=\"scroll\"><table>\n<thead><tr>");
    for h in head {
        s.push_str(&format!("<th>{}</th>", esc(h)));
    }
    s.push_str("</tr></thead>\n<tbody>\n");
    for r in rows {
        s.push_str("<tr>");
        for c in r {
            s.push_str(c);
        }
        s.push_str("</tr>\n");
    }
    s.push_str("</tbody></table></div>\n");
    s
}

/// A text cell.
pub(crate) fn td(text: &str) -> String {
    format!("<td>{}</td>", esc(text))
}

/// A right-aligned number cell.
pub(crate) fn td_num(text: &str) -> String {
    format!("<td class=\"num\">{}</td>", esc(text))
}

/// A cell holding HTML made by this module.
pub(crate) fn td_html(html: &str) -> String {
    format!("<td>{html}</td>")
}

/// Label/value pairs (`<dl>`); values are text, pairs with an empty value are left out.
pub(crate) fn facts(pairs: &[(&str, String)]) -> String {
    let mut s = String::from("<dl class=\"facts\">\n");
    for (k, v) in pairs {
        if !v.is_empty() {
            s.push_str(&format!("<dt>{}</dt><dd>{}</dd>\n", esc(k), esc(v)));
        }
    }
    s.push_str("</dl>\n");
    s
}

/// A bulleted list of text items; empty when there are none.
pub(crate) fn notes(items: &[String]) -> String {
    if items.is_empty() {
        return String::new();
    }
    let mut s = String::from("<ul class=\"notes\">\n");
    for i in items {
        s.push_str(&format!("<li>{}</li>\n", esc(i)));
    }
    s.push_str("</ul>\n");
    s
}

/// Three significant digits, without trailing zeros: 0.27, 10.9, 254, 4573.
pub(crate) fn sig3(v: f64) -> String {
    let a = v.abs();
    let s = if a >= 100.0 || a == 0.0 {
        format!("{v:.0}")
    } else if a >= 10.0 {
        format!("{v:.1}")
    } else if a >= 1.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.3}")
    };
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// A latency in nanoseconds in the unit that reads best: `850 ns`, `27.5 µs`, `10.9 ms`, `1.2 s`.
pub(crate) fn fmt_ns(ns: f64) -> String {
    let a = ns.abs();
    if a >= 1e9 {
        format!("{} s", sig3(ns / 1e9))
    } else if a >= 1e6 {
        format!("{} ms", sig3(ns / 1e6))
    } else if a >= 1e3 {
        format!("{} µs", sig3(ns / 1e3))
    } else {
        format!("{} ns", sig3(ns))
    }
}

/// A value in a metric's unit (`ns` is shown as a time).
pub(crate) fn fmt_unit(v: f64, unit: &str) -> String {
    if unit == "ns" {
        fmt_ns(v)
    } else {
        format!("{} {unit}", sig3(v))
    }
}

/// Bandwidth given in KiB/s (fio's unit), shown in KiB/s or MiB/s.
pub(crate) fn fmt_kib_s(kib: f64) -> String {
    if kib.abs() >= 1024.0 {
        format!("{} MiB/s", sig3(kib / 1024.0))
    } else {
        format!("{} KiB/s", sig3(kib))
    }
}

/// A count or rate without a unit.
pub(crate) fn fmt_plain(v: f64) -> String {
    sig3(v)
}

/// Seconds, for time axes.
pub(crate) fn fmt_s(v: f64) -> String {
    format!("{} s", sig3(v))
}

/// A Unix time as `2026-11-23 16:41:44 UTC`.
pub(crate) fn utc_date(secs: i64) -> Option<String> {
    let t = broken_down(secs, true)?;
    Some(format!(
        "{}-{:02}-{:02} {:02}:{:02}:{:02} UTC",
        t.year,
        t.mon + 1,
        t.mday,
        t.hour,
        t.min,
        t.sec
    ))
}

/// fio options as a command to paste into a shell: one option per line, quoted when needed.
pub(crate) fn command_block(program: &str, options: &[String]) -> String {
    let mut s = String::from(program);
    for o in options {
        s.push_str(" \\\n  ");
        s.push_str(&shell_quote(o));
    }
    format!("<pre><code>{}</code></pre>\n", esc(&s))
}

fn shell_quote(s: &str) -> String {
    let plain = !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_=./,:+%@".contains(c));
    if plain {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaping_covers_markup_and_quotes() {
        assert_eq!(
            esc(r#"<a href="x">&'</a>"#),
            "&lt;a href=&quot;x&quot;&gt;&amp;&#39;&lt;/a&gt;"
        );
    }

    #[test]
    fn values_with_units() {
        assert_eq!(fmt_ns(10_900_309.0), "10.9 ms");
        assert_eq!(fmt_ns(850.0), "850 ns");
        assert_eq!(fmt_ns(27_500.0), "27.5 µs");
        assert_eq!(fmt_ns(2e9), "2 s");
        assert_eq!(fmt_unit(254.05, "IOPS"), "254 IOPS");
        assert_eq!(fmt_kib_s(2048.0), "2 MiB/s");
        assert_eq!(utc_date(0).as_deref(), Some("1970-01-01 00:00:00 UTC"));
    }

    #[test]
    fn commands_are_quoted_for_a_shell() {
        let c = command_block("fio", &["--name=a b".into(), "--rw=write".into()]);
        assert_eq!(
            c,
            "<pre><code>fio \\\n  &#39;--name=a b&#39; \\\n  --rw=write</code></pre>\n"
        );
    }
}
