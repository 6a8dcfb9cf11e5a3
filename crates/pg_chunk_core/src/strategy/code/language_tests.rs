//! Each language named or detected, and cut at its own definitions.

use super::tests::{chunk, meta};
use super::*;
use serde_json::json;

#[test]
fn languages_are_named_or_detected() {
    let named = [
        ("Python", "python"),
        ("c++", "cpp"),
        ("TS", "typescript"),
        ("golang", "go"),
        ("PostgreSQL", "sql"),
        ("rs", "rust"),
        ("haskell", "haskell"),
    ];
    for (name, want) in named {
        assert_eq!(named_language(name).1, want, "{name}");
    }
    assert_eq!(named_language("haskell").0, Family::Generic);
    let detected = [
        ("#!/usr/bin/env python3\nprint('hi')\n", "python"),
        ("import os\n\ndef main(argv):\n    return 0\n", "python"),
        ("use std::fmt;\n\nfn main() {\n    println!(\"hi\");\n}\n", "rust"),
        ("package main\n\nimport \"fmt\"\n\nfunc main() {\n\tfmt.Println(1)\n}\n", "go"),
        ("package demo;\n\nimport java.util.List;\n\npublic class A {\n}\n", "java"),
        ("const fs = require('fs');\nfunction f() {\n  console.log(1);\n}\n", "javascript"),
        ("interface A { x: string }\nexport function f(a: A): string {\n  return a.x;\n}\n", "typescript"),
        ("#!/usr/bin/env node\nlet x = 1;\n", "javascript"),
        ("#include <stdio.h>\n\nint main(void) {\n    return 0;\n}\n", "c"),
        ("#include <iostream>\n\nint main() {\n    std::cout << 1;\n}\n", "cpp"),
        ("CREATE TABLE t (id int);\nINSERT INTO t VALUES (1);\n", "sql"),
        ("create or replace function f() returns int language sql return 1;\n", "sql"),
        ("Just prose.\n\nAnother paragraph, with no code in it.\n", "text"),
        ("", "text"),
    ];
    for (doc, want) in detected {
        assert_eq!(detect_language(doc).1, want, "{doc:?}");
    }
}

/// (language, source, then per chunk: its first line, chunk_type, function_name, split_reason).
type Case = (&'static str, &'static str, &'static [(&'static str, &'static str, Option<&'static str>, &'static str)]);

const BOUNDARY_RULES: &[Case] = &[
    (
        "python",
        r#""""Module doc."""
import os

# Connects.
@retry(
    times=3,
)
def connect(host, port):
    s = """
def not_a_definition():
"""
    return (host, port)


class Pool:
    def __init__(self):
        self.items = []
# a comment at column 0 inside the class
    def acquire(self):
        return self.items.pop()


if __name__ == "__main__":
    connect("h", 1)
"#,
        &[
            ("\"\"\"Module doc.\"\"\"", "module", None, "start"),
            ("# Connects.", "function", Some("connect"), "code_boundary"),
            ("class Pool:", "class", Some("Pool"), "code_boundary"),
            ("if __name__ == \"__main__\":", "block", None, "code_boundary"),
        ],
    ),
    (
        "rust",
        r##"use std::fmt;

const LIMIT: usize = 3;

/// A point.
#[derive(
    Debug,
)]
pub struct Point {
    x: i32,
}

impl fmt::Display for Point {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{{{}}}", self.x)
    }
}

pub(crate) fn braces(c: char) -> bool {
    let s = r#"}"#;
    c == '{' || s == "}" || c == '\''
}
macro_rules! twice {
    ($e:expr) => { $e; $e };
}
"##,
        &[
            ("use std::fmt;", "module", None, "start"),
            ("/// A point.", "class", Some("Point"), "code_boundary"),
            ("impl fmt::Display for Point {", "class", Some("fmt::Display for Point"), "code_boundary"),
            ("pub(crate) fn braces(c: char) -> bool {", "function", Some("braces"), "code_boundary"),
            ("macro_rules! twice {", "function", Some("twice"), "code_boundary"),
        ],
    ),
    (
        "javascript",
        r#"import { x } from "./x.js";

// Adds.
export function add(a, b) {
  return `${a + b}}`;
}

export const square = (n) => {
  return n * n;
};

const LIMIT = 10;

class Counter {
  constructor() { this.n = '{'; }
}

export default async function* gen() {
  yield 1;
}
"#,
        &[
            ("import { x } from \"./x.js\";", "module", None, "start"),
            ("// Adds.", "function", Some("add"), "code_boundary"),
            ("export const square = (n) => {", "function", Some("square"), "code_boundary"),
            ("const LIMIT = 10;", "block", None, "code_boundary"),
            ("class Counter {", "class", Some("Counter"), "code_boundary"),
            ("export default async function* gen() {", "function", Some("gen"), "code_boundary"),
        ],
    ),
    (
        "java",
        r#"package demo;

import java.util.List;

/** A greeter. */
@Deprecated
public class Greeter {
    private final String name;

    public Greeter(String name) {
        this.name = name;
    }

    public String greet() {
        return "Hello, }" + name + '}';
    }
}

interface Named {
    String name();
}
"#,
        &[
            ("package demo;", "module", None, "start"),
            ("/** A greeter. */", "class", Some("Greeter"), "code_boundary"),
            ("interface Named {", "class", Some("Named"), "code_boundary"),
        ],
    ),
    (
        "go",
        r#"package main

import "fmt"

// Point is a point.
type Point struct {
	X, Y int
}

func (p *Point) String() string {
	return fmt.Sprintf(`{%d`, p.X)
}

func main() {
	fmt.Println(Point{1, 2}.String(), '{')
}
"#,
        &[
            ("package main", "module", None, "start"),
            ("// Point is a point.", "class", Some("Point"), "code_boundary"),
            ("func (p *Point) String() string {", "function", Some("String"), "code_boundary"),
            ("func main() {", "function", Some("main"), "code_boundary"),
        ],
    ),
    (
        "c",
        r#"#include <stdio.h>

#define MAX 10

/* Adds
 * two numbers. */
static int add(int a, int b)
{
    return a + b;
}

int prototype(int x);

struct point {
    int x;
};

int main(void) {
    printf("%d }\n", add(1, '}'));
    return 0;
}
"#,
        &[
            ("#include <stdio.h>", "module", None, "start"),
            ("/* Adds", "function", Some("add"), "code_boundary"),
            ("int prototype(int x);", "block", None, "code_boundary"),
            ("struct point {", "class", Some("point"), "code_boundary"),
            ("int main(void) {", "function", Some("main"), "code_boundary"),
        ],
    ),
    (
        "cpp",
        r#"#include <vector>

namespace geo {
int area(int w, int h) { return w * h; }
}

template <typename T>
class Box {
  public:
    T value;
};

void Box<int>::print() const {
}
"#,
        &[
            ("#include <vector>", "module", None, "start"),
            ("namespace geo {", "class", Some("geo"), "code_boundary"),
            ("template <typename T>", "class", Some("Box"), "code_boundary"),
            ("void Box<int>::print() const {", "function", Some("Box<int>::print"), "code_boundary"),
        ],
    ),
    (
        "sql",
        r#"-- Items.
CREATE TABLE items (
    id int PRIMARY KEY,
    body text NOT NULL DEFAULT ';'
);

CREATE INDEX items_body ON items (body);

INSERT INTO items VALUES (1, 'a;b');

CREATE OR REPLACE FUNCTION touch(i int) RETURNS void
LANGUAGE plpgsql AS $fn$
BEGIN
    -- ; CREATE TABLE not_here
    UPDATE items SET body = body || ';' WHERE id = i;
END
$fn$;
"#,
        &[
            ("-- Items.", "statement", Some("items"), "code_boundary"),
            ("CREATE INDEX items_body ON items (body);", "statement", Some("items_body"), "code_boundary"),
            ("INSERT INTO items VALUES (1, 'a;b');", "block", None, "code_boundary"),
            ("CREATE OR REPLACE FUNCTION touch(i int) RETURNS void", "function", Some("touch"), "code_boundary"),
        ],
    ),
    (
        "haskell",
        r#"main = print 1

square x = x * x
"#,
        &[("main = print 1", "block", None, "start")],
    ),
];

#[test]
fn each_language_cuts_at_its_definitions() {
    for &(language, doc, want) in BOUNDARY_RULES {
        // A target of one character keeps every definition and block in a chunk of its own.
        let (_, chunks) = chunk(doc, json!({"language": language, "max_size": 2000, "target_size": 1, "min_size": 0}));
        let got: Vec<_> = chunks
            .iter()
            .map(|c| {
                (
                    c.text(doc).lines().next().unwrap(),
                    meta(c, "chunk_type").unwrap(),
                    meta(c, "function_name"),
                    c.split_reason.as_str(),
                )
            })
            .collect();
        assert_eq!(got, want.to_vec(), "{language}");
        assert!(chunks.iter().all(|c| meta(c, "language") == Some(language) && c.context.is_none()), "{language}");
    }
}
