"""The scale benchmark's documents: every HTML page of the unpacked Debian documentation
packages under ROOT, as text (one page a document), written as CSV rows (source, body).

    python3 bench/scale/corpus.py ROOT OUT.csv

Scripts, styles and the pages' navigation are dropped, block elements end a paragraph
(a blank line), pages of under 500 characters, repeated pages (the same text) and source code
listings (Doxygen's *_source.html, example files such as ex1.c.html) are left out. The pages are
read in parallel, one process per core, and written in the order of their paths.
Prints the documents and bytes written.
"""
import csv
import hashlib
import html.parser
import multiprocessing
import os
import re
import sys

SKIP = {"script", "style", "nav", "header", "footer", "head", "noscript", "svg"}
BLOCK = {"p", "div", "section", "article", "li", "tr", "pre", "h1", "h2", "h3", "h4", "h5", "h6",
         "dt", "dd", "table", "blockquote", "br", "ul", "ol", "dl"}
# Sphinx's and javadoc's navigation blocks, by class.
SOURCE_LISTING = re.compile(r"(_source\.html?|\.(c|h|cc|cpp|cxx|hpp|hxx|txx|f|f90|py)\.html?)$", re.IGNORECASE)
SKIP_CLASS = re.compile(r"\b(sphinxsidebar|related|footer|navbar|sub-nav|top-nav|bottom-nav|"
                        r"headerlink|toc|navigation|breadcrumbs?)\b")


class Text(html.parser.HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.parts = []
        self.stack = []  # (tag, skipping) of the open elements that can nest

    def skipping(self):
        return bool(self.stack) and self.stack[-1][1]

    def handle_starttag(self, tag, attrs):
        if tag in ("br", "img", "hr", "meta", "link", "input"):
            if tag == "br":
                self.parts.append("\n")
            return
        skip = self.skipping() or tag in SKIP or bool(SKIP_CLASS.search(dict(attrs).get("class") or ""))
        self.stack.append((tag, skip))
        if tag in BLOCK:
            self.parts.append("\n\n")

    def handle_endtag(self, tag):
        for i in range(len(self.stack) - 1, -1, -1):
            if self.stack[i][0] == tag:
                del self.stack[i:]
                break
        if tag in BLOCK:
            self.parts.append("\n\n")

    def handle_data(self, data):
        if not self.skipping():
            self.parts.append(data)

    def text(self):
        paragraphs = (re.sub(r"[ \t\r\f\v\n]+", " ", p).strip() for p in "".join(self.parts).split("\n\n"))
        return "\n\n".join(p for p in paragraphs if p)


def page_text(path):
    parser = Text()
    with open(path, encoding="utf-8", errors="replace") as page:
        parser.feed(page.read())
    return parser.text()


def main(root, out):
    paths = [os.path.join(directory, name)
             for directory, dirs, files in sorted(os.walk(root)) for name in sorted(files)
             if name.endswith((".html", ".htm")) and not SOURCE_LISTING.search(name)]
    seen = set()
    documents = size = 0
    with open(out, "w", newline="", encoding="utf-8") as f, multiprocessing.Pool() as pool:
        writer = csv.writer(f)
        for path, body in zip(paths, pool.imap(page_text, paths, chunksize=16)):
            digest = hashlib.sha256(body.encode()).digest()
            if len(body) < 500 or digest in seen:
                continue
            seen.add(digest)
            writer.writerow([os.path.relpath(path, root), body])
            documents += 1
            size += len(body.encode())
    print(f"{documents} documents, {size / 1e6:.1f} MB")


if __name__ == "__main__":
    main(*sys.argv[1:])
