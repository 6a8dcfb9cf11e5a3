//! `knowledge.chunk_plot` inside PostgreSQL, with the lexical model (no model files needed).

#[pgrx::pg_schema]
mod tests {
    use crate::tests::support::{one, sqlstate_of};
    use pgrx::prelude::*;

    /// Two topics, six sentences each, long enough to be chunked with inline_threshold 0.
    const DOC: &str = "The cat and the kitten sleep. A cat and a kitten purr softly. Every kitten follows the cat. \
    The cat feeds the kitten milk. A kitten and a cat play with yarn. The old cat watches the kitten. \
    The Rust compiler checks borrows. Rust borrows are checked by the compiler. The compiler rejects bad Rust borrows. \
    Cargo runs the Rust compiler. Rust compiler errors explain borrows. The borrow checker is part of the Rust compiler.";

    const CFG: &str = r#"{"model": "lexical", "inline_threshold": 0, "min_size": 100}"#;

    #[pg_test]
    fn chunk_plot_draws_a_band_per_chunk_and_a_marker_per_cut() {
        let svg = one::<String>(&format!("SELECT knowledge.chunk_plot('{DOC}', '{CFG}')"));
        assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"), "{svg:.200}");
        let chunks = one::<i64>(&format!("SELECT count(*) FROM knowledge.chunk('{DOC}', '{CFG}')"));
        assert!(chunks >= 2, "the document should be cut: {chunks} chunk(s)");
        assert_eq!(svg.matches("class=\"band\"").count() as i64, chunks);
        assert_eq!(svg.matches("class=\"cut ").count() as i64, chunks - 1);
        assert_eq!(svg.matches("class=\"threshold\"").count(), 1);
        assert!(svg.contains("model lexical") && svg.contains("penalty 1.3"), "{svg:.400}");
    }

    #[pg_test]
    fn chunk_plot_labels_the_threshold_method_by_its_rule() {
        let cfg = r#"{"model": "lexical", "inline_threshold": 0, "method": "threshold", "threshold": {"type": "percentile", "value": 90}}"#;
        let svg = one::<String>(&format!("SELECT knowledge.chunk_plot('{DOC}', '{cfg}')"));
        assert!(
            svg.contains("percentile 90") && svg.contains("smoothed distance") && svg.contains("class=\"distance\""),
            "{svg:.400}"
        );
    }

    #[pg_test]
    fn chunk_plot_of_null_is_null_and_of_nothing_is_a_picture_saying_so() {
        assert_eq!(Spi::get_one::<String>("SELECT knowledge.chunk_plot(NULL)").unwrap(), None);
        let svg = one::<String>("SELECT knowledge.chunk_plot('   ', '{\"model\": \"lexical\"}')");
        assert!(svg.starts_with("<svg") && svg.contains("no sentences"), "{svg}");
        let svg = one::<String>("SELECT knowledge.chunk_plot('Only one sentence here.', '{\"model\": \"lexical\"}')");
        assert!(svg.starts_with("<svg") && svg.contains("one sentence"), "{svg}");
    }

    #[pg_test]
    fn chunk_plot_raises_22023_for_a_bad_configuration() {
        for cfg in [r#"{"colour": "blue"}"#, r#"{"method": "valleys"}"#, r#"{"strategy": "fixed"}"#, r#"[1, 2]"#] {
            assert_eq!(sqlstate_of(&format!("SELECT knowledge.chunk_plot('Some text.', '{cfg}')")), "22023", "{cfg}");
        }
        assert_eq!(
            sqlstate_of(&format!(
                "SELECT knowledge.chunk_plot('{DOC}', '{{\"model\": \"no-such-model\", \"inline_threshold\": 0}}')"
            )),
            "42704"
        );
    }
}
