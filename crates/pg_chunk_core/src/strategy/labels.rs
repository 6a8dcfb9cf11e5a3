//! The names chunks carry in their metadata: why a chunk starts where it does, what a code
//! chunk holds, which Markdown blocks a chunk holds. SQL shows them as `as_str` spells them.

use crate::names::named_enum;

named_enum! {
    /// Why a chunk starts where it does (metadata `split_reason`; `knowledge.chunk_explain`'s
    /// `reason`).
    pub enum SplitReason ("split reason") {
        /// The document's first chunk.
        Start = "start",
        /// The whole document is one chunk: it is below `inline_threshold`.
        Inline = "inline",
        /// The meaning changed: the method's score at the gap is above its threshold.
        Threshold = "threshold",
        /// Only in `chunk_explain`: a meaning cut undone to reach `min_size`.
        Merged = "merged",
        /// The chunk before reached the size cap.
        Size = "size",
        /// The text was cut inside a sentence (or a block, a line) to respect `max_size`.
        Forced = "forced",
        /// The fixed strategy's next window.
        Window = "window",
        /// The recursive strategy: a paragraph starts.
        Paragraph = "paragraph",
        /// The recursive strategy: a sentence of a paragraph above the cap starts.
        Sentence = "sentence",
        /// Code: a definition (function, class, statement) starts.
        CodeBoundary = "code_boundary",
        /// Code: a blank line inside a definition above the cap.
        BlankLine = "blank_line",
        /// Markdown: a heading starts.
        Heading = "heading",
        /// Markdown: a block inside a section starts.
        Block = "block",
        /// Topic coherence: the next sentence shares too few keywords.
        Topic = "topic",
        /// Information density: the chunk's entropy passed the document's.
        Density = "density",
    }
}

named_enum! {
    /// What a code chunk holds (metadata `chunk_type`).
    pub enum ChunkType ("chunk type") {
        /// A function, method, procedure or aggregate.
        Function = "function",
        /// A class, struct, enum, interface, trait, module or namespace.
        Class = "class",
        /// A SQL statement that defines no function.
        Statement = "statement",
        /// The file's first chunk, before its first definition: imports, module comments.
        Module = "module",
        /// Code outside any definition.
        Block = "block",
    }
}

named_enum! {
    /// A Markdown block (metadata `blocks` lists the kinds a chunk holds).
    pub enum BlockKind ("block kind") {
        /// An ATX or Setext heading.
        Heading = "heading",
        /// Text up to a blank line or a block that interrupts it.
        Paragraph = "paragraph",
        /// A fenced code block.
        Code = "code",
        /// Code indented by four columns.
        IndentedCode = "indented_code",
        /// A table of `|`-separated rows.
        Table = "table",
        /// A list item with its continuation lines.
        ListItem = "list_item",
        /// A block quote.
        Quote = "quote",
        /// A thematic break.
        Rule = "rule",
        /// YAML front matter.
        FrontMatter = "front_matter",
    }
}
