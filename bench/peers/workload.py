"""Builds the side-by-side benchmark's workload: plain-text documents from two Debian packages.

    python3 workload.py --deb PYTHON_DOC.deb --deb POSTGRESQL_DOC.deb --out DIR [--max-bytes N]

Sources (fetched by run.sh with `apt-get download`):
  python3.11-doc      the reST sources of the Python 3.11 manual (html/_sources/**/*.rst.txt)
  postgresql-doc-15   the HTML pages of the PostgreSQL 15 manual (html/*.html)

Each page becomes one document of plain text the way a user would feed a chunker: headings and
prose paragraphs one line each (wrapped lines joined by a space, inline markup reduced to its
text), code examples and literal blocks kept line by line, paragraphs separated by a blank line.
Navigation, tables of contents, index entries and reST directives that hold no text are dropped.
Documents under MIN_BYTES are left out; those over MAX_BYTES are cut at paragraph boundaries into
near-equal parts (name.1.txt, name.2.txt, ...).

The selection is deterministic: every candidate is ordered by the SHA-256 of its name (which mixes
the two manuals and all sizes) and taken until the total reaches --max-bytes (default 5,000,000
bytes: the issue's "at least 5 MB"; MB = 10^6 bytes throughout the benchmark).

Writes into DIR:
  docs/NAME.txt       the documents, UTF-8
  manifest.tsv        name <TAB> bytes <TAB> characters <TAB> source package, in name order, no
                      header (for COPY ... FROM with the text format)
  manifest.json       the same, plus the packages (file name and SHA-256), the totals, the
                      first-call document and the sentence sample's file
  sentences.txt       a fixed sample of the documents' sentences, one a line, for the embedding
                      stage alone (--sentences, default 5,000)
"""

import argparse
import hashlib
import html.parser
import json
import re
import shutil
import subprocess
import tempfile
import textwrap
from pathlib import Path

MIN_BYTES = 2_000
MAX_BYTES = 200_000

# ---------------------------------------------------------------------------------------------
# reST (python3.11-doc)

UNDERLINE = re.compile(r"^([=\-~^*#\"'`:.+_])\1{2,}\s*$")
TABLE_RULE = re.compile(r"^\s*[+=][-=+ ]*$")
BULLET = re.compile(r"^([*\-+]|\d+\.|#\.)\s+")
DIRECTIVE = re.compile(r"^\.\.\s+([\w:-]+)::\s*(.*)$")
# Directives whose body is code; their body is kept line by line.
CODE_DIRECTIVES = {"code-block", "code", "sourcecode", "doctest", "testcode", "testoutput", "productionlist"}
# Directives whose argument is an API signature: the signature is kept as a line of its own and
# the (indented) body is prose.
SIGNATURE_DIRECTIVES = {
    "function", "method", "classmethod", "staticmethod", "class", "attribute", "data", "exception",
    "decorator", "decoratormethod", "opcode", "cmdoption", "option", "envvar", "describe",
    "abstractmethod", "coroutinefunction", "coroutinemethod", "awaitablefunction", "pdbcommand",
    "c:function", "c:macro", "c:type", "c:member", "c:var",
}
# Directives whose argument and body are prose (notes, version remarks).
PROSE_DIRECTIVES = {
    "note", "warning", "seealso", "versionadded", "versionchanged", "deprecated", "impl-detail",
    "deprecated-removed", "important", "tip", "caution", "attention", "hint", "admonition", "topic",
    "rubric", "glossary",
}


def plain(text):
    """A reST paragraph's text without inline markup, on one line."""
    text = re.sub(r":[\w:.-]+:`!?~?([^`<]*?)\s*(<[^`>]*>)?`", r"\1", text)  # roles
    text = re.sub(r"``([^`]*)``", r"\1", text)  # literals
    text = re.sub(r"`([^`<]*?)\s*(<[^`>]*>)?`_{0,2}", r"\1", text)  # references
    text = re.sub(r"\*\*([^*]+)\*\*|\*([^*\s][^*]*)\*", lambda m: m.group(1) or m.group(2), text)
    text = re.sub(r"\|(\w[^|]*)\|", r"\1", text)  # substitutions
    return re.sub(r"\s+", " ", text).strip()


def indent_of(line):
    return len(line) - len(line.lstrip(" "))


def rst_blocks(lines):
    """Runs of non-blank lines, with the indentation of their first line."""
    block = []
    for line in lines:
        if line.strip():
            block.append(line.rstrip().expandtabs(8))
        elif block:
            yield block
            block = []
    if block:
        yield block


def rst_text(source):
    """The plain text of one reST page."""
    paragraphs = []
    code_indent = None  # inside a literal block: the indentation it must keep
    code_next = False  # the previous paragraph announced a literal block ("::" or a directive)

    def code(block):
        paragraphs.append(textwrap.dedent("\n".join(block)).rstrip())

    def prose(block):
        """A block of prose lines, list items split apart; returns whether it announces code."""
        items, current = [], []
        base = indent_of(block[0])
        for line in block:
            if indent_of(line) <= base and BULLET.match(line.strip()) and current:
                items.append(current)
                current = []
            current.append(line.strip())
        items.append(current)
        announces = False
        for item in items:
            text = plain(" ".join(item))
            announces = text.endswith("::")
            if announces:
                text = text[:-2].rstrip()
                text = text + ":" if text and not text.endswith(":") else text
            if text:
                paragraphs.append(text)
        return announces

    for block in rst_blocks(source.splitlines()):
        indent = indent_of(block[0])
        first = block[0].strip()
        if code_indent is not None and indent >= code_indent:
            code(block)
            continue
        code_indent = None
        if code_next and indent > 0:
            code_indent = indent
            code_next = False
            code(block)
            continue
        code_next = False
        if first.startswith(">>>"):
            code(block)
            continue
        if TABLE_RULE.match(block[0]) or first.startswith("|"):
            continue  # grid and simple tables, line blocks
        if len(block) >= 2 and UNDERLINE.match(block[-1]) and not UNDERLINE.match(block[-2]):
            heading = [line for line in block if not UNDERLINE.match(line)]
            paragraphs.append(plain(" ".join(heading)))
            continue
        if all(UNDERLINE.match(line) for line in block):
            continue  # a transition
        if first.startswith(".."):
            match = DIRECTIVE.match(first)
            if not match:
                continue  # a comment or a link target
            name, argument = match.group(1), match.group(2)
            rest = [line for line in block[1:] if not re.match(r"^\s*:[\w-]+:", line)]
            if name in CODE_DIRECTIVES:
                code_next = True
                if rest:
                    code(rest)
            elif name in SIGNATURE_DIRECTIVES:
                signatures = [argument] + [line.strip() for line in rest if line.strip()]
                paragraphs.append("\n".join(plain(s) for s in signatures if s))
            elif name in PROSE_DIRECTIVES:
                if argument:
                    paragraphs.append(plain(argument))
                if rest:
                    code_next = prose(rest)
            continue  # any other directive holds no text of its own (index, toctree, module, ...)
        code_next = prose(block)
    return "\n\n".join(p for p in paragraphs if p.strip())


# ---------------------------------------------------------------------------------------------
# HTML (postgresql-doc-15)

BLOCK_TAGS = {"p", "div", "li", "dt", "dd", "h1", "h2", "h3", "h4", "h5", "h6", "tr", "table",
              "blockquote", "ul", "ol", "dl", "br", "hr", "caption", "pre"}
SKIPPED_CLASSES = {"navheader", "navfooter", "toc", "list-of-tables", "list-of-figures", "list-of-examples"}
VOID_TAGS = {"br", "hr", "img", "meta", "link", "input", "col", "area", "base", "wbr"}


class HtmlText(html.parser.HTMLParser):
    """Paragraphs of a DocBook HTML page: block elements end a paragraph, <pre> is kept as is."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.paragraphs = []
        self.current = []
        self.stack = []  # open elements: (tag, skipped)
        self.skipping = 0
        self.pre = 0

    def flush(self):
        text = "".join(self.current)
        self.current = []
        if self.pre:
            return
        text = re.sub(r"\s+", " ", text).strip()
        if text:
            self.paragraphs.append(text)

    def handle_starttag(self, tag, attrs):
        if tag in VOID_TAGS:
            if tag in BLOCK_TAGS and not self.skipping and not self.pre:
                self.flush()
            return
        classes = set((dict(attrs).get("class") or "").split())
        skipped = tag in {"head", "script", "style"} or bool(classes & SKIPPED_CLASSES)
        self.stack.append((tag, skipped))
        if skipped:
            self.skipping += 1
        if self.skipping:
            return
        if tag in BLOCK_TAGS:
            self.flush()
        if tag == "pre":
            self.pre += 1
        elif tag in {"td", "th"}:
            self.current.append(" ")

    def handle_endtag(self, tag):
        if tag in VOID_TAGS or not any(t == tag for t, _ in self.stack):
            return
        while self.stack:
            open_tag, skipped = self.stack.pop()
            if not self.skipping:
                if open_tag == "pre":
                    self.pre -= 1
                    block = textwrap.dedent("".join(self.current).strip("\n")).rstrip()
                    self.current = []
                    if block.strip():
                        self.paragraphs.append(block)
                elif open_tag in BLOCK_TAGS:
                    self.flush()
            if skipped:
                self.skipping -= 1
            if open_tag == tag:
                break

    def handle_data(self, data):
        if not self.skipping:
            self.current.append(data)


def html_text(source):
    parser = HtmlText()
    parser.feed(source)
    parser.close()
    parser.flush()
    return "\n\n".join(parser.paragraphs)


# ---------------------------------------------------------------------------------------------


def candidates(root):
    """(name, package, text) for every page of both manuals found under `root`."""
    py = root / "usr/share/doc/python3.11/html/_sources"
    for path in sorted(py.rglob("*.rst.txt")):
        relative = path.relative_to(py).as_posix()[: -len(".rst.txt")]
        yield "py-" + relative.replace("/", "-"), "python3.11-doc", rst_text(path.read_text(encoding="utf-8"))
    pg = root / "usr/share/doc/postgresql-doc-15/html"
    for path in sorted(pg.glob("*.html")):
        if path.name in {"bookindex.html", "index.html"}:
            continue
        yield "pg-" + path.stem, "postgresql-doc-15", html_text(path.read_text(encoding="utf-8"))


def parts(name, text):
    """(name, text) pieces of at most MAX_BYTES, cut between paragraphs into near-equal sizes."""
    size = len(text.encode())
    if size <= MAX_BYTES:
        return [(name, text)]
    count = -(-size // (MAX_BYTES * 9 // 10))
    target = size / count
    pieces, current, current_size = [], [], 0
    for paragraph in text.split("\n\n"):
        paragraph_size = len(paragraph.encode()) + 2
        if current and (current_size + paragraph_size > MAX_BYTES or current_size >= target):
            pieces.append("\n\n".join(current))
            current, current_size = [], 0
        current.append(paragraph)
        current_size += paragraph_size
    pieces.append("\n\n".join(current))
    return [(f"{name}.{i}", piece) for i, piece in enumerate(pieces, 1) if len(piece.encode()) <= MAX_BYTES]


SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z])")


def sentence_sample(texts, count):
    """`count` distinct sentences (30-299 characters, a capital first, . ! or ? last), by hash."""
    seen = set()
    for text in texts:
        for paragraph in text.split("\n\n"):
            if "\n" in paragraph:
                continue  # code and signatures
            for sentence in SENTENCE_END.split(paragraph):
                if 30 <= len(sentence) < 300 and sentence[0].isupper() and sentence[-1] in ".!?":
                    seen.add(sentence)
    ordered = sorted(seen, key=lambda s: hashlib.sha256(s.encode()).hexdigest())
    if len(ordered) < count:
        raise SystemExit(f"only {len(ordered)} sentences in the workload, {count} asked")
    return ordered[:count]


def sha256_of(path):
    digest = hashlib.sha256()
    with open(path, "rb") as file:
        for block in iter(lambda: file.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--deb", type=Path, action="append", required=True, help="a .deb to read (repeat)")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--max-bytes", type=int, default=5_000_000, help="stop once the documents reach this total")
    parser.add_argument("--sentences", type=int, default=5000, help="sentences in sentences.txt")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as extracted:
        root = Path(extracted)
        for deb in args.deb:
            subprocess.run(["dpkg-deb", "-x", str(deb), str(root)], check=True)
        pool = []
        for name, package, text in candidates(root):
            for part_name, part in parts(name, text):
                if len(part.encode()) >= MIN_BYTES:
                    pool.append((part_name, package, part + "\n"))

    pool.sort(key=lambda c: hashlib.sha256(c[0].encode()).hexdigest())
    chosen, total = [], 0
    for candidate in pool:
        if total >= args.max_bytes:
            break
        chosen.append(candidate)
        total += len(candidate[2].encode())
    if total < args.max_bytes:
        raise SystemExit(f"the packages give only {total} bytes of documents, {args.max_bytes} asked")
    chosen.sort()

    docs = args.out / "docs"
    if docs.exists():
        shutil.rmtree(docs)
    docs.mkdir(parents=True)
    rows = []
    for name, package, text in chosen:
        (docs / f"{name}.txt").write_text(text, encoding="utf-8")
        rows.append({"name": f"{name}.txt", "bytes": len(text.encode()), "chars": len(text), "source": package})
    with open(args.out / "manifest.tsv", "w", encoding="utf-8") as file:
        for row in rows:
            file.write(f"{row['name']}\t{row['bytes']}\t{row['chars']}\t{row['source']}\n")

    sentences = sentence_sample((text for _, _, text in chosen), args.sentences)
    (args.out / "sentences.txt").write_text("".join(s + "\n" for s in sentences), encoding="utf-8")

    # The first-call measurement chunks the document of median size, in a fresh process.
    by_size = sorted(rows, key=lambda r: (r["bytes"], r["name"]))
    manifest = {
        "packages": [{"file": deb.name, "sha256": sha256_of(deb)} for deb in args.deb],
        "max_bytes": args.max_bytes,
        "documents": len(rows),
        "bytes": sum(r["bytes"] for r in rows),
        "chars": sum(r["chars"] for r in rows),
        "by_source": {p: sum(1 for r in rows if r["source"] == p) for p in sorted({r["source"] for r in rows})},
        "first_call_document": by_size[len(by_size) // 2]["name"],
        "sentences_file": "sentences.txt",
        "sentences": len(sentences),
        "files": rows,
    }
    (args.out / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
    sizes = [r["bytes"] for r in by_size]
    print(
        f"{len(rows)} documents, {manifest['bytes']:,} bytes ({manifest['by_source']}), sizes "
        f"{sizes[0]:,}-{sizes[-1]:,} (median {sizes[len(sizes) // 2]:,}); {len(sentences)} sentences"
    )


if __name__ == "__main__":
    main()
