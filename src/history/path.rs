//! Where the history database lives.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// `explicit` (--history-db), else $IOGAUGE_HISTORY, else $XDG_DATA_HOME/iogauge/history.db,
/// else ~/.local/share/iogauge/history.db (the XDG base directory default).
pub(crate) fn location(explicit: Option<&Path>) -> Result<PathBuf, String> {
    let var = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty());
    resolve(
        explicit,
        var("IOGAUGE_HISTORY"),
        var("XDG_DATA_HOME"),
        var("HOME"),
    )
}

/// Whether the history is at its default place (neither --history-db nor $IOGAUGE_HISTORY):
/// only then are missing directories created, as a place the user named is theirs to make.
pub(crate) fn is_default(explicit: Option<&Path>) -> bool {
    explicit.is_none() && std::env::var_os("IOGAUGE_HISTORY").is_none_or(|v| v.is_empty())
}

fn resolve(
    explicit: Option<&Path>,
    env: Option<OsString>,
    xdg: Option<OsString>,
    home: Option<OsString>,
) -> Result<PathBuf, String> {
    if let Some(p) = explicit {
        return Ok(p.to_path_buf());
    }
    if let Some(p) = env {
        return Ok(PathBuf::from(p));
    }
    // XDG says a relative $XDG_DATA_HOME is invalid and is to be ignored.
    let base = match xdg.map(PathBuf::from).filter(|p| p.is_absolute()) {
        Some(x) => x,
        None => match home {
            Some(h) => PathBuf::from(h).join(".local/share"),
            None => {
                return Err(
                    "no place for the history: HOME is not set; name a file with --history-db \
                     or IOGAUGE_HISTORY"
                        .into(),
                )
            }
        },
    };
    Ok(base.join("iogauge").join("history.db"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_flag_then_the_variable_then_xdg_then_home() {
        let os = |s: &str| Some(OsString::from(s));
        let p = |s: &str| PathBuf::from(s);
        assert_eq!(
            resolve(Some(Path::new("a.db")), os("/e.db"), os("/x"), os("/h")),
            Ok(p("a.db"))
        );
        assert_eq!(
            resolve(None, os("/e.db"), os("/x"), os("/h")),
            Ok(p("/e.db"))
        );
        assert_eq!(
            resolve(None, None, os("/x"), os("/h")),
            Ok(p("/x/iogauge/history.db"))
        );
        assert_eq!(
            resolve(None, None, os("rel"), os("/h")),
            Ok(p("/h/.local/share/iogauge/history.db"))
        );
        assert_eq!(
            resolve(None, None, None, os("/h")),
            Ok(p("/h/.local/share/iogauge/history.db"))
        );
        assert!(resolve(None, None, None, None)
            .unwrap_err()
            .contains("HOME is not set"));
    }
}
