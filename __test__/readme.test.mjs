// The README's and docs/'s code is the product's first contact: every JavaScript/TypeScript block
// is self-contained, type-checks under --strict (nodenext; JavaScript through checkJs) and —
// unless its first line says why not (`// Not run: …`) — runs against the seed provider the
// package ships.
import test from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { repoRoot } from './helpers.mjs';

/** README.md and every page under docs/, by their path in the repository. */
const PAGES = ['README.md', ...fs.readdirSync(path.join(repoRoot, 'docs')).filter((f) => f.endsWith('.md')).sort().map((f) => `docs/${f}`)];
const NOT_RUN = /^\/\/ Not run: \S.*$/;

/** Every ```js / ```ts / ```cjs block of a page, with the page and the line it starts on. */
function codeBlocks(page) {
  const text = fs.readFileSync(path.join(repoRoot, page), 'utf8');
  const blocks = [];
  const fence = /^```(js|ts|mjs|mts|cjs)\n([\s\S]*?)^```$/gm;
  for (let m; (m = fence.exec(text)); ) {
    blocks.push({ page, lang: m[1], code: m[2], line: text.slice(0, m.index).split('\n').length });
  }
  return blocks;
}

const blocks = PAGES.flatMap(codeBlocks);
/** The temporary file of a block names its page and line, so errors can be traced back. */
const fileOf = (b) => `block-${b.page.replace(/[/.]/g, '_')}-${b.line}.${b.lang === 'cjs' ? 'cjs' : b.lang.startsWith('t') ? 'mts' : 'mjs'}`;
const where = (b) => `${b.page}:${b.line}`;

/** A consumer project that installed the package (linked, as npm links a local package). */
function consumer() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cg-readme-'));
  fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: 'readme', private: true, type: 'module' }));
  fs.mkdirSync(path.join(dir, 'node_modules', '@devcodex'), { recursive: true });
  fs.symlinkSync(repoRoot, path.join(dir, 'node_modules', '@devcodex', 'capability-graph'), 'junction');
  // The MCP SDK and the agent SDKs the "use it with" blocks import (with the packages their
  // types name), as a host installs the one it uses, and Ajv, which validates with the
  // package's JSON Schemas in docs/providers-and-definitions.md.
  for (const scope of ['@types', '@modelcontextprotocol', 'ai', '@ai-sdk', '@openai', 'openai', '@anthropic-ai', '@langchain', 'zod', 'ajv']) {
    fs.symlinkSync(path.join(repoRoot, 'node_modules', scope), path.join(dir, 'node_modules', scope), 'junction');
  }
  const files = blocks.map((b) => {
    const file = fileOf(b);
    fs.writeFileSync(path.join(dir, file), b.code);
    return file;
  });
  return { dir, files };
}

test('the README and docs/ have code blocks and mark every one they do not run', () => {
  assert.ok(PAGES.length >= 2, PAGES.join(', '));
  assert.ok(blocks.length >= 8, `${blocks.length} blocks`);
  assert.ok(blocks.some((b) => b.page === 'README.md'), 'the README has code');
  for (const b of blocks) {
    const first = b.code.split('\n')[0];
    if (first.startsWith('// Not run')) assert.match(first, NOT_RUN, `${b.page}:${b.line + 1} says why it is not run`);
  }
});

test('every README and docs/ code block type-checks under --strict (nodenext, checkJs)', () => {
  const { dir, files } = consumer();
  try {
    fs.writeFileSync(
      path.join(dir, 'tsconfig.json'),
      JSON.stringify({
        // skipLibCheck: some agent SDKs' own declarations do not compile in a strict consumer;
        // the package's declarations are checked without it by types.test.mjs.
        compilerOptions: { module: 'nodenext', moduleResolution: 'nodenext', target: 'es2022', strict: true, noEmit: true, allowJs: true, checkJs: true, skipLibCheck: true, types: ['node'] },
        files,
      }),
    );
    const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
    const run = spawnSync(process.execPath, [tsc, '-p', dir], { encoding: 'utf8' });
    // Name the page line of each error instead of the temporary file's.
    const byFile = new Map(blocks.map((b) => [fileOf(b), b]));
    const report = (run.stdout + run.stderr).replace(/(block-[\w-]+\.[mc][jt]s)\((\d+),(\d+)\)/g, (all, file, l, c) => {
      const b = byFile.get(file);
      return b ? `${b.page}:${b.line + Number(l)}:${c}` : all;
    });
    assert.equal(run.status, 0, report);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('every README and docs/ code block not marked otherwise runs against the shipped seed provider', () => {
  const { dir, files } = consumer();
  try {
    blocks.forEach((b, i) => {
      if (NOT_RUN.test(b.code.split('\n')[0])) return;
      assert.ok(/^[mc]?js$/.test(b.lang), `${where(b)}: a block that runs is JavaScript`);
      const run = spawnSync(process.execPath, [files[i]], { cwd: dir, encoding: 'utf8', timeout: 60_000, input: '' });
      assert.equal(run.status, 0, `${where(b)} exited ${run.status}\n${run.stdout}${run.stderr}`);
    });
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('every README and docs/ JSON block parses', () => {
  let seen = 0;
  for (const page of PAGES) {
    const text = fs.readFileSync(path.join(repoRoot, page), 'utf8');
    for (const m of text.matchAll(/^( *)```json\n([\s\S]*?)^\1```$/gm)) {
      seen++;
      const line = text.slice(0, m.index).split('\n').length;
      assert.doesNotThrow(() => JSON.parse(m[2]), `${page}:${line} is not JSON`);
    }
  }
  assert.ok(seen >= 1, 'the README shows an MCP client entry');
});
