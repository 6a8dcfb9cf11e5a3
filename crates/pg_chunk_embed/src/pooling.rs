//! Token vectors → one sentence vector, computed as sentence-transformers does, so a vector made
//! here matches one made in Python with the same model.

/// Mean of the token vectors whose attention mask is 1 — [CLS] and [SEP] included, padding
/// excluded. `token_vectors` is one text's `tokens × dimension` block, `attention_mask` its mask.
/// Mirrors sentence-transformers' `Pooling` mean mode: sum(x·mask) / clamp(sum(mask), 1e-9).
pub(crate) fn mean_pool(token_vectors: &[f32], attention_mask: &[i64], dimension: usize) -> Vec<f32> {
    let mut sum = vec![0.0f32; dimension];
    let mut count = 0.0f32;
    for (token, &mask) in token_vectors.chunks_exact(dimension).zip(attention_mask) {
        if mask == 0 {
            continue;
        }
        let weight = mask as f32;
        for (total, &value) in sum.iter_mut().zip(token) {
            *total += value * weight;
        }
        count += weight;
    }
    let count = count.max(1e-9);
    for total in &mut sum {
        *total /= count;
    }
    sum
}

/// The first token's vector ([CLS] for BERT-style tokenizers).
pub(crate) fn cls_pool(token_vectors: &[f32], dimension: usize) -> Vec<f32> {
    token_vectors[..dimension].to_vec()
}

/// Scales `vector` to unit length, as `torch.nn.functional.normalize(p=2, eps=1e-12)`: a zero
/// vector stays zero instead of becoming NaN.
pub(crate) fn l2_normalize(vector: &mut [f32]) {
    let norm = vector.iter().map(|&value| value * value).sum::<f32>().sqrt();
    let divisor = norm.max(1e-12);
    for value in vector {
        *value /= divisor;
    }
}

#[cfg(test)]
#[path = "pooling_tests.rs"]
mod tests;
