//! `knowledge.chunk_plot`: [`Explanation`] drawn as a standalone SVG, so that a reader can see
//! the score curve, the threshold it was compared with, where the chunks start and why.
//!
//! Written by hand with `format!` (no plotting dependency). Coordinates: the x axis counts
//! sentences, sentence `i` spans `[i, i + 1]`, so the gap before sentence `i` (its score, and a
//! cut there) sits at `x = i` and a chunk is the band from its first sentence's start to the
//! next chunk's. The picture has a fixed 900×370 viewBox and a white background, so it reads the
//! same in a browser, an image viewer or a README on a dark theme.

use crate::config::{Boundaries, ChunkConfig};
use crate::explain::{Explanation, SentenceTrace};
use crate::strategy::SplitReason;
use crate::threshold::Threshold;
use std::fmt::Write;

mod axis;
mod svg;

#[cfg(test)]
use axis::nice_step;
use axis::{x_tick_step, Axis};
use svg::{escape, number, plural, text, text_width};

const WIDTH: f64 = 900.0;
const HEIGHT: f64 = 370.0;
/// The plot area, inside the title (above), the y axis labels (left), the x axis labels and the
/// legend (below).
const LEFT: f64 = 70.0;
const RIGHT: f64 = 884.0;
const TOP: f64 = 52.0;
const BOTTOM: f64 = 282.0;
const FONT: &str = "system-ui, -apple-system, 'Segoe UI', Helvetica, Arial, sans-serif";

const SCORE_COLOUR: &str = "#1f5fa8";
const DISTANCE_COLOUR: &str = "#9a9a9a";
const THRESHOLD_COLOUR: &str = "#222222";
const MEANING_CUT_COLOUR: &str = "#c62828";
const SIZE_CUT_COLOUR: &str = "#ef8a00";
const FORCED_CUT_COLOUR: &str = "#7b3fa0";
const MERGED_COLOUR: &str = "#555555";
const BAND_FILLS: [&str; 2] = ["#e3edf8", "#f3efe4"];
/// Above this many sentences the curve has no dots (they would merge into a line).
const MAX_DOTTED_SENTENCES: usize = 80;

/// The words a plot uses for the method that produced the explanation.
#[derive(Clone, Debug, PartialEq)]
pub struct PlotLabels {
    /// Method, its parameter and the model, shown under the title.
    pub method: String,
    /// The y axis title: what `score` measures.
    pub score_axis: String,
    /// What the horizontal line is called in the legend ("penalty", "threshold").
    pub threshold_name: String,
    /// The scores are cosine distances, so the raw distance can share their axis.
    pub scores_are_distances: bool,
}

impl PlotLabels {
    /// The labels for the semantic strategy's `cfg.boundaries`, chunking with `model`.
    pub fn for_config(cfg: &ChunkConfig, model: &str) -> PlotLabels {
        let (method, score_axis, threshold_name, scores_are_distances) = match cfg.boundaries {
            Boundaries::Optimal { penalty, .. } => (
                format!("optimal segmentation, penalty {}", number(penalty, 3)),
                "score (coherence gained by a cut)",
                "penalty",
                false,
            ),
            Boundaries::Threshold(rule) => {
                let (rule_name, value, axis) = match rule {
                    Threshold::Percentile(v) => ("percentile", v, "smoothed distance"),
                    Threshold::Similarity(v) => ("similarity", v, "smoothed distance"),
                    Threshold::StdDev(v) => ("stddev", v, "smoothed distance"),
                    Threshold::Interquartile(v) => ("interquartile", v, "smoothed distance"),
                    Threshold::Gradient(v) => ("gradient", v, "gradient of the smoothed distance"),
                };
                let distances = !matches!(rule, Threshold::Gradient(_));
                (
                    format!("threshold method, {rule_name} {}, smoothing {}", number(value, 3), cfg.smoothing),
                    axis,
                    "threshold",
                    distances,
                )
            }
        };
        PlotLabels {
            method: format!("{method}, model {model}"),
            score_axis: score_axis.to_string(),
            threshold_name: threshold_name.to_string(),
            scores_are_distances,
        }
    }
}

/// What a cut marker says about why a chunk starts at a sentence.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum CutKind {
    Meaning,
    Size,
    Forced,
}

impl CutKind {
    /// From a sentence's trace; `forced` wins because it is the one a reader must notice
    /// (the sentence itself was cut at the cap).
    fn of(sentence: &SentenceTrace) -> CutKind {
        match sentence.reason {
            _ if sentence.forced => CutKind::Forced,
            Some(SplitReason::Threshold) => CutKind::Meaning,
            _ => CutKind::Size,
        }
    }

    /// Its class in the SVG, its colour, its stroke-dasharray attribute and its legend entry.
    fn style(self) -> (&'static str, &'static str, &'static str, &'static str) {
        match self {
            CutKind::Meaning => ("meaning", MEANING_CUT_COLOUR, "", "cut: meaning changed"),
            CutKind::Size => ("size", SIZE_CUT_COLOUR, " stroke-dasharray=\"6 3\"", "cut: max_size"),
            CutKind::Forced => ("forced", FORCED_CUT_COLOUR, " stroke-dasharray=\"2 2\"", "sentence split at the cap"),
        }
    }
}

/// The SVG picture of `explanation`. Always a complete document: with fewer than two sentences
/// (no gap to score) it says so instead of drawing axes.
pub fn render_svg(explanation: &Explanation, labels: &PlotLabels) -> String {
    let n = explanation.sentences.len();
    let mut svg = String::new();
    let _ = write!(
        svg,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {WIDTH} {HEIGHT}\" width=\"{WIDTH}\" height=\"{HEIGHT}\" font-family=\"{FONT}\" font-size=\"11\">\n\
         <rect width=\"{WIDTH}\" height=\"{HEIGHT}\" fill=\"#ffffff\"/>\n"
    );
    if n < 2 {
        let (title, message) = match n {
            0 => ("pg_chunk: no sentences to plot", "The document has no sentences."),
            _ => ("pg_chunk: one sentence, so no gap to score", "A document of one sentence is one chunk."),
        };
        text(&mut svg, LEFT, 22.0, "start", "font-size=\"15\" font-weight=\"600\"", title);
        text(&mut svg, LEFT, 39.0, "start", "fill=\"#555555\"", &labels.method);
        text(&mut svg, WIDTH / 2.0, (TOP + BOTTOM) / 2.0, "middle", "font-size=\"14\" fill=\"#555555\"", message);
        svg.push_str("</svg>\n");
        return svg;
    }
    let plot = Plot::new(explanation, labels);
    text(&mut svg, LEFT, 22.0, "start", "font-size=\"15\" font-weight=\"600\"", &plot.title());
    let method = match explanation.paragraph_penalty {
        0.0 => labels.method.clone(),
        extra => format!("{}; scores inside a paragraph less {}", labels.method, number(extra, 3)),
    };
    text(&mut svg, LEFT, 39.0, "start", "fill=\"#555555\"", &method);
    // Back to front: bands, grid and axes, cut markers, the threshold, the curves, labels on top.
    plot.bands(&mut svg);
    plot.axes(&mut svg);
    let cut_kinds = plot.cuts(&mut svg);
    plot.curves(&mut svg);
    let merged = plot.merged_cuts(&mut svg);
    plot.threshold_label(&mut svg);
    plot.legend(&mut svg, &cut_kinds, merged);
    svg.push_str("</svg>\n");
    svg
}

/// One explanation of at least two sentences, with the scales that place it in the plot area.
struct Plot<'a> {
    explanation: &'a Explanation,
    labels: &'a PlotLabels,
    /// Finite scores only (none for the first sentence, a NaN or an infinity).
    scores: Vec<Option<f64>>,
    /// Finite raw distances, where they share the scores' axis; otherwise none.
    distances: Vec<Option<f64>>,
    threshold: Option<f64>,
    /// The sentences chunks start at: the first and every cut.
    band_starts: Vec<usize>,
    /// Sentences cut inside at the cap: each is one band but several chunks.
    split_sentences: usize,
    y_axis: Axis,
}

impl<'a> Plot<'a> {
    fn new(explanation: &'a Explanation, labels: &'a PlotLabels) -> Plot<'a> {
        let sentences = &explanation.sentences;
        let scores: Vec<Option<f64>> = sentences.iter().map(|s| s.score.filter(|v| v.is_finite())).collect();
        // The raw distance is drawn only when the scores are distances too. Under optimal
        // segmentation the score is a coherence gain against the penalty, in other units: a
        // second axis would invite reading crossings of the two curves that mean nothing, and
        // the distances are in chunk_explain for whoever wants them.
        let distances: Vec<Option<f64>> = if labels.scores_are_distances {
            sentences.iter().map(|s| s.distance.filter(|v| v.is_finite())).collect()
        } else {
            vec![None; sentences.len()]
        };
        let threshold = Some(explanation.threshold).filter(|t| t.is_finite());
        let y_axis = Axis::covering(scores.iter().chain(&distances).flatten().copied().chain(threshold));
        Plot {
            explanation,
            labels,
            band_starts: (0..sentences.len()).filter(|&i| i == 0 || sentences[i].is_cut).collect(),
            split_sentences: sentences.iter().filter(|s| s.is_cut && CutKind::of(s) == CutKind::Forced).count(),
            scores,
            distances,
            threshold,
            y_axis,
        }
    }

    fn sentence_count(&self) -> usize {
        self.explanation.sentences.len()
    }

    /// The x coordinate of position `x` on the sentence axis.
    fn x_of(&self, x: f64) -> f64 {
        LEFT + x / self.sentence_count() as f64 * (RIGHT - LEFT)
    }

    fn y_of(&self, v: f64) -> f64 {
        BOTTOM - (v - self.y_axis.lo) / (self.y_axis.hi - self.y_axis.lo) * (BOTTOM - TOP)
    }

    fn title(&self) -> String {
        let (n, bands) = (self.sentence_count(), self.band_starts.len());
        if self.explanation.sentences[0].reason == Some(SplitReason::Inline) {
            format!("Where the meaning changes: {n} sentences, kept whole (shorter than inline_threshold)")
        } else if self.split_sentences > 0 {
            let split = self.split_sentences;
            format!(
                "Where the meaning changes: {n} sentences in {bands} run{}, {split} sentence{} split at the cap",
                plural(bands),
                plural(split)
            )
        } else {
            format!("Where the meaning changes: {n} sentences in {bands} chunk{}", plural(bands))
        }
    }

    /// Chunks as alternating bands, each from its first sentence to the next chunk's, numbered
    /// as chunks unless a sentence split at the cap makes the numbers wrong.
    fn bands(&self, svg: &mut String) {
        for (k, &first) in self.band_starts.iter().enumerate() {
            let last = self.band_starts.get(k + 1).copied().unwrap_or(self.sentence_count());
            let (x0, x1) = (self.x_of(first as f64), self.x_of(last as f64));
            let sentences = if last - first == 1 {
                format!("sentence {first}")
            } else {
                format!("sentences {first} to {}", last - 1)
            };
            let _ = writeln!(
                svg,
                "<rect class=\"band\" x=\"{x0:.1}\" y=\"{TOP}\" width=\"{:.1}\" height=\"{}\" fill=\"{}\"><title>chunk {k}: {sentences}</title></rect>",
                x1 - x0,
                BOTTOM - TOP,
                BAND_FILLS[k % 2]
            );
            let label = if x1 - x0 >= 64.0 {
                format!("chunk {k}")
            } else if x1 - x0 >= 16.0 {
                k.to_string()
            } else {
                String::new()
            };
            if !label.is_empty() && self.split_sentences == 0 {
                text(svg, (x0 + x1) / 2.0, TOP + 13.0, "middle", "fill=\"#666666\"", &label);
            }
        }
    }

    /// Grid lines, tick labels, the frame and both axis titles.
    fn axes(&self, svg: &mut String) {
        for v in self.y_axis.ticks() {
            let y = self.y_of(v);
            let _ = writeln!(svg, "<line x1=\"{LEFT}\" x2=\"{RIGHT}\" y1=\"{y:.1}\" y2=\"{y:.1}\" stroke=\"#000000\" stroke-opacity=\"0.08\"/>");
            text(svg, LEFT - 6.0, y + 4.0, "end", "", &number(v, self.y_axis.decimals));
        }
        for i in (0..self.sentence_count()).step_by(x_tick_step(self.sentence_count())) {
            let x = self.x_of(i as f64);
            let _ = writeln!(
                svg,
                "<line x1=\"{x:.1}\" x2=\"{x:.1}\" y1=\"{BOTTOM}\" y2=\"{}\" stroke=\"#444444\"/>",
                BOTTOM + 4.0
            );
            text(svg, x, BOTTOM + 16.0, "middle", "", &i.to_string());
        }
        let _ = writeln!(
            svg,
            "<rect x=\"{LEFT}\" y=\"{TOP}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"#444444\"/>",
            RIGHT - LEFT,
            BOTTOM - TOP
        );
        text(
            svg,
            (LEFT + RIGHT) / 2.0,
            BOTTOM + 33.0,
            "middle",
            "",
            "sentence index (the gap before sentence i is at i)",
        );
        let _ = writeln!(
            svg,
            "<text x=\"24\" y=\"{0:.1}\" text-anchor=\"middle\" transform=\"rotate(-90 24 {0:.1})\">{1}</text>",
            (TOP + BOTTOM) / 2.0,
            escape(&self.labels.score_axis)
        );
    }

    /// A vertical line at the gap before each sentence a chunk starts at (none at 0, the
    /// document's start, unless that sentence was split at the cap). Returns the kinds drawn.
    fn cuts(&self, svg: &mut String) -> Vec<CutKind> {
        let mut kinds = Vec::new();
        let width = if self.sentence_count() <= 100 { 1.8 } else { 1.0 };
        for (i, s) in self.explanation.sentences.iter().enumerate() {
            let kind = CutKind::of(s);
            if !s.is_cut || (i == 0 && kind != CutKind::Forced) {
                continue;
            }
            if !kinds.contains(&kind) {
                kinds.push(kind);
            }
            let (x, (class, colour, dash, _)) = (self.x_of(i as f64), kind.style());
            let _ = writeln!(
                svg,
                "<line class=\"cut {class}\" x1=\"{x:.1}\" x2=\"{x:.1}\" y1=\"{TOP}\" y2=\"{BOTTOM}\" stroke=\"{colour}\" stroke-width=\"{width}\"{dash}><title>chunk starts at sentence {i}: {}</title></line>",
                escape(s.reason_text().as_deref().unwrap_or("cut"))
            );
        }
        kinds
    }

    /// The threshold line, the raw distance (where shown) and the score curve with its points.
    fn curves(&self, svg: &mut String) {
        if let Some(t) = self.threshold {
            let y = self.y_of(t);
            let _ = writeln!(
                svg,
                "<line class=\"threshold\" x1=\"{LEFT}\" x2=\"{RIGHT}\" y1=\"{y:.1}\" y2=\"{y:.1}\" stroke=\"{THRESHOLD_COLOUR}\" stroke-width=\"1.2\" stroke-dasharray=\"7 4\"/>"
            );
        }
        if self.shows_distances() {
            self.polyline(
                svg,
                "distance",
                &self.distances,
                DISTANCE_COLOUR,
                "stroke-width=\"1.2\" stroke-opacity=\"0.9\"",
            );
        }
        self.polyline(svg, "score", &self.scores, SCORE_COLOUR, "stroke-width=\"2\"");
        if self.sentence_count() <= MAX_DOTTED_SENTENCES {
            for (i, v) in self.scores.iter().enumerate().filter_map(|(i, v)| v.map(|v| (i, v))) {
                let _ = writeln!(
                    svg,
                    "<circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"2.6\" fill=\"{SCORE_COLOUR}\"><title>gap before sentence {i}: {}</title></circle>",
                    self.x_of(i as f64),
                    self.y_of(v),
                    number(v, 3)
                );
            }
        }
    }

    fn shows_distances(&self) -> bool {
        self.distances.iter().any(Option::is_some)
    }

    /// One path for a curve, broken where a value is missing (the first sentence, a NaN).
    fn polyline(&self, svg: &mut String, class: &str, values: &[Option<f64>], colour: &str, style: &str) {
        let mut d = String::new();
        let mut pen_down = false;
        for (i, v) in values.iter().enumerate() {
            match v {
                Some(v) => {
                    let _ = write!(
                        d,
                        "{}{:.1},{:.1} ",
                        if pen_down { "L" } else { "M" },
                        self.x_of(i as f64),
                        self.y_of(*v)
                    );
                    pen_down = true;
                }
                None => pen_down = false,
            }
        }
        if !d.is_empty() {
            let _ = writeln!(svg, "<path class=\"{class}\" d=\"{}\" fill=\"none\" stroke=\"{colour}\" {style} stroke-linejoin=\"round\"/>", d.trim_end());
        }
    }

    /// Cuts the method wanted but min_size undid, as hollow rings on the curve. Returns whether
    /// there were any.
    fn merged_cuts(&self, svg: &mut String) -> bool {
        let mut any = false;
        for (i, s) in self.explanation.sentences.iter().enumerate() {
            let Some(v) = self.scores[i].filter(|_| s.reason == Some(SplitReason::Merged) && !s.forced) else {
                continue;
            };
            any = true;
            let _ = writeln!(
                svg,
                "<circle class=\"merged\" cx=\"{:.1}\" cy=\"{:.1}\" r=\"5\" fill=\"#ffffff\" stroke=\"{MERGED_COLOUR}\" stroke-width=\"1.6\"><title>gap before sentence {i}: cut undone to reach min_size</title></circle>",
                self.x_of(i as f64),
                self.y_of(v)
            );
        }
        any
    }

    /// The threshold's value at the right end of its line, on a white patch drawn after the
    /// curves so that no marker or curve runs through it.
    fn threshold_label(&self, svg: &mut String) {
        let Some(t) = self.threshold else { return };
        let (label, y) = (format!("{} {}", self.labels.threshold_name, number(t, 3)), self.y_of(t));
        let width = text_width(&label) + 6.0;
        let _ = writeln!(
            svg,
            "<rect x=\"{:.1}\" y=\"{:.1}\" width=\"{width:.1}\" height=\"14\" fill=\"#ffffff\" fill-opacity=\"0.85\"/>",
            RIGHT - 1.0 - width,
            y - 16.0
        );
        text(svg, RIGHT - 4.0, y - 5.0, "end", "fill=\"#222222\"", &label);
    }

    /// An entry for each thing drawn, cut kinds only where they occur.
    fn legend(&self, svg: &mut String, cut_kinds: &[CutKind], merged: bool) {
        let mut legend = Legend::new(BOTTOM + 56.0);
        legend.line(svg, SCORE_COLOUR, "", "score");
        if self.shows_distances() {
            legend.line(svg, DISTANCE_COLOUR, "", "raw distance");
        }
        if self.threshold.is_some() {
            legend.line(svg, THRESHOLD_COLOUR, " stroke-dasharray=\"7 4\"", &self.labels.threshold_name);
        }
        for kind in [CutKind::Meaning, CutKind::Size, CutKind::Forced].into_iter().filter(|k| cut_kinds.contains(k)) {
            let (_, colour, dash, label) = kind.style();
            legend.line(svg, colour, dash, label);
        }
        if merged {
            legend.ring(svg, "cut undone for min_size");
        }
        legend.bands(svg, if self.split_sentences > 0 { "runs of whole sentences (chunks)" } else { "chunks" });
    }
}

/// The legend: one row of swatches and labels under the x axis title, wrapping when full.
struct Legend {
    x: f64,
    y: f64,
}

impl Legend {
    fn new(y: f64) -> Legend {
        Legend { x: LEFT, y }
    }

    /// Room for a swatch and `label`, on a new row if this one is full.
    fn place(&mut self, label: &str) -> (f64, f64) {
        let width = 28.0 + text_width(label) + 18.0;
        if self.x + width > RIGHT && self.x > LEFT {
            self.x = LEFT;
            self.y += 18.0;
        }
        let at = (self.x, self.y);
        self.x += width;
        at
    }

    fn line(&mut self, svg: &mut String, colour: &str, dash: &str, label: &str) {
        let (x, y) = self.place(label);
        let _ = writeln!(
            svg,
            "<line x1=\"{x:.1}\" x2=\"{:.1}\" y1=\"{:.1}\" y2=\"{:.1}\" stroke=\"{colour}\" stroke-width=\"2\"{dash}/>",
            x + 22.0,
            y - 4.0,
            y - 4.0
        );
        text(svg, x + 28.0, y, "start", "", label);
    }

    fn ring(&mut self, svg: &mut String, label: &str) {
        let (x, y) = self.place(label);
        let _ = writeln!(svg, "<circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"5\" fill=\"#ffffff\" stroke=\"{MERGED_COLOUR}\" stroke-width=\"1.6\"/>", x + 11.0, y - 4.0);
        text(svg, x + 28.0, y, "start", "", label);
    }

    fn bands(&mut self, svg: &mut String, label: &str) {
        let (x, y) = self.place(label);
        for (k, fill) in BAND_FILLS.iter().enumerate() {
            let _ = writeln!(svg, "<rect x=\"{:.1}\" y=\"{:.1}\" width=\"11\" height=\"12\" fill=\"{fill}\" stroke=\"#bbbbbb\" stroke-width=\"0.5\"/>", x + k as f64 * 11.0, y - 10.0);
        }
        text(svg, x + 28.0, y, "start", "", label);
    }
}

#[cfg(test)]
mod tests;
