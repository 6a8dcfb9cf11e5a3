"""The Python documentation's reST sources as plain readable text, for sets.py (bench/retrieval).

    import rst
    content, sections = rst.page(text, role)

blocks(text) reads one page into blocks: ("heading", level, title, style) and ("text", text).
A heading is a line underlined (and maybe overlined) with one punctuation character repeated at
least as long as it, as in bench/quality/sections.py; its level is the order in which its style
(character, overlined or not) first appears on the page, so the page title is level 1. Text:
  - paragraphs with inline markup reduced to its text as bench/quality/sections.py's plain() does
    (:role:`x <t>` → x, ``x`` → x, *x* → x, `x <url>`_ → x), and :pep:`8` → PEP 8, \* → *,
    footnote references dropped; lines joined by spaces; list items, field list entries
    (":Author: X" → "Author: X") and definition terms each on a line of their own;
  - code (literal blocks after "::", code-block, doctest and testcode directives, ">>>" blocks)
    kept line for line, indented by four spaces;
  - grid tables row by row, cells reduced to their text and joined by " | ";
  - the bodies of admonitions and description directives (note, seealso, topic, versionadded,
    object, only...) read as text, with their argument (a title, a signature, "New in version
    3.2.") as a first paragraph; every other directive (contents, index, toctree, highlight,
    testsetup, image...), comments and link targets dropped with their bodies.

page(text, role) joins the blocks from the page title on into one document, separated by a blank
line. role(level, style) says what becomes of each heading: "keep" writes it as a Markdown
heading ("#" × level), "drop" leaves it out and returns its section: (title, level, start, end), the characters from
the first non-space character of its first block to the end of its last block before the next
heading of any level (start = end when no text comes before that heading).
"""

import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "quality"))
from sections import UNDERLINE  # noqa: E402  (bench/quality/sections.py: the same headings)

DIRECTIVE = re.compile(r"^\.\.\s+([\w:-]+)::\s*(.*)$")
FOOTNOTE = re.compile(r"^\.\.\s+\[[^\]]*\]\s*(.*)$")
ITEM = re.compile(r"^([*+-]|\d+[.)]|#\.|\(\d+\)|[a-z][.)])\s+")
FIELD = re.compile(r"^:([^:`]+):(\s+|$)")
OPTION = re.compile(r"^:[\w-]+:")
GRID = re.compile(r"^\+[-=+]+\+$")
SIMPLE_TABLE = re.compile(r"^=+( +=+)+$")
CODE = {"code-block", "sourcecode", "code", "doctest", "testcode", "testoutput"}
PROSE = {"note", "warning", "seealso", "important", "tip", "hint", "caution", "attention", "danger",
         "impl-detail", "topic", "sidebar", "rubric", "admonition", "only", "centered",
         "versionadded", "versionchanged", "deprecated", "deprecated-removed",
         "object", "data", "method", "function", "class", "attribute", "describe"}
VERSIONS = {"versionadded": "New in version", "versionchanged": "Changed in version",
            "deprecated": "Deprecated since version", "deprecated-removed": "Deprecated since version"}


INLINE = re.compile(
    r"``(?P<literal>.+?)``"
    r"|:(?P<role>[\w:.-]+):`!?~?(?P<text>[^`<]*?)\s*(?:<(?P<target>[^`>]*)>)?`"
    r"|`(?P<reference>[^`<]*?)\s*(?:<[^`>]*>)?`_{0,2}"
    r"|\*\*(?P<strong>[^*]+)\*\*|\*(?P<emphasis>[^*\s][^*]*)\*"
    r"|\s*\[(?:#\w*|\d+)\]_"  # a footnote reference
    r"|\\(?P<escaped>.)"
)


def markup(m):
    if m["role"] in ("pep", "rfc") and m["text"].isdigit():
        return f"{m['role'].upper()} {m['text']}"
    if m["role"]:
        return m["text"] or m["target"]
    return next((v for v in m.groups() if v is not None), "")


def inline(text):
    """Inline markup reduced to its text in one pass, so that a literal keeps what it holds
    (``"\\r\\n"``, ``*``, which a second pass would take for an escape or emphasis)."""
    return re.sub(r"\s+", " ", INLINE.sub(markup, text)).strip()


def indent_of(line):
    return len(line) - len(line.lstrip())


def body_end(lines, i, indent):
    """The index after the block indented deeper than indent that starts at i (trailing blanks excluded)."""
    j = end = i
    while j < len(lines) and (not lines[j].strip() or indent_of(lines[j]) > indent):
        j += 1
        if lines[j - 1].strip():
            end = j
    return end


def dedent(lines):
    depth = min((indent_of(line) for line in lines if line.strip()), default=0)
    return [line[depth:] for line in lines]


def code(lines):
    return "\n".join(("    " + line).rstrip() for line in dedent(lines)).strip("\n")


def paragraph(lines):
    """Inline text of one paragraph: list items, fields and definition terms on lines of their own."""
    items, current, listed = [], [], False
    for k, line in enumerate(lines):
        s = line.strip()
        starts = ITEM.match(s) or FIELD.match(s)
        if current and (starts or (not listed and indent_of(line) != indent_of(lines[k - 1]))):
            items.append(current)
            current = []
        if not current:
            listed = bool(starts)
        current.append(s)
    items.append(current)
    out = []
    for item in items:
        text = " ".join(item)
        if m := FIELD.match(text):
            text = m.group(1) + ": " + text[m.end():]
        elif m := ITEM.match(text):
            marker = m.group(1)
            text = ("- " if marker in "*+-#." else marker + " ") + text[m.end():]
        if text.endswith("::"):  # "text::" → "text:", "text ::" → "text"
            text = text[:-2].rstrip() if text == "::" or text[-3].isspace() else text[:-1]
        text = inline(text)
        if text:
            out.append(text)
    return "\n".join(out)


def table(lines):
    rows = []
    for line in lines:
        s = line.strip()
        if GRID.match(s) or SIMPLE_TABLE.match(s):
            continue
        cells = [inline(c) for c in s.strip("|").split("|")] if s.startswith("|") else [inline(s)]
        if any(cells):
            rows.append("    " + " | ".join(cells))
    return "\n".join(rows)


def blocks(text, styles=None):
    lines = text.expandtabs(8).splitlines()
    styles = {} if styles is None else styles
    out = []
    i = 0
    while i < len(lines):
        line = lines[i].rstrip()
        s = line.strip()
        after = lines[i + 1].rstrip() if i + 1 < len(lines) else ""
        if not s:
            i += 1
            continue
        # Headings: underlined, or overlined and underlined.
        over = bool(UNDERLINE.match(line)) and i + 2 < len(lines) and lines[i + 2].rstrip() == line
        title, rule = (lines[i + 1].strip(), line) if over else (s, after)
        if (over or line[0] != " ") and UNDERLINE.match(rule) and len(rule.strip()) >= len(title) and title:
            style = (rule[0], over)
            level = styles.setdefault(style, len(styles) + 1)
            out.append(("heading", level, inline(title), style))
            i += 3 if over else 2
            continue
        if UNDERLINE.match(line):  # a transition
            i += 1
            continue
        indent = indent_of(line)
        # Explicit markup: directives, footnotes, comments and targets, with their bodies.
        if s.startswith(".."):
            end = body_end(lines, i + 1, indent)
            body = dedent(lines[i + 1:end])
            if m := DIRECTIVE.match(s):
                name, argument = m.group(1).lower(), m.group(2).strip()
                while body and (OPTION.match(body[0]) or not body[0].strip()):
                    body = body[1:]
                if name in CODE:
                    out.append(("text", code(body)))
                elif name in PROSE:
                    if name in VERSIONS:
                        argument = f"{VERSIONS[name]} {argument}."
                    if argument and name != "only":
                        out.append(("text", inline(argument)))
                    out.extend(blocks("\n".join(body), styles))
            elif m := FOOTNOTE.match(s):
                out.extend(blocks("\n".join([m.group(1)] + body), styles))
            i = end
            continue
        # Tables, ">>>" blocks, paragraphs: the lines up to the next blank one.
        j = i
        while j < len(lines) and lines[j].strip():
            j += 1
        chunk = [l.rstrip() for l in lines[i:j]]
        if GRID.match(s) or SIMPLE_TABLE.match(s):
            out.append(("text", table(chunk)))
        elif s.startswith(">>>"):
            out.append(("text", code(chunk)))
        else:
            text = paragraph(chunk)
            if text:
                out.append(("text", text))
            if chunk[-1].endswith("::"):  # a literal block follows
                end = body_end(lines, j, indent_of(chunk[-1]))
                out.append(("text", code(lines[j:end])))
                j = end
        i = j
    return [b for b in out if b[0] == "heading" or b[1].strip()]


def page(text, role):
    parts, sections, offset, section = [], [], 0, None  # section: [title, level, start, end]

    def close():
        if section is not None:
            title, level, start, end = section
            sections.append((title, level, offset if start is None else start, offset if end is None else end))

    found = blocks(text)
    first = next((k for k, b in enumerate(found) if b[0] == "heading"), len(found))
    for block in found[first:]:  # what comes before the title (":tocdepth: 2") is not text
        if block[0] == "heading":
            _, level, title, style = block
            close()
            section = None
            if role(level, style) == "keep":
                part = "#" * level + " " + title
            else:
                section = [title, level, None, None]
                continue
        else:
            part = block[1]
            if section is not None:
                if section[2] is None:
                    section[2] = offset + len(part) - len(part.lstrip())
                section[3] = offset + len(part)
        parts.append(part)
        offset += len(part) + 2
    close()
    return "\n\n".join(parts), sections
