"""Writes the prose of PostgreSQL's SQL reference pages (man section 7) as CSV rows (page, text).

/usr/share/common-licenses holds only 563 distinct sentences that corpus.sql keeps, so
the benchmark corpus continues with these pages, which postgresql-client-15 installs wherever
the cluster runs. They are troff written by DocBook in a regular form, so a small converter
suffices: sections NAME, SYNOPSIS and SEE ALSO, code blocks (.nf … .fi) and tables (.TS … .TE)
are dropped; every other macro line ends a paragraph; the text lines of a paragraph are joined
by spaces, with troff escapes replaced by the characters they stand for. Paragraphs are
separated by blank lines, so knowledge.split_sentences never joins two of them.
"""

import argparse
import csv
import gzip
import re
import sys
from pathlib import Path

SKIPPED_SECTIONS = {"NAME", "SYNOPSIS", "SEE ALSO"}
SPECIAL_CHARACTERS = {
    "aq": "'", "dq": '"', "lq": '"', "rq": '"', "oq": "'", "cq": "'", "em": "\u2014", "en": "\u2013",
    "bu": "\u2022", "ti": "~", "ha": "^", "rs": "\\", "mi": "-", "hy": "-", "pl": "+", "eq": "=",
    "co": "\u00a9", "tm": "\u2122", "rg": "\u00ae", "de": "\u00b0", "mu": "\u00d7",
}
STRINGS = {"Aq": "'"}


def unescape(line):
    line = re.sub(r"\\f(\(..|\[[^]]*\]|.)", "", line)  # font changes
    line = re.sub(r"\\\*(\((..)|\[([^]]*)\]|(.))", lambda m: STRINGS.get(m.group(2) or m.group(3) or m.group(4), ""), line)
    line = re.sub(r"\\\((..)", lambda m: SPECIAL_CHARACTERS.get(m.group(1), ""), line)
    line = re.sub(r"\\\[([^]]*)\]", lambda m: SPECIAL_CHARACTERS.get(m.group(1), ""), line)
    line = re.sub(r"\\[&%:|^]", "", line)  # zero-width escapes
    line = line.replace("\\e", "\\").replace("\\-", "-").replace("\\ ", " ").replace("\\~", " ")
    return re.sub(r"\\(.)", r"\1", line)


def paragraphs(troff):
    """The prose paragraphs of one man page, in order."""
    found, current = [], []
    section, skipping_block = "", None

    def end_paragraph():
        if current:
            found.append(" ".join(current))
            current.clear()

    for line in troff.splitlines():
        if skipping_block:
            if line.startswith(skipping_block):
                skipping_block = None
            continue
        if line.startswith((".nf", ".TS")):
            end_paragraph()
            skipping_block = ".fi" if line.startswith(".nf") else ".TE"
            continue
        if line.startswith((".", "'")):
            end_paragraph()
            if line.startswith((".SH", ".SS")):
                section = line[3:].strip().strip('"')
            continue
        if section in SKIPPED_SECTIONS:
            continue
        text = unescape(line).strip()
        if text:
            current.append(text)
    end_paragraph()
    return found


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--man-dir", type=Path, default=Path("/usr/share/postgresql/15/man/man7"))
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    pages = sorted(args.man_dir.glob("*.7.gz"))
    if not pages:
        sys.exit(f"no *.7.gz in {args.man_dir}: is postgresql-client-15 installed?")
    with args.out.open("w", encoding="utf-8", newline="") as out:
        writer = csv.writer(out)
        for page in pages:
            text = gzip.decompress(page.read_bytes()).decode("utf-8", errors="replace")
            prose = "\n\n".join(paragraphs(text))
            if prose:  # a page that only includes another (".so") has none
                writer.writerow([page.name.removesuffix(".7.gz"), prose])


if __name__ == "__main__":
    main()
