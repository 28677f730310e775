// Shared test helpers: configs for the bundled seed provider and error assertions.
import { createHash } from 'node:crypto';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { GraphError } from '@devcodex/capability-graph';

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const seedRoot = path.join(repoRoot, 'examples', 'seed-provider');

/**
 * Whether the encoder's weights are built in this clone (`npm run build:model`). `npm ci` links
 * the weights package whether or not they are, so its package.json proves nothing: the files do.
 */
export const modelBuilt = ['model.bin', 'vocab.txt', 'model.json'].every((f) => fs.existsSync(path.join(repoRoot, 'packages', 'minilm', f)));

/** The `skip` option of a test that needs the weights: false where they are built or
 *  `CG_REQUIRE_MODEL=1` requires them, else one line naming what to run. */
export const needsModel = modelBuilt || process.env.CG_REQUIRE_MODEL === '1' ? false : 'the encoder\'s weights are not built: run `npm run build:model`';

export const seedSource = () => ({
  providerId: 'seed.http',
  authority: { kind: 'file', rootDir: seedRoot, definitionLayout: 'directory' },
});

export const inline = (providerId, capabilities = [], extra = {}) => ({
  definition: { providerId, name: `Provider ${providerId}`, version: '1', capabilities, ...extra },
});

export const cap = (capabilityId, extra = {}) => ({
  capabilityId,
  name: `Capability ${capabilityId}`,
  description: `What ${capabilityId} does.`,
  whenToUse: `When ${capabilityId} is needed.`,
  ...extra,
});

/** Awaits `promise` and asserts it rejects with a GraphError of this code, phase and action. */
export async function rejectsWith(promise, code, phase, nextAction, details) {
  let error;
  try {
    await promise;
  } catch (e) {
    error = e;
  }
  assert.ok(error instanceof GraphError, `expected a GraphError, got ${error}`);
  assertError(error, code, phase, nextAction, details);
  return error;
}

/** Asserts a synchronous throw of a GraphError. */
export function throwsWith(fn, code, phase, nextAction, details) {
  let error;
  try {
    fn();
  } catch (e) {
    error = e;
  }
  assert.ok(error instanceof GraphError, `expected a GraphError, got ${error}`);
  assertError(error, code, phase, nextAction, details);
  return error;
}

export function assertError(error, code, phase, nextAction, details) {
  const json = error.toJSON ? error.toJSON() : error;
  assert.equal(json.code, code, JSON.stringify(json));
  assert.equal(json.phase, phase, JSON.stringify(json));
  assert.equal(json.nextAction, nextAction, JSON.stringify(json));
  if (details !== undefined) {
    for (const [k, v] of Object.entries(details)) assert.deepEqual(json.details?.[k], v, JSON.stringify(json));
  }
}

/** Digests of answers in order (or of their errors): a family of a recorded equivalence. */
export function family() {
  const hash = createHash('sha256');
  let answers = 0;
  return {
    async add(promise) {
      let text;
      try {
        text = JSON.stringify(await promise);
      } catch (error) {
        text = `!${JSON.stringify({ code: error.code, phase: error.phase, nextAction: error.nextAction, details: error.details })}`;
      }
      hash.update(text).update('\n');
      answers++;
    },
    digest: () => ({ answers, sha256: hash.digest('hex') }),
  };
}

/** The evidence of a knowledge retriever whose index is current for `input`: its revisions,
 *  the given per-target `documents`, now, and one config revision on both sides. */
export const currentEvidence = (input, documents, configRevision = 'c') => ({
  staticRevisionByProvider: input.staticRevisionByProvider,
  mappingRevision: input.mappingRevision,
  observedAt: new Date().toISOString(),
  freshness: 'current',
  sourceConfigRevision: configRevision,
  indexedConfigRevision: configRevision,
  documents,
});

/**
 * A project in a new temporary folder with this package installed and no model package: its JS
 * layer, CLI and loader copied, its native binary linked. For what the semantic executor does
 * without `@devcodex/capability-graph-minilm`, whatever this work tree has installed.
 */
export function projectWithoutModel() {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'cg-nomodel-')));
  const target = path.join(dir, 'node_modules', '@devcodex', 'capability-graph');
  fs.mkdirSync(target, { recursive: true });
  for (const d of ['js', 'bin']) fs.cpSync(path.join(repoRoot, d), path.join(target, d), { recursive: true });
  for (const f of ['package.json', 'binding.js']) fs.copyFileSync(path.join(repoRoot, f), path.join(target, f));
  for (const f of fs.readdirSync(repoRoot).filter((f) => f.endsWith('.node'))) fs.symlinkSync(path.join(repoRoot, f), path.join(target, f));
  return { dir, bin: path.join(target, 'bin', 'capability-graph.cjs'), cleanup: () => fs.rmSync(dir, { recursive: true, force: true }) };
}

/** Resolves the first reload event of `graph` that `accept` takes (events are
 *  { providerId, ok, trigger, entry?, error? }). */
export function nextEvent(graph, accept = () => true) {
  return new Promise((resolve) => {
    const listener = (event) => {
      if (!accept(event)) return;
      graph.off('reload', listener);
      resolve(event);
    };
    graph.on('reload', listener);
  });
}
