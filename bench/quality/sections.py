"""Writes the prose sections of the Python 3.11 documentation's reST sources as CSV rows
(page, section, text), for bench/quality/run.sh.

    python3 sections.py SOURCES_DIR OUT.csv

SOURCES_DIR is html/_sources of Debian's python3.11-doc. A section starts at a heading (a line
underlined, and maybe overlined, with one punctuation character repeated at least as long as
the title). Its text keeps only running prose: unindented paragraphs that are not directives,
comments, lists, tables or field lists, so that code, tables and examples (indented or behind
directives) never enter. Inline markup is reduced to its text (:role:`x <t>` → x, ``x`` → x,
*x* → x), a paragraph's lines are joined by spaces, and paragraphs are separated by a blank line.
"""

import csv
import re
import sys
from pathlib import Path

UNDERLINE = re.compile(r"^([=\-~^*#\"'`:.+_])\1{2,}\s*$")
NOT_PROSE = re.compile(r"^(\.\.|[*\-+|=]\s|[*\-+]$|\d+\.\s|#\.\s|:\w[^:]*:|>>>|\+[-=])")


def plain(text):
    text = re.sub(r":[\w:.-]+:`!?~?([^`<]*?)\s*(<[^`>]*>)?`", r"\1", text)  # roles
    text = re.sub(r"``([^`]*)``", r"\1", text)  # literals
    text = re.sub(r"`([^`<]*?)\s*(<[^`>]*>)?`_{0,2}", r"\1", text)  # references
    text = re.sub(r"\*\*([^*]+)\*\*|\*([^*]+)\*", lambda m: m.group(1) or m.group(2), text)
    text = re.sub(r"::$", ":", text)
    return re.sub(r"\s+", " ", text).strip()


def sections(lines):
    """(title, [paragraph, ...]) for each section of one page."""
    title, paragraphs, current = None, [], []

    def end_paragraph():
        if current and not NOT_PROSE.match(current[0]):
            paragraphs.append(plain(" ".join(current)))
        current.clear()

    i = 0
    while i < len(lines):
        line = lines[i].rstrip("\n")
        following = lines[i + 1].rstrip("\n") if i + 1 < len(lines) else ""
        if line.strip() and not line[0].isspace() and UNDERLINE.match(following) and len(following.strip()) >= len(line.strip()):
            end_paragraph()
            if title is not None:
                yield title, paragraphs
            title, paragraphs = plain(line), []
            i += 2
            continue
        if UNDERLINE.match(line):  # an overline, or a stray rule
            end_paragraph()
        elif not line.strip() or line[0].isspace():
            end_paragraph()
        else:
            current.append(line.strip())
        i += 1
    end_paragraph()
    if title is not None:
        yield title, paragraphs


def main():
    sources, out = Path(sys.argv[1]), sys.argv[2]
    with open(out, "w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        for path in sorted(sources.rglob("*.rst.txt")):
            page = str(path.relative_to(sources)).removesuffix(".rst.txt")
            for title, paragraphs in sections(path.read_text(encoding="utf-8").splitlines()):
                text = "\n\n".join(p for p in paragraphs if p)
                if text:
                    writer.writerow([page, title, text])


if __name__ == "__main__":
    main()
