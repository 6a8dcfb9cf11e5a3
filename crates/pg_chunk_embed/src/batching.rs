//! Grouping inputs of similar length into batches. Padding costs compute on every padded
//! position, so texts are sorted by token length, cut into batches, and each result is written
//! back to its input's position.

/// Input indices in batches of at most `batch_size` (0 is taken as 1), shortest inputs first.
/// Ties keep input order, so the batching is deterministic.
pub(crate) fn length_sorted_batches(token_lengths: &[usize], batch_size: usize) -> Vec<Vec<usize>> {
    let mut order: Vec<usize> = (0..token_lengths.len()).collect();
    order.sort_by_key(|&index| token_lengths[index]); // stable
    order
        .chunks(batch_size.max(1))
        .map(<[usize]>::to_vec)
        .collect()
}

/// Input `ids` (one row per text, of varying length) padded to the longest row, flattened
/// row-major, with the matching attention mask (1 on real tokens, 0 on padding).
pub(crate) struct PaddedBatch {
    pub rows: usize,
    pub columns: usize,
    pub ids: Vec<i64>,
    pub attention_mask: Vec<i64>,
    pub type_ids: Vec<i64>,
}

/// Pads each row with `pad_id` (type id 0) up to the longest row.
pub(crate) fn pad_batch(rows: &[(&[u32], &[u32])], pad_id: u32) -> PaddedBatch {
    let columns = rows.iter().map(|(ids, _)| ids.len()).max().unwrap_or(0);
    let mut batch = PaddedBatch {
        rows: rows.len(),
        columns,
        ids: Vec::with_capacity(rows.len() * columns),
        attention_mask: Vec::with_capacity(rows.len() * columns),
        type_ids: Vec::with_capacity(rows.len() * columns),
    };
    for (ids, type_ids) in rows {
        let padding = columns - ids.len();
        batch.ids.extend(ids.iter().map(|&id| i64::from(id)));
        batch
            .ids
            .extend(std::iter::repeat_n(i64::from(pad_id), padding));
        batch
            .attention_mask
            .extend(std::iter::repeat_n(1, ids.len()));
        batch.attention_mask.extend(std::iter::repeat_n(0, padding));
        batch
            .type_ids
            .extend(type_ids.iter().map(|&id| i64::from(id)));
        batch.type_ids.extend(std::iter::repeat_n(0, padding));
    }
    batch
}

/// Copies `vector` into row `index` of a rows × dimension buffer.
pub(crate) fn place_row(output: &mut [f32], dimension: usize, index: usize, vector: &[f32]) {
    output[index * dimension..(index + 1) * dimension].copy_from_slice(vector);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batches_cover_every_input_once_sorted_by_length() {
        let cases: &[(&[usize], usize)] = &[
            (&[], 4),
            (&[5], 4),
            (&[9, 1, 5, 1, 7, 3, 2], 3),
            (&[4, 4, 4, 4], 2),
            (&[3, 1, 2], 0),
            (&[10, 20, 30], 100),
        ];
        for &(lengths, batch_size) in cases {
            let batches = length_sorted_batches(lengths, batch_size);
            let mut seen: Vec<usize> = batches.iter().flatten().copied().collect();
            let flat = seen.clone();
            assert!(
                flat.windows(2).all(|w| lengths[w[0]] <= lengths[w[1]]),
                "{lengths:?}"
            );
            assert!(batches
                .iter()
                .all(|b| !b.is_empty() && b.len() <= batch_size.max(1)));
            seen.sort_unstable();
            assert_eq!(seen, (0..lengths.len()).collect::<Vec<_>>(), "{lengths:?}");
        }
    }

    #[test]
    fn ties_keep_input_order() {
        assert_eq!(
            length_sorted_batches(&[2, 1, 2, 1], 2),
            vec![vec![1, 3], vec![0, 2]]
        );
    }

    #[test]
    fn rows_written_back_restore_input_order() {
        // Each "embedding" is the input's own length, so a misplaced row shows.
        let lengths = [5, 2, 9, 2, 7];
        let mut output = vec![0.0f32; lengths.len() * 2];
        for batch in length_sorted_batches(&lengths, 2) {
            for index in batch {
                let value = lengths[index] as f32;
                place_row(&mut output, 2, index, &[value, -value]);
            }
        }
        let expected: Vec<f32> = lengths
            .iter()
            .flat_map(|&l| [l as f32, -(l as f32)])
            .collect();
        assert_eq!(output, expected);
    }

    #[test]
    fn padding_fills_to_the_longest_row_and_masks_it() {
        let batch = pad_batch(&[(&[101, 7, 102], &[0, 0, 0]), (&[101, 102], &[0, 1])], 0);
        assert_eq!((batch.rows, batch.columns), (2, 3));
        assert_eq!(batch.ids, vec![101, 7, 102, 101, 102, 0]);
        assert_eq!(batch.attention_mask, vec![1, 1, 1, 1, 1, 0]);
        assert_eq!(batch.type_ids, vec![0, 0, 0, 0, 1, 0]);
    }
}
