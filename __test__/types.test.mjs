// SPEC §14 D12: the hand-written index.d.ts is proved against real usage with tsc.
import test from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
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
