"""Builds the question sets of bench/retrieval/run.sh: documents, queries and their answer spans.

    python3 sets.py faq SOURCES_DIR OUT_DIR
    python3 sets.py howto SOURCES_DIR OUT_DIR
    python3 sets.py tutorial SOURCES_DIR OUT_DIR
    python3 sets.py sections SAMPLES.csv SEGMENTS.csv TITLES.csv OUT_DIR

Each writes OUT_DIR/documents-<set>.csv, rows (doc, set, title, content), and
OUT_DIR/queries-<set>.csv, rows (set, query, text, doc, char_offset, char_length), one row per
answer span; offsets count characters (Python str indexes) from 0. Every span is checked to lie
inside its document and to be non-empty. A query text asked twice in a set is one query, whose
answers are all its spans.

faq: the pages faq/*.rst.txt of SOURCES_DIR (html/_sources of python3.11-doc) but index, as plain
text (rst.py), the page title as "# Title" and the categories ("===="-underlined) as "## Category";
each question ("----"-underlined) is a query, left out of the text, answered by its answer's text.
howto: the pages howto/*.rst.txt but index and LEFT_OUT, as text with the page title as "# Title";
every heading below it is left out of the text, and each that has a space in it is a query,
answered by its section's own text up to the next heading (a section with no text of its own is
not asked).
tutorial: the pages tutorial/*.rst.txt but index, as howto's: a fourth set, kept out of the
default run, to check a lever tuned on the other three.
sections: bench/quality's segmentation samples (samples.py's OUT.csv and --segments output):
each sample is a document, its sentences joined by single spaces (segment.sql's q_docs); each
distinct title with a space among the samples' sections (TITLES.csv: rows q_sections.id, title)
is a query, answered by every segment (first sentence to last) of a section with that title.
"""

import csv
import sys
from collections import defaultdict
from pathlib import Path

sys.dont_write_bytecode = True  # no __pycache__ in the repository (rst.py, bench/quality/sections.py)
import rst  # noqa: E402

# The largest HOWTOs, left out to keep the set under 400 KB of text (419 KB with regex):
# logging-cookbook (156 KB of reST), clinic (68 KB, Argument Clinic) and regex (63 KB).
LEFT_OUT = {"logging-cookbook", "clinic", "regex"}

# What becomes of a page's headings, by level and style (character, overlined): the FAQ's
# categories are underlined with "=", its questions with "-".
ROLES = {
    "faq": lambda level, style: "keep" if level == 1 or style == ("=", False) else "drop",
    "howto": lambda level, style: "keep" if level == 1 else "drop",
    "tutorial": lambda level, style: "keep" if level == 1 else "drop",
}


def write_set(out_dir, name, documents, queries):
    """documents: {doc: (title, content)}; queries: {text: [(doc, start, end), ...]}, in order."""
    with open(Path(out_dir) / f"documents-{name}.csv", "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        for doc, (title, content) in documents.items():
            w.writerow([doc, name, title, content])
    with open(Path(out_dir) / f"queries-{name}.csv", "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        for n, (text, spans) in enumerate(queries.items(), 1):
            for doc, start, end in spans:
                content = documents[doc][1]
                if not 0 <= start < end <= len(content) or not content[start:end].strip():
                    sys.exit(f"{name}: the answer to {text!r} ({doc} {start}-{end}) is empty or outside it")
                w.writerow([name, f"{name}-{n}", text, doc, start, end - start])
    size = sum(len(c) for _, c in documents.values())
    print(f"{name}: {len(documents)} documents, {size / 1000:.0f} KB, {len(queries)} queries, "
          f"{sum(map(len, queries.values()))} answer spans")


def pages(sources, name):
    documents, queries = {}, defaultdict(list)
    for path in sorted((Path(sources) / name).glob("*.rst.txt")):
        page = path.name.removesuffix(".rst.txt")
        if page == "index" or (name == "howto" and page in LEFT_OUT):
            continue
        content, sections = rst.page(path.read_text(encoding="utf-8"), ROLES[name])
        doc = f"{name}/{page}"
        documents[doc] = (content.split("\n", 1)[0].removeprefix("# "), content)
        for title, level, start, end in sections:
            if name == "faq" or (" " in title and start < end):
                queries[title].append((doc, start, end))
    return documents, queries


def sections(samples, segments, titles):
    sentences = defaultdict(list)  # sample → [(segment, sentence)] in document order
    for sample, _range, segment, sentence in csv.reader(open(samples, newline="", encoding="utf-8")):
        sentences[sample].append((segment, sentence))
    title_of = dict(csv.reader(open(titles, newline="", encoding="utf-8")))
    documents, spans = {}, {}
    for sample, rows in sentences.items():
        offset, content = 0, []
        for segment, sentence in rows:
            start, end = spans.get((sample, segment), (offset, offset))
            spans[sample, segment] = (start, offset + len(sentence))
            content.append(sentence)
            offset += len(sentence) + 1
        documents[f"sample-{sample}"] = (f"Sample {sample}", " ".join(content))
    queries = defaultdict(list)
    for sample, segment, section in sorted(csv.reader(open(segments, newline="", encoding="utf-8")),
                                           key=lambda r: (title_of[r[2]], int(r[0]), int(r[1]))):
        if " " in title_of[section]:
            queries[title_of[section]].append((f"sample-{sample}", *spans[sample, segment]))
    return documents, queries


def main():
    kind, *args = sys.argv[1:]
    if kind == "sections":
        write_set(args[3], kind, *sections(*args[:3]))
    else:
        write_set(args[1], kind, *pages(args[0], kind))


if __name__ == "__main__":
    main()
