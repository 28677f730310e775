// SPEC §14 D12: the hand-written index.d.ts is proved against real usage with tsc.
import test from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { repoRoot } from './helpers.mjs';

test('index.d.ts type-checks a consumer (ESM and CJS)', () => {
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  const run = spawnSync(process.execPath, [tsc, '-p', path.join(repoRoot, '__test__', 'types', 'tsconfig.json')], {
    encoding: 'utf8',
  });
  assert.equal(run.status, 0, run.stdout + run.stderr);
});

test('index.d.ts type-checks a consumer under exactOptionalPropertyTypes (an undefined key is absent)', () => {
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  const run = spawnSync(process.execPath, [tsc, '-p', path.join(repoRoot, '__test__', 'types', 'tsconfig.exact.json')], {
    encoding: 'utf8',
  });
  assert.equal(run.status, 0, run.stdout + run.stderr);
});

test('the shipped declarations cite no document the package does not ship', () => {
  for (const file of ['index.d.ts', 'index.d.mts']) {
    const text = fs.readFileSync(path.join(repoRoot, file), 'utf8');
    assert.doesNotMatch(text, /\bSPEC\b|§/, `${file} cites a document outside the package`);
  }
});

test("the shipped JavaScript's comments cite no document the package does not ship", () => {
  const shipped = [
    ...fs.readdirSync(path.join(repoRoot, 'js')).map((f) => `js/${f}`),
    ...fs.readdirSync(path.join(repoRoot, 'bin')).map((f) => `bin/${f}`),
  ].filter((f) => /\.(c|m)?js$/.test(f));
  assert.ok(shipped.length >= 10, shipped.join(', '));
  // Knowledge IDs such as 'SPEC-01' are data, not citations: a citation names a section.
  const cited = shipped.filter((f) => /\bSPEC\s*§|§\s*\d|\breference\/[\w-]+\.md/.test(fs.readFileSync(path.join(repoRoot, f), 'utf8')));
  assert.deepEqual(cited, []);
});
