#!/usr/bin/env python3
"""Writes the unreleased upgrade script sql/pg_chunk--OLD--NEW.sql, so that every SQL function
has one source: its definition in src/sql/*.sql.

The script is assembled from, in this order:
  1. sql/upgrade/OLD--NEW/before.sql: the hand-written schema changes that must come before the
     functions (schema moves, dropped or re-typed functions, the new C functions, tables, views);
  2. every function that src/sql/*.sql defines, verbatim as CREATE OR REPLACE, with the GRANTs
     and REVOKEs on functions there, file by file in the extension's order (the
     extension_sql_file! calls in src/);
  3. src/sql/privileges.sql, search_path.sql and comments.sql whole (each reruns harmlessly);
  4. sql/upgrade/OLD--NEW/after.sql: what needs the new functions (triggers, indexes, data
     backfills).
Each folder sql/upgrade/OLD--NEW/ gives one script; a released upgrade has no folder, and its
script is a frozen file (sql/README.md).

  python3 scripts/upgrade_script.py            write the scripts
  python3 scripts/upgrade_script.py --check    exit 1, with a diff, if a committed script differs
  python3 scripts/upgrade_script.py freeze [--pg-config PATH]
                                               release the current version (sql/README.md)
  python3 scripts/upgrade_script.py start NEXT bump the version to NEXT, start its upgrade folder
"""

import argparse
import difflib
import pathlib
import re
import shutil
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
# The extension's SQL, which extension_sql_file! pulls into its install script.
SOURCES = ROOT / "src" / "sql"
# What ships besides that script: every released install script and every upgrade script, and
# the hand-written parts of the unreleased upgrade scripts.
SQL = ROOT / "sql"
UPGRADES = SQL / "upgrade"
# Rerun whole after the functions: they give the store's objects their owner, pin every
# function's search_path and comment on them.
WHOLE_FILES = ("privileges.sql", "search_path.sql", "comments.sql")
FUNCTION = re.compile(r"CREATE\s+(?:OR\s+REPLACE\s+)?FUNCTION\b", re.IGNORECASE)
FUNCTION_PRIVILEGE = re.compile(r"(?:GRANT|REVOKE)\b.*?\bON\s+FUNCTION\b", re.IGNORECASE | re.DOTALL)
DOLLAR_TAG = re.compile(r"\$([A-Za-z_][A-Za-z_0-9]*)?\$")


def statements(text, name):
    """The statements of a SQL file, each from its first token to its ';', comments before it
    left out. Knows quotes, dollar quotes and comments; refuses BEGIN ATOMIC bodies, whose inner
    ';' would end a statement here."""
    found = []
    i, start, n = 0, None, len(text)
    while i < n:
        c = text[i]
        if text.startswith("--", i):
            i = text.find("\n", i)
            i = n if i < 0 else i + 1
            continue
        if text.startswith("/*", i):
            depth, i = 1, i + 2
            while depth and i < n:
                if text.startswith("/*", i):
                    depth, i = depth + 1, i + 2
                elif text.startswith("*/", i):
                    depth, i = depth - 1, i + 2
                else:
                    i += 1
            continue
        if c.isspace():
            i += 1
            continue
        if start is None:
            start = i
        previous = text[i - 1] if i else " "
        if c == "'":
            escapes = previous in "eE" and (i < 2 or not (text[i - 2].isalnum() or text[i - 2] in "_$"))
            i += 1
            while i < n:
                if escapes and text[i] == "\\":
                    i += 2
                elif text.startswith("''", i):
                    i += 2
                elif text[i] == "'":
                    break
                else:
                    i += 1
            i += 1
        elif c == '"':
            i = text.index('"', i + 1) + 1
            while text.startswith('"', i):
                i = text.index('"', i + 1) + 1
        elif c == "$" and not (previous.isalnum() or previous in "_$") and DOLLAR_TAG.match(text, i):
            tag = DOLLAR_TAG.match(text, i).group(0)
            end = text.find(tag, i + len(tag))
            if end < 0:
                sys.exit(f"{name}: unterminated {tag} quote")
            i = end + len(tag)
        elif c == ";":
            found.append(text[start : i + 1])
            start, i = None, i + 1
        else:
            i += 1
    if start is not None and text[start:].strip():
        sys.exit(f"{name}: text after the last ';': {text[start:start + 60]!r}")
    return found


def extension_files():
    """src/sql/*.sql in the order of the extension_sql_file! calls in src/."""
    calls = {}
    for path in sorted((ROOT / "src").rglob("*.rs")):
        names = re.findall(r'extension_sql_file!\(\s*"sql/([^"]+)"', path.read_text())
        if names:
            calls[path] = names
    if len(calls) != 1:
        sys.exit(f"extension_sql_file! calls in {len(calls)} files of src/, not one: their order is the extension's")
    return next(iter(calls.values()))


def functions_of(file):
    """The function definitions of one src/sql/ file, each as CREATE OR REPLACE, and its GRANTs
    and REVOKEs on functions."""
    kept = []
    for statement in statements((SOURCES / file).read_text(), f"src/sql/{file}"):
        head = FUNCTION.match(statement)
        if head:
            if re.search(r"\bBEGIN\s+ATOMIC\b", statement, re.IGNORECASE):
                sys.exit(f"src/sql/{file}: a BEGIN ATOMIC body, which this script cannot split: {statement[:80]!r}")
            kept.append("CREATE OR REPLACE FUNCTION" + statement[head.end() :])
        elif FUNCTION_PRIVILEGE.match(statement):
            kept.append(statement)
    return kept


def section(title, body):
    return f"-- ==== {title}\n\n{body.strip()}\n"


def generate(pair):
    """The upgrade script of sql/upgrade/<pair>/."""
    old, new = pair.name.split("--")
    folder = pair.relative_to(ROOT)
    header = (
        f"-- pg_chunk {old} → {new} (ALTER EXTENSION pg_chunk UPDATE).\n"
        f"-- Generated by scripts/upgrade_script.py: do not edit. The schema changes are written in\n"
        f"-- {folder}/before.sql and after.sql, the functions in src/sql/*.sql; after a\n"
        f"-- change to either, run python3 scripts/upgrade_script.py (scripts/test.sh fails until then).\n"
        f"-- tests/tests/upgrade.rs checks that a database updated with it equals a fresh install.\n"
    )
    parts = [header, section(f"{folder}/before.sql", (pair / "before.sql").read_text())]
    files = extension_files()
    for file in files:
        if file in WHOLE_FILES:
            continue
        kept = functions_of(file)
        if kept:
            parts.append(section(f"src/sql/{file}: its functions, as CREATE OR REPLACE, and their privileges", "\n\n".join(kept)))
    for file in WHOLE_FILES:
        if file not in files:
            sys.exit(f"src/sql/{file} is not an extension_sql_file! of src/")
        parts.append(section(f"src/sql/{file}", (SOURCES / file).read_text()))
    parts.append(section(f"{folder}/after.sql", (pair / "after.sql").read_text()))
    return "\n".join(parts)


def pairs():
    return sorted(p for p in UPGRADES.iterdir() if p.is_dir()) if UPGRADES.is_dir() else []


def script_of(pair):
    return SQL / f"pg_chunk--{pair.name}.sql"


def write_or_check(check):
    differing = []
    for pair in pairs():
        target, text = script_of(pair), generate(pair)
        current = target.read_text() if target.exists() else ""
        if current == text:
            continue
        if check:
            differing.append(target)
            sys.stdout.writelines(
                difflib.unified_diff(
                    current.splitlines(True), text.splitlines(True), str(target.relative_to(ROOT)), "generated"
                )
            )
        else:
            target.write_text(text)
            print(f"wrote {target.relative_to(ROOT)}")
    if differing:
        names = ", ".join(str(t.relative_to(ROOT)) for t in differing)
        print(f"\n{names} differs from what scripts/upgrade_script.py writes (diff above): run python3 scripts/upgrade_script.py")
        sys.exit(1)


def cargo_version():
    text = (ROOT / "Cargo.toml").read_text()
    return re.search(r'^version = "([^"]+)"', text, re.MULTILINE).group(1)


def freeze(pg_config):
    """Releases the current version: its installed install script into sql/, its
    upgrade script frozen (its folder removed, so nothing regenerates it)."""
    version = cargo_version()
    write_or_check(check=True)
    extension = pathlib.Path(subprocess.check_output([pg_config, "--sharedir"], text=True).strip()) / "extension"
    installed = extension / f"pg_chunk--{version}.sql"
    if not installed.exists():
        sys.exit(f"{installed} is missing: run source scripts/lib.sh; install_release {pg_config}")
    shutil.copyfile(installed, SQL / installed.name)
    print(f"copied {installed} to sql/")
    for pair in pairs():
        if pair.name.endswith(f"--{version}"):
            target = script_of(pair)
            lines = target.read_text().splitlines(True)
            # The first line names the versions; the generated header's other lines no longer hold.
            generated = 1
            while lines[generated].startswith("-- "):
                generated += 1
            frozen = (
                f"-- Frozen at the release of {version}: written by scripts/upgrade_script.py from {pair.relative_to(ROOT)}/\n"
                f"-- and src/sql/*.sql as they were then (git tag v{version}); never edited since.\n"
            )
            target.write_text(lines[0] + frozen + "".join(lines[generated:]))
            shutil.rmtree(pair)
            print(f"froze {target.relative_to(ROOT)}; removed {pair.relative_to(ROOT)}/")


def start(next_version):
    """Bumps the version to next_version and starts its upgrade folder from the current one."""
    version = cargo_version()
    if pairs():
        sys.exit(f"an upgrade is unreleased ({', '.join(p.name for p in pairs())}): freeze it first")
    if not (SQL / f"pg_chunk--{version}.sql").exists():
        sys.exit(f"sql/pg_chunk--{version}.sql is missing: freeze {version} first")
    for name, entry in (("Cargo.toml", ""), ("Cargo.lock", 'name = "pg_chunk"\n')):
        path = ROOT / name
        text = path.read_text()
        was, now = f'{entry}version = "{version}"', f'{entry}version = "{next_version}"'
        if was not in text:
            sys.exit(f"{name} has no {was!r}")
        path.write_text(text.replace(was, now, 1))
    pair = UPGRADES / f"{version}--{next_version}"
    pair.mkdir(parents=True)
    (pair / "before.sql").write_text(
        f"-- {version} → {next_version}, before the functions: schema moves, dropped or re-typed functions,\n"
        f"-- the new C functions, tables and views.\n"
    )
    (pair / "after.sql").write_text(
        f"-- {version} → {next_version}, after the functions: triggers, indexes, data backfills.\n"
    )
    print(f"version {next_version} in Cargo.toml and Cargo.lock; started {pair.relative_to(ROOT)}/")
    write_or_check(check=False)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true", help="fail, with a diff, where a committed script differs")
    sub = parser.add_subparsers(dest="command")
    frozen = sub.add_parser("freeze", help="release the current version")
    frozen.add_argument("--pg-config", default="/usr/lib/postgresql/15/bin/pg_config")
    started = sub.add_parser("start", help="bump the version and start its upgrade folder")
    started.add_argument("next_version")
    args = parser.parse_args()
    if args.command == "freeze":
        freeze(args.pg_config)
    elif args.command == "start":
        start(args.next_version)
    else:
        write_or_check(args.check)


if __name__ == "__main__":
    main()
