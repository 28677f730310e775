// SPEC §14 D12: the hand-written index.d.ts is proved against real usage with tsc.
import test from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { repoRoot } from './helpers.mjs';

/** Every file under `dir` of the repository, its subfolders included, as a repository path. */
const filesUnder = (dir) =>
  fs
    .readdirSync(path.join(repoRoot, dir), { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => path.relative(repoRoot, path.join(entry.parentPath ?? entry.path, entry.name)).split(path.sep).join('/'));

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
  const helpers = filesUnder('js').filter((f) => /\.d\.[cm]ts$/.test(f));
  assert.ok(helpers.length >= 10, 'the SDK helpers ship their declarations');
  for (const file of ['index.d.ts', 'index.d.mts', ...helpers]) {
    const text = fs.readFileSync(path.join(repoRoot, file), 'utf8');
    assert.doesNotMatch(text, /\bSPEC\b|§/, `${file} cites a document outside the package`);
  }
});

test("the shipped JavaScript's comments cite no document the package does not ship", () => {
  const shipped = [
    ...filesUnder('js'),
    ...filesUnder('bin'),
  ].filter((f) => /\.(c|m)?js$/.test(f));
  assert.ok(shipped.length >= 10, shipped.join(', '));
  // Knowledge IDs such as 'SPEC-01' are data, not citations: a citation names a section.
  const cited = shipped.filter((f) => /\bSPEC\s*§|§\s*\d|\breference\/[\w-]+\.md/.test(fs.readFileSync(path.join(repoRoot, f), 'utf8')));
  assert.deepEqual(cited, []);
});

test("the agent SDK helpers' types go into each SDK's own API with no cast (ESM and CJS, exactOptionalPropertyTypes)", () => {
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  // skipLibCheck: the SDKs' own declarations do not all compile without their optional extras.
  const run = spawnSync(process.execPath, [tsc, '-p', path.join(repoRoot, '__test__', 'types', 'tsconfig.sdks.json')], { encoding: 'utf8' });
  assert.equal(run.status, 0, run.stdout + run.stderr);
});

test('the agent SDK helpers compile for a consumer that installed none of the SDKs (their types are any)', () => {
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cg-types-'));
  try {
    // The package's declarations alone, as installed without any optional peer.
    const installed = path.join(dir, 'node_modules', '@devcodex', 'capability-graph');
    fs.mkdirSync(installed, { recursive: true });
    for (const file of ['package.json', 'index.d.ts', 'index.d.mts']) fs.copyFileSync(path.join(repoRoot, file), path.join(installed, file));
    for (const file of filesUnder('js').filter((f) => /\.d\.[cm]ts$/.test(f))) {
      fs.mkdirSync(path.dirname(path.join(installed, file)), { recursive: true });
      fs.copyFileSync(path.join(repoRoot, file), path.join(installed, file));
    }
    const subpaths = { 'ai-sdk': ['aiSdkTools'], 'openai-agents': ['openaiAgentsTools'], openai: ['openaiChatTools', 'openaiResponsesTools'], anthropic: ['anthropicTools'], langchain: ['langchainTools'] };
    const lines = ["import { createToolAdapter, type CapabilityGraph } from '@devcodex/capability-graph';", 'declare const graph: CapabilityGraph;', "const adapter = createToolAdapter(graph, { dialect: 'strict' });"];
    for (const [subpath, names] of Object.entries(subpaths)) {
      lines.push(`import { ${names.join(', ')} } from '@devcodex/capability-graph/${subpath}';`);
      for (const name of names) lines.push(`export const ${name}Result = ${name}(adapter);`);
    }
    fs.writeFileSync(path.join(dir, 'consumer.mts'), lines.join('\n'));
    fs.writeFileSync(path.join(dir, 'consumer.cts'), lines.join('\n'));
    const config = { compilerOptions: { module: 'nodenext', moduleResolution: 'nodenext', target: 'es2022', strict: true, exactOptionalPropertyTypes: true, noEmit: true, skipLibCheck: false, types: [] }, files: ['consumer.mts', 'consumer.cts'] };
    fs.writeFileSync(path.join(dir, 'tsconfig.json'), JSON.stringify(config));
    const run = spawnSync(process.execPath, [tsc, '-p', path.join(dir, 'tsconfig.json')], { encoding: 'utf8' });
    assert.equal(run.status, 0, run.stdout + run.stderr);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
