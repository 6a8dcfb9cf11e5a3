use super::*;

#[test]
fn batches_cover_every_input_once_sorted_by_length() {
    let cases: &[(&[usize], usize)] =
        &[(&[], 4), (&[5], 4), (&[9, 1, 5, 1, 7, 3, 2], 3), (&[4, 4, 4, 4], 2), (&[3, 1, 2], 0), (&[10, 20, 30], 100)];
    for &(lengths, batch_size) in cases {
        let batches = length_sorted_batches(lengths, batch_size);
        let mut seen: Vec<usize> = batches.iter().flatten().copied().collect();
        let flat = seen.clone();
        assert!(flat.windows(2).all(|w| lengths[w[0]] <= lengths[w[1]]), "{lengths:?}");
        assert!(batches.iter().all(|b| !b.is_empty() && b.len() <= batch_size.max(1)));
        seen.sort_unstable();
        assert_eq!(seen, (0..lengths.len()).collect::<Vec<_>>(), "{lengths:?}");
    }
}

#[test]
fn ties_keep_input_order() {
    assert_eq!(length_sorted_batches(&[2, 1, 2, 1], 2), vec![vec![1, 3], vec![0, 2]]);
}

fn total_cost(lengths: &[usize], batches: &[Vec<usize>]) -> u64 {
    batches.iter().map(|batch| batch_cost(batch.len(), batch.iter().map(|&i| lengths[i]).max().unwrap_or(0))).sum()
}

#[test]
fn a_long_input_is_not_padded_with_short_ones() {
    // Fifteen 8-token sentences and one of 200: one batch of sixteen would pad 15 rows to 200.
    let mut lengths = vec![8; 15];
    lengths.push(200);
    let batches = length_sorted_batches(&lengths, 16);
    assert_eq!(batches, vec![(0..15).collect::<Vec<_>>(), vec![15]]);
}

#[test]
fn equal_lengths_fill_whole_batches() {
    // As few runs as batch_size allows; the first holds the remainder.
    let batches = length_sorted_batches(&[20; 40], 16);
    assert_eq!(batches.iter().map(Vec::len).collect::<Vec<_>>(), vec![8, 16, 16]);
}

#[test]
fn the_cuts_cost_least_among_all_contiguous_batchings() {
    // Every way to cut the sorted inputs into runs of at most batch_size, by brute force.
    fn cheapest(sorted: &[usize], batch_size: usize) -> u64 {
        if sorted.is_empty() {
            return 0;
        }
        (1..=batch_size.min(sorted.len()))
            .map(|rows| batch_cost(rows, sorted[rows - 1]) + cheapest(&sorted[rows..], batch_size))
            .fold(u64::MAX, u64::min)
    }
    let mut seed = 7u64;
    for case in 0..300 {
        let lengths: Vec<usize> = (0..case % 11)
            .map(|_| {
                seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                [3, 5, 9, 17, 30, 64, 130, 256][(seed >> 33) as usize % 8]
            })
            .collect();
        let batch_size = 1 + case % 5;
        let mut sorted = lengths.clone();
        sorted.sort_unstable();
        let batches = length_sorted_batches(&lengths, batch_size);
        let found = total_cost(&lengths, &batches);
        let best = cheapest(&sorted, batch_size);
        assert_eq!(found, best, "{lengths:?} / {batch_size}");
        // and never above cutting the sorted inputs every batch_size, the old rule
        let fixed: Vec<Vec<usize>> = {
            let mut order: Vec<usize> = (0..lengths.len()).collect();
            order.sort_by_key(|&i| lengths[i]);
            order.chunks(batch_size).map(<[usize]>::to_vec).collect()
        };
        assert!(found <= total_cost(&lengths, &fixed));
    }
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
    let expected: Vec<f32> = lengths.iter().flat_map(|&l| [l as f32, -(l as f32)]).collect();
    assert_eq!(output, expected);
}

#[test]
fn tokenized_inputs_give_back_each_input_and_its_length() {
    let inputs: [(&[u32], &[u32]); 4] =
        [(&[101, 7, 102], &[0, 0, 0]), (&[], &[]), (&[101, 102], &[0, 1]), (&[101, 5, 6, 7, 102], &[0, 0, 1, 1, 1])];
    let mut tokenized = TokenizedInputs::new();
    for (ids, type_ids) in inputs {
        tokenized.push(ids, type_ids);
    }
    assert_eq!(tokenized.lengths(), vec![3, 0, 2, 5]);
    for (index, input) in inputs.iter().enumerate() {
        assert_eq!(tokenized.row(index), *input, "input {index}");
    }
}

#[test]
fn padding_fills_to_the_longest_row_and_masks_it() {
    let batch = pad_batch(&[(&[101, 7, 102], &[0, 0, 0]), (&[101, 102], &[0, 1])], 0);
    assert_eq!((batch.rows, batch.columns), (2, 3));
    assert_eq!(batch.ids, vec![101, 7, 102, 101, 102, 0]);
    assert_eq!(batch.attention_mask, vec![1, 1, 1, 1, 1, 0]);
    assert_eq!(batch.type_ids, vec![0, 0, 0, 0, 1, 0]);
}

#[test]
fn no_run_holds_more_positions_or_attention_than_the_caps_allow() {
    let lengths: Vec<usize> = (0..2000).map(|i| 1 + (i * 37) % 512).collect();
    for batch_size in [16, 256, 1024] {
        let batches = length_sorted_batches(&lengths, batch_size);
        let mut seen: Vec<usize> = batches.iter().flatten().copied().collect();
        seen.sort_unstable();
        assert_eq!(seen, (0..lengths.len()).collect::<Vec<_>>());
        for batch in &batches {
            let width = batch.iter().map(|&i| lengths[i]).max().unwrap();
            assert!(
                batch.len() * width <= MAX_RUN_POSITIONS,
                "batch size {batch_size}: {} rows of {width}",
                batch.len()
            );
            assert!(
                batch.len() == 1 || batch.len() * width * width <= MAX_RUN_ATTENTION,
                "batch size {batch_size}: {} rows of {width}",
                batch.len()
            );
        }
    }
    // Short inputs still fill a large batch.
    assert_eq!(length_sorted_batches(&[4; 1000], 1000).len(), 1);
    // An input longer than the budget runs alone.
    assert_eq!(length_sorted_batches(&[9000, 9000], 16), vec![vec![0], vec![1]]);
    // Long inputs share a run only as far as attention allows: 16 of 128 tokens, 4 of 256, 1 of 512.
    let runs = |width: usize| length_sorted_batches(&[width; 16], 16).iter().map(Vec::len).max().unwrap();
    assert_eq!((runs(128), runs(256), runs(512)), (16, 4, 1));
}
