//! Outcome messages are Go templates over troubleshoot's result: `{{ .P99 }}` prints a Go duration,
//! `{{ .String }}` the whole table. The forms real specs use are `{{ .Field }}` with any spacing;
//! anything else is refused when the spec is loaded, never rendered as a blank.

pub(crate) use crate::verdict::criteria::{Field, Part, Template};
use crate::verdict::criteria::{Stat, PERCENTILES};

fn field(name: &str) -> Option<Field> {
    Some(match name {
        "String" => Field::String,
        "Min" => Field::Stat(Stat::Min),
        "Max" => Field::Stat(Stat::Max),
        "Average" => Field::Stat(Stat::Average),
        "IOPS" => Field::Stat(Stat::Iops),
        _ => Field::Stat(Stat::P(PERCENTILES.iter().position(|(n, _)| *n == name)?)),
    })
}

pub(crate) fn parse(text: &str) -> Result<Template, String> {
    let mut parts = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find("{{") {
        if start > 0 {
            parts.push(Part::Text(rest[..start].to_string()));
        }
        let after = &rest[start + 2..];
        let end = after
            .find("}}")
            .ok_or_else(|| format!("'{{{{' without a closing '}}}}' in '{text}'"))?;
        let inner = after[..end].trim_matches(|c: char| c == ' ' || c == '-');
        let name = inner
            .strip_prefix('.')
            .filter(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_alphanumeric()));
        let f = name.and_then(field).ok_or_else(|| {
            format!(
                "unknown placeholder '{{{{ {inner} }}}}'; expected one of .Min, .Max, .Average, \
                 .P1 … .P9999, .IOPS or .String"
            )
        })?;
        parts.push(Part::Field(f));
        rest = &after[end + 2..];
    }
    if !rest.is_empty() {
        parts.push(Part::Text(rest.to_string()));
    }
    Ok(Template { parts })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_with_any_spacing() {
        let t = parse("p99 is {{ .P99 }}, max {{.Max}}{{- .Average -}}!").unwrap();
        assert_eq!(
            t.parts,
            vec![
                Part::Text("p99 is ".into()),
                Part::Field(Field::Stat(Stat::P(12))),
                Part::Text(", max ".into()),
                Part::Field(Field::Stat(Stat::Max)),
                Part::Field(Field::Stat(Stat::Average)),
                Part::Text("!".into()),
            ]
        );
        assert_eq!(
            parse("all: {{ .String }}").unwrap().parts[1],
            Part::Field(Field::String)
        );
        assert_eq!(parse("").unwrap().parts, vec![]);
        for (i, (name, _)) in PERCENTILES.iter().enumerate() {
            let t = parse(&format!("{{{{ .{name} }}}}")).unwrap();
            assert_eq!(t.parts, vec![Part::Field(Field::Stat(Stat::P(i)))]);
        }
    }

    #[test]
    fn unknown_placeholders_and_other_forms_are_errors() {
        assert_eq!(
            parse("{{ .P98 }}").unwrap_err(),
            "unknown placeholder '{{ .P98 }}'; expected one of .Min, .Max, .Average, .P1 … .P9999, \
             .IOPS or .String"
        );
        assert!(parse("{{ if .P99 }}x{{ end }}").is_err());
        assert!(parse("{{ .p99 }}").is_err());
        assert_eq!(
            parse("oops {{ .P99").unwrap_err(),
            "'{{' without a closing '}}' in 'oops {{ .P99'"
        );
    }
}
