use super::*;

fn close(a: &[f32], b: &[f32]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| (x - y).abs() < 1e-6)
}

#[test]
fn mean_pool_averages_masked_tokens_only() {
    // three tokens of dimension 2, the last one padding
    let tokens = [1.0, 2.0, 3.0, 6.0, 100.0, 100.0];
    assert!(close(&mean_pool(&tokens, &[1, 1, 0], 2), &[2.0, 4.0]));
    assert!(close(&mean_pool(&tokens, &[1, 1, 1], 2), &[104.0 / 3.0, 36.0]));
    assert!(close(&mean_pool(&tokens, &[1, 0, 0], 2), &[1.0, 2.0]));
}

#[test]
fn mean_pool_of_all_padding_is_zero_not_nan() {
    let pooled = mean_pool(&[5.0, 5.0], &[0], 2);
    assert_eq!(pooled, vec![0.0, 0.0]);
}

#[test]
fn cls_pool_takes_the_first_token() {
    assert_eq!(cls_pool(&[1.0, 2.0, 3.0, 4.0], 2), vec![1.0, 2.0]);
}

#[test]
fn normalize_gives_unit_length_and_keeps_zero() {
    for input in [vec![3.0, 4.0], vec![-1.0, 0.0, 0.0], vec![1e-3, 1e-3, 1e-3, 1e-3]] {
        let mut vector = input.clone();
        l2_normalize(&mut vector);
        let norm: f32 = vector.iter().map(|v| v * v).sum::<f32>().sqrt();
        assert!((norm - 1.0).abs() < 1e-6, "{input:?} → {vector:?}");
        // direction kept
        let ratio = vector[0] / input[0];
        assert!(vector.iter().zip(&input).all(|(v, i)| (v - i * ratio).abs() < 1e-6));
    }
    let mut zero = vec![0.0f32; 3];
    l2_normalize(&mut zero);
    assert_eq!(zero, vec![0.0; 3]);
}
