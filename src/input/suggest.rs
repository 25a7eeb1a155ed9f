//! "Did you mean …": the nearest known name to a misspelt one.

/// Keys longer than this get no suggestion: no known name is near that long, and the distance
/// costs the key's length times each candidate's (a 1 MB option name took a minute; fuzzing).
const MAX_KEY: usize = 64;

/// The candidate closest to `key`, if it is close enough to be a likely typo.
pub(crate) fn closest<'a>(
    key: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    let len = key.chars().count();
    if len > MAX_KEY {
        return None;
    }
    let limit = (len / 3).max(2);
    candidates
        .into_iter()
        // The length difference is a lower bound of the distance: skip the matrix when it is
        // already too far.
        .filter(|c| c.chars().count().abs_diff(len) <= limit)
        .map(|c| (edit_distance(key, c), c))
        .filter(|&(d, _)| d <= limit)
        .min_by_key(|&(d, _)| d)
        .map(|(_, c)| c)
}

/// Levenshtein distance, counting a swap of two neighbours as one edit (typos are often swaps).
pub(crate) fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let w = b.len() + 1;
    let mut d = vec![0usize; (a.len() + 1) * w];
    for (i, row) in d.chunks_mut(w).enumerate() {
        row[0] = i;
    }
    for (j, cell) in d.iter_mut().take(w).enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut v = (d[(i - 1) * w + j] + 1)
                .min(d[i * w + j - 1] + 1)
                .min(d[(i - 1) * w + j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                v = v.min(d[(i - 2) * w + j - 2] + 1);
            }
            d[i * w + j] = v;
        }
    }
    d[a.len() * w + b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edit_distance_counts_swaps_once() {
        assert_eq!(edit_distance("abc", "abc"), 0);
        assert_eq!(edit_distance("abc", "acb"), 1);
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
    }

    #[test]
    fn closest_needs_to_be_close() {
        let names = ["fileSize", "operationSize", "directory"];
        assert_eq!(closest("filesize", names), Some("fileSize"));
        assert_eq!(closest("operationsize", names), Some("operationSize"));
        assert_eq!(closest("color", names), None);
    }

    #[test]
    fn a_long_key_gets_no_suggestion_and_costs_nothing() {
        let key = "x".repeat(1 << 20);
        let start = std::time::Instant::now();
        assert_eq!(closest(&key, ["fileSize"]), None);
        let near = format!("{}fileSize", "x".repeat(MAX_KEY - 8));
        assert_eq!(closest(&near, ["fileSize"]), None);
        assert!(start.elapsed() < std::time::Duration::from_millis(100));
    }
}
