//! Grouping inputs of similar length into batches. Padding costs compute on every padded
//! position, so texts are sorted by token length, cut into batches where the cuts cost least,
//! and each result is written back to its input's position.

/// One inference run's fixed cost, in token positions: a run of `rows` rows padded to `columns`
/// costs `RUN_OVERHEAD + rows × (columns + columns² / ATTENTION_SCALE)` positions, that is, a run
/// costs as much as 12 positions, and attention makes a 206-token row cost twice its length. Both
/// constants come from a least-squares fit of all-MiniLM-L6-v2's run time on one ONNX Runtime
/// thread over a grid of 1–16 rows × 4–128 tokens (`bench/peers/model_work.py fit`). Fits of the
/// int8 and float graphs, and fits on relative errors, differ in scale but not in this shape, and
/// cuts chosen with these constants cost within 0.2% of the best cuts under each of them; other
/// BERT-sized encoders have the same shape.
/// bench/embeddings/run.sh measures the batches' throughput against plain ONNX Runtime.
const RUN_OVERHEAD: u64 = 12;
const ATTENTION_SCALE: u64 = 206;

/// The cost above times ATTENTION_SCALE, in integers so that equal costs compare equal.
fn batch_cost(rows: usize, columns: usize) -> u64 {
    let (rows, columns) = (rows as u64, columns as u64);
    RUN_OVERHEAD * ATTENTION_SCALE + rows * (columns * ATTENTION_SCALE + columns * columns)
}

/// The most token positions (rows × padded width) one run holds, whatever the batch size (16
/// rows of 512 tokens), so that pg_chunk.batch_size, which any role may raise, cannot make a
/// backend take more than that.
pub(crate) const MAX_RUN_POSITIONS: usize = 16 * 512;

/// The most rows × padded width² one run holds: a full batch of 16 up to 128 tokens, 4 rows of
/// 256, one of 512. Attention holds rows × heads × width² scores at once, and ONNX Runtime keeps
/// its largest run's buffers for the life of the backend, so this bound is what bounds a
/// backend's memory after long inputs (bench/embeddings/long_inputs.sql measures it). Long rows
/// gain nothing from sharing a run: a run's fixed cost is worth about 12 positions
/// (`RUN_OVERHEAD`), under 1% of 4 rows of 256.
pub(crate) const MAX_RUN_ATTENTION: usize = 16 * 128 * 128;

/// Input indices in batches of at most `batch_size` (0 is taken as 1) rows, at most
/// [`MAX_RUN_POSITIONS`] positions and at most [`MAX_RUN_ATTENTION`] rows × width² (a single
/// longer input still gets a run), shortest first.
/// Ties keep input order, so the batching is deterministic. Each batch is a run of the sorted
/// inputs; where one batch ends is chosen (by dynamic programming over the sorted lengths) to
/// minimise the total `batch_cost`, so a long input is not padded with short ones, and many
/// short inputs still share a run.
pub(crate) fn length_sorted_batches(token_lengths: &[usize], batch_size: usize) -> Vec<Vec<usize>> {
    let batch_size = batch_size.max(1);
    let mut order: Vec<usize> = (0..token_lengths.len()).collect();
    // A stable sort: ties keep input order.
    order.sort_by_key(|&index| token_lengths[index]);
    // cheapest[j]: the least cost of the first j sorted inputs; start[j]: where its last batch
    // begins. A batch's padded width is the length of its last (longest) input.
    let mut cheapest = vec![0u64; order.len() + 1];
    let mut start = vec![0usize; order.len() + 1];
    for end in 1..=order.len() {
        let columns = token_lengths[order[end - 1]];
        let rows = batch_size
            .min(MAX_RUN_POSITIONS / columns.max(1))
            .min(MAX_RUN_ATTENTION / (columns * columns).max(1))
            .max(1);
        (cheapest[end], start[end]) = (end.saturating_sub(rows)..end)
            .map(|begin| (cheapest[begin] + batch_cost(end - begin, columns), begin))
            .fold((u64::MAX, 0), |best, next| if next.0 < best.0 { next } else { best });
    }
    let mut batches = Vec::new();
    let mut end = order.len();
    while end > 0 {
        batches.push(order[start[end]..end].to_vec());
        end = start[end];
    }
    batches.reverse();
    batches
}

/// Every input's token ids and type ids, one input after another in one buffer each: what is
/// kept of an input once it is tokenized. A large document's inputs stay cheap to hold and to
/// free: 100,000 sentences held as `tokenizers::Encoding`s (token strings, offsets, masks) take
/// about 240 MB, and 0.2–0.3 s to free when a cancel unwinds through them.
pub(crate) struct TokenizedInputs {
    ids: Vec<u32>,
    type_ids: Vec<u32>,
    /// `bounds[i]..bounds[i + 1]` is input `i`'s range in `ids` and `type_ids`.
    bounds: Vec<usize>,
}

impl TokenizedInputs {
    pub(crate) fn new() -> TokenizedInputs {
        TokenizedInputs { ids: Vec::new(), type_ids: Vec::new(), bounds: vec![0] }
    }

    /// Appends the next input's ids and type ids (of equal length).
    pub(crate) fn push(&mut self, ids: &[u32], type_ids: &[u32]) {
        self.ids.extend_from_slice(ids);
        self.type_ids.extend_from_slice(type_ids);
        self.bounds.push(self.ids.len());
    }

    /// Input `index`'s ids and type ids.
    pub(crate) fn row(&self, index: usize) -> (&[u32], &[u32]) {
        let range = self.bounds[index]..self.bounds[index + 1];
        (&self.ids[range.clone()], &self.type_ids[range])
    }

    /// Each input's length in tokens, in input order.
    pub(crate) fn lengths(&self) -> Vec<usize> {
        self.bounds.windows(2).map(|w| w[1] - w[0]).collect()
    }
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
        batch.ids.extend(std::iter::repeat_n(i64::from(pad_id), padding));
        batch.attention_mask.extend(std::iter::repeat_n(1, ids.len()));
        batch.attention_mask.extend(std::iter::repeat_n(0, padding));
        batch.type_ids.extend(type_ids.iter().map(|&id| i64::from(id)));
        batch.type_ids.extend(std::iter::repeat_n(0, padding));
    }
    batch
}

/// Copies `vector` into row `index` of a rows × dimension buffer.
pub(crate) fn place_row(output: &mut [f32], dimension: usize, index: usize, vector: &[f32]) {
    output[index * dimension..(index + 1) * dimension].copy_from_slice(vector);
}

#[cfg(test)]
#[path = "batching_tests.rs"]
mod tests;
