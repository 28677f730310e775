// Shared test helpers: configs for the bundled seed provider and error assertions.
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import { GraphError } from '@devcodex/capability-graph';

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const seedRoot = path.join(repoRoot, 'examples', 'seed-provider');

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
