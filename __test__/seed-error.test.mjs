// SPEC §1: the seed's error.mjs, saved verbatim in a separate ESM project that installed the
// package, exits 1 and prints exactly one line on stderr.
import test from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, readFileSync, symlinkSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { repoRoot } from './helpers.mjs';

// The seed's file, verbatim; the install check of .ci/run runs the same file.
const ERROR_MJS = readFileSync(path.join(repoRoot, '__test__', 'fixtures', 'error.mjs'), 'utf8');

test('error.mjs from a separate ESM project prints the documented line and exits 1', () => {
  const project = mkdtempSync(path.join(tmpdir(), 'cg-error-mjs-'));
  try {
    writeFileSync(path.join(project, 'package.json'), JSON.stringify({ name: 'consumer', type: 'module', private: true }));
    // An installed dependency, as npm links a local package: node_modules/<scope>/<name>.
    mkdirSync(path.join(project, 'node_modules', '@devcodex'), { recursive: true });
    symlinkSync(repoRoot, path.join(project, 'node_modules', '@devcodex', 'capability-graph'), 'dir');
    writeFileSync(path.join(project, 'error.mjs'), ERROR_MJS);
    const run = spawnSync(process.execPath, ['error.mjs'], { cwd: project, encoding: 'utf8' });
    assert.equal(run.status, 1);
    assert.equal(run.stdout, '');
    assert.equal(
      run.stderr,
      '{"code":"CG_CAPABILITY_NOT_FOUND","phase":"query","message":"Requested capability does not exist","nextAction":"refresh"}\n',
    );
  } finally {
    rmSync(project, { recursive: true, force: true });
  }
});
