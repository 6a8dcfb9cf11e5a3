"""Snippets that cannot rot: runs examples/rag_langchain.py and then every Python, JavaScript and
SQL block of docs/clients.md, in page order, in a database made afresh, as
tests/tests/docs_examples/ runs the psql pages.

**What runs.** A fenced block whose info string is `python`, `javascript` or `sql`, each as a
program of its own: Python with this interpreter (the test environment's), JavaScript as an ES
module with node from the folder holding `pg` and `pgvector` (`--node-dir`, where clients/test.sh
installs clients/package-lock.json's pins), SQL through psycopg with autocommit (its rows
printed). Blocks without one of those languages (shell commands) are not run. The page writes
`pg_chunk_demo`, the database psql's pages show; each block runs with that name replaced by the
test's database. A block passes when it exits with 0; its output is shown, not compared (scores
vary in their last digits; the package's tests check the values).

**Markers**, HTML comments on the lines right above the opening fence: `<!-- not run: <reason> -->`
skips the block, and says so with its reason. Any other `key: value` comment there is an error, so
that a misspelt marker cannot turn a check off.

    python clients/docs_snippets.py --database pg_chunk_test_clients --node-dir DIR
"""

from __future__ import annotations

import argparse
import getpass
import os
import re
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import psycopg

REPOSITORY = Path(__file__).resolve().parents[1]
PAGE = "docs/clients.md"
EXAMPLE = "examples/rag_langchain.py"
PAGE_DATABASE = "pg_chunk_demo"
LANGUAGES = ("python", "javascript", "sql")
MARKER = re.compile(r"^<!--\s*([^:]+?):\s*(.*?)\s*-->$")


@dataclass
class Block:
    line: int
    language: str
    code: str
    not_run: str | None


def parse_page(text: str) -> list[Block]:
    """The page's fenced blocks in the languages that run, with their markers."""
    lines = text.splitlines()
    blocks: list[Block] = []
    index = 0
    while index < len(lines):
        fence = re.match(r"^```(\S*)\s*$", lines[index])
        if not fence:
            index += 1
            continue
        end = next((j for j in range(index + 1, len(lines)) if lines[j].startswith("```")), None)
        if end is None:
            raise SystemExit(f"{PAGE}:{index + 1}: a fence that never closes")
        not_run = None
        above = index - 1
        while above >= 0 and lines[above].startswith("<!--"):
            marker = MARKER.match(lines[above].strip())
            if marker and marker.group(1) == "not run":
                not_run = marker.group(2)
            elif marker:
                raise SystemExit(f"{PAGE}:{above + 1}: unknown marker {marker.group(1)!r}")
            above -= 1
        if fence.group(1) in LANGUAGES:
            blocks.append(Block(index + 2, fence.group(1), "\n".join(lines[index + 1:end]) + "\n", not_run))
        index = end + 1
    return blocks


def fresh_database(database: str) -> None:
    with psycopg.connect("dbname=postgres", autocommit=True) as admin:
        admin.execute(f"DROP DATABASE IF EXISTS {database} WITH (FORCE)")
        admin.execute(f"CREATE DATABASE {database}")
    with psycopg.connect(f"dbname={database}", autocommit=True) as conn:
        conn.execute("SET client_min_messages = warning")
        conn.execute("CREATE EXTENSION pg_chunk CASCADE")


def run_sql(code: str, database: str) -> subprocess.CompletedProcess[str]:
    """A SQL block through psycopg, in a child process like the other languages."""
    program = (
        "import sys, psycopg\n"
        f"with psycopg.connect({f'dbname={database}'!r}, autocommit=True) as conn:\n"
        "    cur = conn.execute(sys.stdin.read())\n"
        "    for row in (cur.fetchall() if cur.description else []):\n"
        "        print(*row, sep=' | ')\n"
    )
    return subprocess.run([sys.executable, "-c", program], input=code, capture_output=True, text=True, cwd=REPOSITORY)


def run_block(block: Block, database: str, node_dir: Path, scratch: Path) -> subprocess.CompletedProcess[str]:
    code = block.code.replace(PAGE_DATABASE, database)
    if block.language == "sql":
        return run_sql(code, database)
    if block.language == "python":
        path = scratch / f"snippet_{block.line}.py"
        path.write_text(code)
        return subprocess.run([sys.executable, str(path)], capture_output=True, text=True, cwd=REPOSITORY)
    # An ES module beside node_modules, so that `import pg from 'pg'` finds it.
    path = node_dir / f"snippet_{block.line}.mjs"
    path.write_text(code)
    # node-postgres takes the user from PGUSER or USER, which a CI job may leave unset; libpq
    # takes the OS user's name.
    environment = {"PGUSER": getpass.getuser(), **os.environ}
    try:
        return subprocess.run(["node", str(path)], capture_output=True, text=True, cwd=node_dir, env=environment)
    finally:
        path.unlink()


def report(name: str, result: subprocess.CompletedProcess[str], seconds: float) -> bool:
    ok = result.returncode == 0
    print(f"{name}: {'ok' if ok else f'failed (exit {result.returncode})'} ({seconds:.1f} s)")
    output = (result.stdout + result.stderr).rstrip()
    if output:
        print("    " + output.replace("\n", "\n    "))
    return ok


def main() -> None:
    arguments = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    arguments.add_argument("--database", required=True)
    arguments.add_argument("--node-dir", required=True, type=Path)
    options = arguments.parse_args()
    blocks = parse_page((REPOSITORY / PAGE).read_text())
    fresh_database(options.database)
    started = time.monotonic()
    example = subprocess.run([sys.executable, EXAMPLE, f"dbname={options.database}"], capture_output=True, text=True,
                             cwd=REPOSITORY)
    failures = [] if report(EXAMPLE, example, time.monotonic() - started) else [EXAMPLE]
    with tempfile.TemporaryDirectory() as scratch:
        for block in blocks:
            name = f"{PAGE}:{block.line} ({block.language})"
            if block.not_run is not None:
                print(f"{name}: not run: {block.not_run}")
                continue
            started = time.monotonic()
            if not report(name, run_block(block, options.database, options.node_dir, Path(scratch)),
                          time.monotonic() - started):
                failures.append(name)
    ran = sum(b.not_run is None for b in blocks)
    print(f"{EXAMPLE} and {ran} blocks of {PAGE} run, {len(blocks) - ran} not run, {len(failures)} failed")
    if failures:
        raise SystemExit("failed: " + ", ".join(failures))


if __name__ == "__main__":
    main()
