use super::*;

fn rows(rows: &[&[f32]]) -> Embeddings {
    Embeddings::new(rows[0].len(), rows.iter().flat_map(|r| r.iter().copied()).collect())
}

#[test]
fn distance_curve_has_one_entry_per_gap() {
    let v = rows(&[&[1.0, 0.0], &[1.0, 0.0], &[0.0, 1.0], &[0.0, 0.0]]);
    let d = distance_curve(&v);
    assert_eq!(d.len(), 3);
    assert!(d[0].abs() < 1e-9);
    assert!((d[1] - 1.0).abs() < 1e-9);
    assert_eq!(d[2], 1.0, "a zero vector is at distance 1");
}

#[test]
fn smoothing_averages_neighbours_and_renormalises() {
    let v = rows(&[&[1.0, 0.0], &[0.0, 1.0], &[1.0, 0.0]]);
    let s = smooth_neighbours(&v, 1);
    let h = std::f32::consts::FRAC_1_SQRT_2;
    let want = [[h, h], [2.0 / 5f32.sqrt(), 1.0 / 5f32.sqrt()], [h, h]];
    for (i, w) in want.iter().enumerate() {
        for (a, b) in s.row(i).iter().zip(w) {
            assert!((a - b).abs() < 1e-6, "row {i}: {:?} vs {w:?}", s.row(i));
        }
    }
}

#[test]
fn smoothing_with_a_wide_window_equals_the_mean_of_all() {
    let v = rows(&[&[1.0, 0.0], &[0.0, 1.0], &[0.0, 1.0]]);
    let s = smooth_neighbours(&v, 5);
    for i in 0..3 {
        assert!((s.row(i)[0] - 1.0 / 5f32.sqrt()).abs() < 1e-6);
    }
    assert_eq!(smooth_neighbours(&v, 0), v);
}
