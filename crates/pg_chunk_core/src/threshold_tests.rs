use super::*;

#[test]
fn percentile_interpolates_like_numpy() {
    let v = [0.1, 0.4, 0.2, 0.3];
    assert!((percentile(&v, 50.0) - 0.25).abs() < 1e-12);
    assert!((percentile(&v, 0.0) - 0.1).abs() < 1e-12);
    assert!((percentile(&v, 100.0) - 0.4).abs() < 1e-12);
    assert!((percentile(&v, 92.0) - 0.376).abs() < 1e-12);
}

#[test]
fn each_rule_finds_the_spike() {
    let curve = [0.1, 0.12, 0.9, 0.11, 0.1, 0.13, 0.1, 0.09, 0.11, 0.1];
    let rules = [
        Threshold::Percentile(92.0),
        Threshold::Similarity(0.5),
        Threshold::StdDev(2.0),
        Threshold::Interquartile(1.5),
    ];
    for rule in rules {
        let cuts = find_cuts(&curve, rule);
        let at: Vec<usize> = (0..curve.len()).filter(|&g| cuts.is_cut[g]).collect();
        assert_eq!(at, vec![2], "{rule:?} threshold {}", cuts.threshold);
    }
    // The gradient rises into the spike: the gap before it is where distance climbs.
    let cuts = find_cuts(&curve, Threshold::Gradient(95.0));
    assert_eq!((0..curve.len()).filter(|&g| cuts.is_cut[g]).collect::<Vec<_>>(), vec![1]);
}

#[test]
fn flat_and_empty_curves_have_no_cuts() {
    let flat = [0.3; 6];
    for rule in [Threshold::Percentile(50.0), Threshold::StdDev(0.0), Threshold::Gradient(10.0)] {
        assert!(find_cuts(&flat, rule).is_cut.iter().all(|c| !c), "{rule:?}");
    }
    assert!(find_cuts(&[], Threshold::Percentile(92.0)).is_cut.is_empty());
}

#[test]
fn similarity_cuts_every_gap_below_the_value() {
    let cuts = find_cuts(&[0.1, 0.3, 0.2, 0.5], Threshold::Similarity(0.75));
    assert_eq!(cuts.is_cut, vec![false, true, false, true]);
    assert!((cuts.threshold - 0.25).abs() < 1e-12);
}
