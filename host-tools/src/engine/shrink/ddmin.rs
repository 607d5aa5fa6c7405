//! Delta debugging over a schedule's entries.

/// Delta debugging: `ddmin` of Zeller and Hildebrandt, "Simplifying and Isolating
/// Failure-Inducing Input" (IEEE TSE 28(2), 2002), Figure 5. `fails(c)` tells whether the
/// subset `c` (items kept in their order) still shows the failure; `input` must. Returns a
/// 1-minimal subset: removing any one item of it makes the failure go. The empty subset is
/// tried first (a finding may need no entry at all), which the paper's version assumes passes.
pub fn ddmin<T: Clone>(input: Vec<T>, fails: &mut impl FnMut(&[T]) -> bool) -> Vec<T> {
    if input.is_empty() || fails(&[]) {
        return Vec::new();
    }
    let mut c = input;
    let mut n = 2usize;
    while c.len() >= 2 {
        let chunks = split(&c, n);
        // Reduce to a subset.
        if let Some(s) = chunks.iter().find(|s| fails(s)) {
            c = s.clone();
            n = 2;
            continue;
        }
        // Reduce to a complement (with two chunks, the complements are the subsets).
        let complement = |k: usize| -> Vec<T> {
            chunks
                .iter()
                .enumerate()
                .filter(|(j, _)| *j != k)
                .flat_map(|(_, s)| s.iter().cloned())
                .collect()
        };
        if n > 2
            && let Some(k) = (0..chunks.len()).find(|&k| fails(&complement(k)))
        {
            c = complement(k);
            n = (n - 1).max(2);
            continue;
        }
        if n >= c.len() {
            break;
        }
        n = (2 * n).min(c.len());
    }
    c
}

/// `c` in `n` chunks of nearly equal size, in order.
fn split<T: Clone>(c: &[T], n: usize) -> Vec<Vec<T>> {
    let mut out = Vec::with_capacity(n);
    let mut start = 0;
    for k in 0..n {
        let end = start + (c.len() - start) / (n - k);
        out.push(c[start..end].to_vec());
        start = end;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ddmin_finds_a_one_minimal_subset() {
        // The failure needs items 3 and 7 together.
        let mut tests = 0;
        let got = ddmin((0..10).collect(), &mut |c: &[i32]| {
            tests += 1;
            c.contains(&3) && c.contains(&7)
        });
        assert_eq!(got, [3, 7]);
        assert!(tests < 40, "{tests}");
        // Needs nothing: the empty subset.
        assert!(ddmin(vec![1, 2, 3], &mut |_: &[i32]| true).is_empty());
        // Needs everything.
        assert_eq!(
            ddmin(vec![1, 2, 3], &mut |c: &[i32]| c.len() == 3),
            [1, 2, 3]
        );
    }
}
