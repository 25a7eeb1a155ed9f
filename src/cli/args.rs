//! Options of iogauge's own commands (`check`, `preflight`): `--key value` or `--key=value`.

pub struct Flags<'a> {
    it: std::slice::Iter<'a, String>,
}

/// One argument: its key (`--dir`, or the whole word for a positional one) and an inline value.
pub struct Flag<'a> {
    pub key: &'a str,
    pub arg: &'a String,
    inline: Option<&'a str>,
}

impl<'a> Flags<'a> {
    pub fn new(args: &'a [String]) -> Self {
        Flags { it: args.iter() }
    }

    pub fn next_flag(&mut self) -> Option<Flag<'a>> {
        let arg = self.it.next()?;
        Some(match arg.split_once('=') {
            Some((k, v)) if k.starts_with("--") => Flag {
                key: k,
                arg,
                inline: Some(v),
            },
            _ => Flag {
                key: arg,
                arg,
                inline: None,
            },
        })
    }

    /// The flag's value: after `=`, or the next argument. `eg` is shown when it is missing.
    pub fn value(&mut self, f: &Flag, eg: &str) -> Result<String, String> {
        match f.inline {
            Some(v) => Ok(v.to_string()),
            None => self
                .it
                .next()
                .cloned()
                .ok_or_else(|| format!("{k} needs a value, e.g. {k} {eg}", k = f.key)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inline_and_separate_values() {
        let args: Vec<String> = ["--dir=/d", "--scale", "0.1", "etcd", "--format"]
            .map(String::from)
            .to_vec();
        let mut f = Flags::new(&args);
        let a = f.next_flag().unwrap();
        assert_eq!((a.key, f.value(&a, "x").unwrap().as_str()), ("--dir", "/d"));
        let b = f.next_flag().unwrap();
        assert_eq!(
            (b.key, f.value(&b, "x").unwrap().as_str()),
            ("--scale", "0.1")
        );
        assert_eq!(f.next_flag().unwrap().key, "etcd");
        let c = f.next_flag().unwrap();
        assert_eq!(
            f.value(&c, "json").unwrap_err(),
            "--format needs a value, e.g. --format json"
        );
        assert!(f.next_flag().is_none());
    }
}
