use super::*;
use crate::explain::SentenceTrace;
use crate::sentences::Span;
use crate::strategy::SplitReason;

fn labels() -> PlotLabels {
    PlotLabels::for_config(&ChunkConfig::default(), "lexical")
}

/// An explanation of `scores.len()` sentences; `cuts` lists (sentence, reason) where chunks start
/// besides sentence 0.
fn explanation(threshold: f64, scores: &[Option<f64>], cuts: &[(usize, &str)]) -> Explanation {
    let sentences = scores
        .iter()
        .enumerate()
        .map(|(i, &score)| {
            let cut = cuts.iter().find(|(at, _)| *at == i);
            SentenceTrace {
                span: Span { start: i * 10, end: i * 10 + 9 },
                distance: score.map(|s| s / 4.0),
                smoothed_distance: score.map(|s| s / 4.0),
                score,
                is_cut: i == 0 || cut.is_some_and(|(_, r)| *r != "merged"),
                reason: if i == 0 { Some(SplitReason::Start) } else { cut.and_then(|(_, r)| parse_reason(r).0) },
                forced: cut.is_some_and(|(_, r)| parse_reason(r).1),
            }
        })
        .collect();
    Explanation { threshold, paragraph_penalty: 0.0, sentences }
}

/// A trace's reason as `SentenceTrace::reason_text` writes it: a name, `forced` after it or alone.
fn parse_reason(text: &str) -> (Option<SplitReason>, bool) {
    let name = text.trim_end_matches("forced").trim_end_matches(", ");
    (Some(name).filter(|n| !n.is_empty()).map(|n| n.parse().unwrap()), text.ends_with("forced"))
}

/// Checks that `svg` is well-formed XML as far as this module writes it: every tag closed in
/// order, attribute values quoted, no stray `<` or `&` in text. Returns the element names in
/// document order.
fn check_well_formed(svg: &str) -> Vec<String> {
    let mut open: Vec<String> = Vec::new();
    let mut elements = Vec::new();
    let mut rest = svg;
    while let Some(lt) = rest.find('<') {
        check_character_data(&rest[..lt]);
        let gt = tag_end(&rest[lt..])
            .unwrap_or_else(|| panic!("unterminated tag at {:?}", &rest[lt..rest.len().min(lt + 60)]));
        let tag = &rest[lt + 1..lt + gt];
        rest = &rest[lt + gt + 1..];
        if let Some(name) = tag.strip_prefix('/') {
            assert_eq!(open.pop().as_deref(), Some(name.trim()), "closing </{name}> does not match");
            continue;
        }
        let name: String = tag.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == ':').collect();
        assert!(!name.is_empty(), "tag without a name: <{tag}>");
        check_attributes(tag[name.len()..].trim_end_matches('/'));
        elements.push(name.clone());
        if !tag.ends_with('/') {
            open.push(name);
        }
    }
    check_character_data(rest);
    assert!(open.is_empty(), "unclosed elements: {open:?}");
    assert_eq!(elements.first().map(String::as_str), Some("svg"), "the root is not <svg>");
    elements
}

/// The index of the `>` that ends the tag starting at `tag[0] == '<'`, skipping quoted values.
fn tag_end(tag: &str) -> Option<usize> {
    let mut quote = None;
    for (i, c) in tag.char_indices().skip(1) {
        match (quote, c) {
            (None, '"' | '\'') => quote = Some(c),
            (Some(q), c) if c == q => quote = None,
            (Some(_), '<') => panic!("'<' inside an attribute value: {tag:.80}"),
            (None, '>') => return Some(i),
            _ => {}
        }
    }
    None
}

/// `name="value"` pairs, each value in double quotes with only escaped `&`.
fn check_attributes(attributes: &str) {
    let mut rest = attributes.trim();
    while !rest.is_empty() {
        let eq = rest.find("=\"").unwrap_or_else(|| panic!("attribute without a quoted value: {rest:.60}"));
        let name = rest[..eq].trim();
        assert!(
            !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == ':'),
            "bad attribute name {name:?}"
        );
        let value_end = rest[eq + 2..].find('"').expect("closing quote") + eq + 2;
        check_character_data(&rest[eq + 2..value_end]);
        rest = rest[value_end + 1..].trim_start();
    }
}

fn check_character_data(text: &str) {
    assert!(!text.contains('>'), "unescaped > in {text:?}");
    for (i, _) in text.match_indices('&') {
        let entity = &text[i..text.len().min(i + 6)];
        assert!(
            ["&amp;", "&lt;", "&gt;", "&quot;", "&apos;"].iter().any(|e| entity.starts_with(e)),
            "unescaped & in {text:?}"
        );
    }
}

fn count(svg: &str, needle: &str) -> usize {
    svg.matches(needle).count()
}

#[test]
fn the_checker_rejects_broken_markup() {
    for broken in
        ["<svg><g></svg>", "<svg><text>a & b</text></svg>", "<svg x=1></svg>", "<svg><rect/>", "<svg a=\"<\"></svg>"]
    {
        assert!(std::panic::catch_unwind(|| check_well_formed(broken)).is_err(), "accepted {broken}");
    }
    check_well_formed("<svg a=\"1\"><rect b=\"x &amp; y\"/><text>ok</text></svg>");
}

#[test]
fn a_typical_plot_is_well_formed_with_a_marker_per_cut_and_a_band_per_chunk() {
    let scores = [None, Some(0.2), Some(1.9), Some(0.4), Some(0.3), Some(2.4), Some(0.1), Some(1.6), Some(0.5)];
    let e = explanation(1.3, &scores, &[(2, "threshold"), (5, "threshold"), (7, "size")]);
    let svg = render_svg(&e, &labels());
    let elements = check_well_formed(&svg);
    assert!(elements.iter().filter(|e| *e == "text").count() > 10, "axis labels missing");
    assert_eq!(count(&svg, "class=\"cut "), 3);
    assert_eq!(count(&svg, "class=\"cut meaning\""), 2);
    assert_eq!(count(&svg, "class=\"cut size\""), 1);
    assert_eq!(count(&svg, "class=\"band\""), 4);
    assert_eq!(count(&svg, "class=\"threshold\""), 1);
    assert_eq!(count(&svg, "class=\"score\""), 1);
    assert_eq!(count(&svg, "class=\"distance\""), 0, "optimal scores are not distances");
    assert!(svg.contains("penalty 1.3") && svg.contains("score (coherence gained by a cut)"), "labels");
    assert!(svg.contains("9 sentences in 4 chunks") && svg.contains(">chunk 3</text>"), "title and band labels");
    for label in ["cut: meaning changed", "cut: max_size", ">chunks<"] {
        assert!(svg.contains(label), "legend lacks {label}");
    }
    assert!(!svg.contains("split at the cap"), "no sentence was split");
}

#[test]
fn sentences_split_at_the_cap_are_marked_and_not_counted_as_one_chunk() {
    let scores = [None, Some(0.2), Some(1.9), Some(0.4)];
    let e = explanation(1.3, &scores, &[(2, "threshold, forced")]);
    let svg = render_svg(&e, &labels());
    check_well_formed(&svg);
    assert_eq!(count(&svg, "class=\"cut forced\""), 1);
    assert_eq!(count(&svg, "class=\"band\""), 2);
    assert!(svg.contains("4 sentences in 2 runs, 1 sentence split at the cap"), "title");
    assert!(!svg.contains(">chunk 1</text>"), "bands are not chunks here");
    // The first sentence split too: its marker is the only one at x = 0.
    let mut e = e;
    (e.sentences[0].reason, e.sentences[0].forced) = (Some(SplitReason::Start), true);
    assert_eq!(count(&render_svg(&e, &labels()), "class=\"cut forced\""), 2);
}

#[test]
fn bands_tile_the_x_axis_from_cut_to_cut() {
    let e = explanation(1.3, &[None, Some(0.5), Some(2.0), Some(0.5)], &[(2, "threshold")]);
    let svg = render_svg(&e, &labels());
    // Four sentences over LEFT..RIGHT: the second band starts half way.
    let widths: Vec<f64> = svg
        .lines()
        .filter(|l| l.contains("class=\"band\""))
        .map(|l| l.split("width=\"").nth(1).unwrap().split('"').next().unwrap().parse().unwrap())
        .collect();
    assert_eq!(widths.len(), 2);
    assert!((widths[0] - widths[1]).abs() < 0.2 && (widths[0] + widths[1] - (RIGHT - LEFT)).abs() < 0.2, "{widths:?}");
}

#[test]
fn merged_cuts_are_rings_not_markers() {
    let e = explanation(1.3, &[None, Some(0.5), Some(2.0), Some(0.5)], &[(2, "merged")]);
    let svg = render_svg(&e, &labels());
    check_well_formed(&svg);
    assert_eq!(count(&svg, "class=\"cut "), 0);
    assert_eq!(count(&svg, "class=\"merged\""), 1);
    assert_eq!(count(&svg, "class=\"band\""), 1);
    assert!(svg.contains("cut undone for min_size"));
}

#[test]
fn labels_are_escaped() {
    let labels = PlotLabels {
        method: "model <evil> & \"co\"".into(),
        score_axis: "a < b & c > d".into(),
        threshold_name: "t<&>".into(),
        scores_are_distances: true,
    };
    // A cut's reason is a name from a closed set (SplitReason), so no label of it needs escaping.
    let mut e = explanation(0.5, &[None, Some(0.2), Some(0.9)], &[(2, "threshold")]);
    e.sentences[2].distance = Some(0.7);
    let svg = render_svg(&e, &labels);
    check_well_formed(&svg);
    assert!(svg.contains("model &lt;evil&gt; &amp; &quot;co&quot;"));
    assert!(svg.contains("a &lt; b &amp; c &gt; d"));
    assert!(svg.contains("t&lt;&amp;&gt; 0.5"));
    assert!(!svg.contains("<evil>") && !svg.contains("t<&>"));
    assert_eq!(escape("\u{1}x"), "\u{FFFD}x");
}

#[test]
fn documents_without_gaps_still_give_a_valid_picture() {
    for (sentences, says) in [(0, "no sentences"), (1, "one sentence")] {
        let e = explanation(f64::NAN, &vec![None; sentences], &[]);
        let svg = render_svg(&e, &labels());
        check_well_formed(&svg);
        assert!(svg.to_lowercase().contains(says), "{svg}");
        assert!(!svg.contains("NaN"));
        assert_eq!(count(&svg, "class=\"band\""), 0);
    }
}

#[test]
fn missing_and_non_finite_values_break_the_curve_and_never_reach_the_svg() {
    let scores = [None, Some(0.4), Some(f64::NAN), Some(0.8), None, Some(f64::INFINITY), Some(0.6), Some(0.2)];
    let e = explanation(f64::NAN, &scores, &[(3, "threshold")]);
    let svg = render_svg(&e, &labels());
    check_well_formed(&svg);
    for bad in ["NaN", "inf"] {
        assert!(!svg.contains(bad), "{bad} in the SVG");
    }
    // A NaN threshold draws no line; the curve is three pieces.
    assert_eq!(count(&svg, "class=\"threshold\""), 0);
    let path = svg.lines().find(|l| l.contains("class=\"score\"")).unwrap();
    assert_eq!(count(path, "M"), 3, "{path}");
}

#[test]
fn equal_scores_get_a_usable_axis() {
    for value in [0.0, 0.7, -0.3] {
        let e = explanation(value, &[None, Some(value), Some(value), Some(value)], &[]);
        let svg = render_svg(&e, &labels());
        check_well_formed(&svg);
        assert!(!svg.contains("NaN") && !svg.contains("inf"), "value {value}");
        assert_eq!(count(&svg, "class=\"threshold\""), 1);
        let axis = Axis::covering([value].into_iter());
        assert!(
            axis.hi > axis.lo && axis.lo <= value && value <= axis.hi && axis.ticks().count() >= 2,
            "value {value}"
        );
    }
}

#[test]
fn hundreds_of_sentences_thin_the_ticks_and_drop_the_dots() {
    let scores: Vec<Option<f64>> = (0..600).map(|i| (i > 0).then(|| (i % 37) as f64 / 10.0)).collect();
    let cuts: Vec<(usize, &str)> = (1..600).filter(|i| i % 37 == 0).map(|i| (i, "threshold")).collect();
    let e = explanation(2.0, &scores, &cuts);
    let svg = render_svg(&e, &labels());
    check_well_formed(&svg);
    assert_eq!(count(&svg, "class=\"cut "), cuts.len());
    assert_eq!(count(&svg, "class=\"band\""), cuts.len() + 1);
    let x_ticks = svg.lines().filter(|l| l.starts_with("<line") && l.contains(&format!("y1=\"{BOTTOM}\""))).count();
    assert!((5..=15).contains(&x_ticks), "{x_ticks} x ticks");
    assert_eq!(count(&svg, "<circle"), 0);
}

#[test]
fn tick_steps_are_round_numbers() {
    let cases = [(0.3, 0.5), (1.0, 1.0), (1.1, 2.0), (4.0, 5.0), (0.071, 0.1), (12.0, 20.0)];
    for (raw, step) in cases {
        assert!((nice_step(raw) - step).abs() < 1e-12, "nice_step({raw}) = {}", nice_step(raw));
    }
    for (n, step) in [(2, 1), (15, 1), (16, 2), (30, 2), (31, 5), (75, 5), (76, 10), (600, 50)] {
        assert_eq!(x_tick_step(n), step, "n = {n}");
    }
}

#[test]
fn labels_follow_the_method() {
    let optimal = labels();
    assert!(!optimal.scores_are_distances && optimal.threshold_name == "penalty");
    let cfg = ChunkConfig::parse(
        &serde_json::json!({"method": "threshold", "threshold": {"type": "percentile", "value": 90}}),
    )
    .unwrap();
    let threshold = PlotLabels::for_config(&cfg, "m");
    assert!(
        threshold.scores_are_distances
            && threshold.score_axis == "smoothed distance"
            && threshold.method.contains("percentile 90")
    );
    let cfg =
        ChunkConfig::parse(&serde_json::json!({"method": "threshold", "threshold": {"type": "gradient"}})).unwrap();
    assert!(!PlotLabels::for_config(&cfg, "m").scores_are_distances, "a gradient is not a distance");
    assert_eq!((number(1.30000001, 3), number(-0.0001, 2), number(2.0, 0)), ("1.3".into(), "0".into(), "2".into()));
}

#[test]
fn an_inline_document_is_one_band_and_says_why() {
    let mut e = explanation(1.3, &[None, Some(2.0), Some(0.5)], &[]);
    e.sentences[0].reason = Some(SplitReason::Inline);
    let svg = render_svg(&e, &labels());
    check_well_formed(&svg);
    assert_eq!(count(&svg, "class=\"band\""), 1);
    assert!(svg.contains("kept whole"));
}

#[test]
fn the_method_line_says_what_a_cut_inside_a_paragraph_costs_more() {
    let mut e = explanation(1.3, &[None, Some(0.2), Some(1.9)], &[(2, "threshold")]);
    let method = ">optimal segmentation, penalty 1.3, model lexical</text>";
    assert!(render_svg(&e, &labels()).contains(method), "no paragraphs, nothing said");
    e.paragraph_penalty = 0.5;
    let svg = render_svg(&e, &labels());
    assert!(
        svg.contains(">optimal segmentation, penalty 1.3, model lexical; scores inside a paragraph less 0.5</text>")
    );
}
