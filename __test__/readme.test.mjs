// The README's code is the product's first contact: every JavaScript/TypeScript block is
// self-contained, type-checks under --strict (nodenext; JavaScript through checkJs) and — unless
// its first line says why not (`// Not run: …`) — runs against the seed provider the package ships.
import test from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { repoRoot } from './helpers.mjs';

const README = fs.readFileSync(path.join(repoRoot, 'README.md'), 'utf8');
const NOT_RUN = /^\/\/ Not run: \S.*$/;

/** Every ```js / ```ts block, with the line it starts on. */
function codeBlocks(text) {
  const blocks = [];
  const fence = /^```(js|ts|mjs|mts)\n([\s\S]*?)^```$/gm;
  for (let m; (m = fence.exec(text)); ) {
    blocks.push({ lang: m[1], code: m[2], line: text.slice(0, m.index).split('\n').length });
  }
  return blocks;
}

const blocks = codeBlocks(README);

/** A consumer project that installed the package (linked, as npm links a local package). */
function consumer() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cg-readme-'));
  fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: 'readme', private: true, type: 'module' }));
  fs.mkdirSync(path.join(dir, 'node_modules', '@devcodex'), { recursive: true });
  fs.symlinkSync(repoRoot, path.join(dir, 'node_modules', '@devcodex', 'capability-graph'), 'junction');
  for (const scope of ['@types', '@modelcontextprotocol']) {
    fs.symlinkSync(path.join(repoRoot, 'node_modules', scope), path.join(dir, 'node_modules', scope), 'junction');
  }
  const files = blocks.map((b) => {
    const file = `block-${b.line}.${b.lang.startsWith('t') ? 'mts' : 'mjs'}`;
    fs.writeFileSync(path.join(dir, file), b.code);
    return file;
  });
  return { dir, files };
}

test('the README has code blocks and marks every one it does not run', () => {
  assert.ok(blocks.length >= 8, `${blocks.length} blocks`);
  for (const b of blocks) {
    const first = b.code.split('\n')[0];
    if (first.startsWith('// Not run')) assert.match(first, NOT_RUN, `README.md:${b.line + 1} says why it is not run`);
  }
});

test('every README code block type-checks under --strict (nodenext, checkJs)', () => {
  const { dir, files } = consumer();
  try {
    fs.writeFileSync(
      path.join(dir, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: { module: 'nodenext', moduleResolution: 'nodenext', target: 'es2022', strict: true, noEmit: true, allowJs: true, checkJs: true, skipLibCheck: false, types: ['node'] },
        files,
      }),
    );
    const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
    const run = spawnSync(process.execPath, [tsc, '-p', dir], { encoding: 'utf8' });
    // Name the README line of each error instead of the temporary file's.
    const report = (run.stdout + run.stderr).replace(/block-(\d+)\.m[jt]s\((\d+),(\d+)\)/g, (_, start, l, c) => `README.md:${Number(start) + Number(l)}:${c}`);
    assert.equal(run.status, 0, report);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('every README code block not marked otherwise runs against the shipped seed provider', () => {
  const { dir, files } = consumer();
  try {
    blocks.forEach((b, i) => {
      if (NOT_RUN.test(b.code.split('\n')[0])) return;
      assert.ok(b.lang.startsWith('j'), `README.md:${b.line}: a block that runs is JavaScript`);
      const run = spawnSync(process.execPath, [files[i]], { cwd: dir, encoding: 'utf8', timeout: 60_000, input: '' });
      assert.equal(run.status, 0, `README.md:${b.line} exited ${run.status}\n${run.stdout}${run.stderr}`);
    });
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
