//! "Did you mean": the known name closest to a misspelt one, for errors about names (CQL
//! filters, tag-query fields). Here because every crate that reports names depends on this one.

/// The known name closest to `w` (at most two edits away, and fewer than half its letters),
/// for an error's "did you mean".
pub fn did_you_mean<'a>(w: &str, names: impl Iterator<Item = &'a str>) -> Option<&'a str> {
    let limit = (w.chars().count() / 2).clamp(1, 2);
    names
        .map(|n| (edit_distance(w, n), n))
        .filter(|(d, _)| *d <= limit)
        .min_by_key(|(d, n)| (*d, n.len()))
        .map(|(_, n)| n)
}

/// Levenshtein distance, with a swap of neighbours counting as one edit (`flipcolr`).
fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut prev2 = vec![0usize; b.len() + 1];
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for i in 1..=a.len() {
        let mut cur = vec![i; b.len() + 1];
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            cur[j] = (prev[j] + 1).min(cur[j - 1] + 1).min(prev[j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                cur[j] = cur[j].min(prev2[j - 2] + 1);
            }
        }
        prev2 = std::mem::replace(&mut prev, cur);
    }
    prev[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn near_names_only() {
        let names = ["player", "white", "black", "eco"];
        assert_eq!(did_you_mean("plyer", names.iter().copied()), Some("player"));
        assert_eq!(did_you_mean("whtie", names.iter().copied()), Some("white"));
        assert_eq!(did_you_mean("zzzzzz", names.iter().copied()), None);
        assert_eq!(edit_distance("flipcolr", "flipcolor"), 1);
    }
}
