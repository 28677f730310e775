// The floors check (scripts/check-floors.mjs) on small crates written here: it must see every
// kind of path that ties two files, ignore what is not one, and pass on the engine itself.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { analyze, tokenize } from '../scripts/check-floors.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

/** A crate from `{ path: text }` (paths under src/), analysed. */
function crate(files) {
  const dir = mkdtempSync(join(tmpdir(), 'cg-floors-'));
  try {
    for (const [path, text] of Object.entries(files)) {
      mkdirSync(dirname(join(dir, 'src', path)), { recursive: true });
      writeFileSync(join(dir, 'src', path), text);
    }
    return analyze(join(dir, 'src'));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const lib = 'pub mod error;\npub mod snapshot;\npub mod matching;\npub mod engine;\n';
const upward = (r) => [...new Set(r.upward.map((u) => `${u.from} -> ${u.to}`))];

test('a clean crate passes', () => {
  const r = crate({
    'lib.rs': lib,
    'error.rs': 'pub struct E;\n',
    'snapshot/mod.rs': 'use crate::error::E;\npub mod size;\n',
    'snapshot/size.rs': 'use super::super::error::E;\npub fn f() {}\n',
    'matching/mod.rs': 'use crate::snapshot;\nfn g() { snapshot::size::f(); }\n',
    'engine.rs': 'use crate::matching as m;\n',
  });
  assert.deepEqual(upward(r), []);
  assert.deepEqual(r.circles, []);
  assert.equal(r.files.length, 6);
});

test('an upward path is found wherever it is written, and only there', () => {
  const r = crate({
    'lib.rs': lib,
    'error.rs': '',
    'engine.rs': '',
    'matching/mod.rs': 'pub struct Index;\n',
    'snapshot/mod.rs': [
      '// crate::engine::X in a comment',
      '/* crate::engine::Y in /* a nested */ block */',
      'const S: &str = "crate::engine::Z";',
      "const R: &str = r#\"crate::engine::\"# ;",
      "fn life<'a>(x: &'a str) -> char { 'c' }",
      'pub struct S { index: std::sync::OnceLock<crate::matching::Index> }',
    ].join('\n'),
  });
  assert.deepEqual(upward(r), ['src/snapshot/mod.rs -> src/matching/mod.rs']);
  assert.equal(r.upward[0].path, 'crate::matching::Index');
});

test('use groups, super, self and names a use brought in all count', () => {
  const r = crate({
    'lib.rs': lib,
    'error.rs': 'mod inner;\nuse self::inner::f;\n',
    'error/inner.rs': 'use super::super::{matching::{self}, engine};\npub fn f() {}\n',
    'snapshot/mod.rs': 'use crate::{error, matching as m};\nfn g() { m::h(); }\n',
    'matching/mod.rs': 'pub fn h() {}\n',
    'engine.rs': '',
  });
  assert.deepEqual(upward(r).sort(), [
    'src/error/inner.rs -> src/engine.rs',
    'src/error/inner.rs -> src/matching/mod.rs',
    'src/snapshot/mod.rs -> src/matching/mod.rs',
  ]);
});

test('a circle between files is found, even on one floor', () => {
  const r = crate({
    'lib.rs': 'pub mod error;\npub mod json;\npub mod ids;\n',
    'error.rs': 'pub fn e() { crate::json::j(); }\n',
    'json.rs': 'pub fn j() { crate::ids::i(); }\n',
    'ids.rs': 'use crate::error::e;\npub fn i() {}\n',
  });
  assert.deepEqual(upward(r), []);
  assert.equal(r.circles.length, 1);
  assert.deepEqual(r.circles[0].files, ['src/error.rs', 'src/ids.rs', 'src/json.rs']);
  assert.equal(r.circles[0].cycle.length, 4);
});

test('test modules, test-only items and files included only under test do not count', () => {
  const r = crate({
    'lib.rs': lib + '#[cfg(test)]\nmod scale_tests;\n',
    'scale_tests.rs': 'use crate::engine::Engine;\n',
    'error.rs': '',
    'engine.rs': 'pub struct Engine;\n',
    'matching/mod.rs': '',
    'snapshot/mod.rs': [
      '#[cfg(test)]',
      'mod tests { use crate::engine::Engine; }',
      '#[cfg(all(test, unix))]',
      'mod unix_tests { use crate::engine::Engine; }',
      '#[cfg(test)]',
      'pub fn for_tests() { crate::matching::x(); }',
      '#[cfg(not(test))]',
      'fn built() { crate::engine::run(); }',
    ].join('\n'),
  });
  assert.deepEqual(upward(r), ['src/snapshot/mod.rs -> src/engine.rs']);
  assert.ok(!r.files.includes('src/scale_tests.rs'));
});

test('a module with no floor fails the check', () => {
  const r = crate({ 'lib.rs': 'pub mod error;\npub mod shiny;\n', 'error.rs': '', 'shiny.rs': '' });
  assert.deepEqual(r.unknown, ['src/shiny.rs']);
});

test('lifetimes and char literals are told apart', () => {
  assert.deepEqual(tokenize("f::<'a>('\\'', '\"', b'x') crate::a"), [
    'f', '::', '<', '>', '(', ',', ',', ')', 'crate', '::', 'a',
  ]);
});

test('the engine keeps its floors', () => {
  const r = analyze(join(root, 'src'));
  assert.deepEqual(upward(r), []);
  assert.deepEqual(r.circles.map((c) => c.cycle.join(' -> ')), []);
  assert.deepEqual(r.unknown, []);
});
