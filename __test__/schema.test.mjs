// The JSON Schemas the package ships (SPEC D31): built from their sources, valid 2020-12 with a
// description on every property, held to the engine by the shared fixture corpus
// (tests/fixtures/definitions, also run against the engine by tests/schemas.rs), valid for the
// bundled and example providers and for what `init` writes, and exported by the package.
import test from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import Ajv2020 from 'ajv/dist/2020.js';
import { CapabilityGraph } from '@devcodex/capability-graph';
import { SCHEMAS, bundle } from '../scripts/schemas.mjs';
import { repoRoot, seedRoot } from './helpers.mjs';

const require = createRequire(import.meta.url);
const readJson = (file) => JSON.parse(fs.readFileSync(file, 'utf8'));
const shipped = Object.fromEntries(SCHEMAS.map((name) => [name, readJson(path.join(repoRoot, 'schema', `${name}.json`))]));

const ajv = new Ajv2020({ strict: true, allErrors: true });
const validators = Object.fromEntries(SCHEMAS.map((name) => [name, ajv.compile(shipped[name])]));

/** Asserts `value` is valid against schema `name`, naming `what` and ajv's errors otherwise. */
function assertValid(name, value, what) {
  const validate = validators[name];
  assert.ok(validate(value), `${what} against schema/${name}.json: ${JSON.stringify(validate.errors)}`);
}

/** Every file under `dir` whose name ends with `suffix`. */
function filesUnder(dir, suffix) {
  return fs
    .readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && e.name.endsWith(suffix))
    .map((e) => path.join(e.parentPath ?? e.path, e.name))
    .sort();
}

function fixtures(folder) {
  const dir = path.join(repoRoot, 'tests', 'fixtures', 'definitions', folder);
  return fs.readdirSync(dir).sort().map((file) => ({ file, ...readJson(path.join(dir, file)) }));
}

test('the shipped schemas are their sources bundled (run `npm run schemas` after editing schema/src/)', () => {
  for (const name of SCHEMAS) {
    assert.equal(fs.readFileSync(path.join(repoRoot, 'schema', `${name}.json`), 'utf8'), bundle(name), `schema/${name}.json is stale`);
  }
});

test('each schema is draft 2020-12, names its package path, stands alone and describes every property', () => {
  for (const [name, schema] of Object.entries(shipped)) {
    assert.equal(schema.$schema, 'https://json-schema.org/draft/2020-12/schema');
    assert.ok(schema.$id.endsWith(`/@devcodex/capability-graph/schema/${name}.json`), schema.$id);
    assert.match(schema.description, /cannot express:\n- /, `schema/${name}.json lists the rules beyond a schema`);
    const missing = [];
    const describedRef = (ref) => typeof ref === 'string' && ref.startsWith('#/$defs/') && typeof schema.$defs[ref.slice(8)]?.description === 'string';
    const walk = (node, at) => {
      if (Array.isArray(node)) return node.forEach((n, i) => walk(n, `${at}[${i}]`));
      if (node === null || typeof node !== 'object') return;
      // Only references inside the file: an editor needs nothing else to validate offline.
      if (typeof node.$ref === 'string') assert.ok(node.$ref.startsWith('#/$defs/') && node.$ref.slice(8) in schema.$defs, `${name}: ${at} refers to ${node.$ref}`);
      for (const [key, property] of Object.entries(node.properties ?? {})) {
        if (typeof property.description !== 'string' && !describedRef(property.$ref)) missing.push(`${at}.properties.${key}`);
      }
      for (const [key, value] of Object.entries(node)) walk(value, `${at}.${key}`);
    };
    walk(schema, name);
    assert.deepEqual(missing, [], `properties of schema/${name}.json without a description`);
  }
});

test('every valid fixture validates against its schema', () => {
  const valid = fixtures('valid');
  assert.ok(valid.length >= 10);
  for (const { file, kind, value } of valid) assertValid(kind, value, file);
});

test('an invalid fixture a schema can express is refused by the schema; one it cannot is not', () => {
  const invalid = fixtures('invalid');
  let expressed = 0;
  for (const { file, kind, value, schema } of invalid) {
    assert.equal(typeof schema, 'boolean', `${file} says whether a schema refuses it`);
    assert.equal(validators[kind](value), !schema, schema ? `${file} should be refused by schema/${kind}.json` : `${file} is marked beyond a schema, yet schema/${kind}.json refuses it`);
    if (schema) expressed += 1;
  }
  assert.ok(expressed > 0 && expressed < invalid.length, 'both sorts of invalid fixture');
});

test('the bundled seed provider, the example providers and the example config validate', () => {
  const providers = fs.readdirSync(path.join(repoRoot, 'examples')).filter((d) => fs.existsSync(path.join(repoRoot, 'examples', d, 'provider.json')));
  assert.ok(providers.includes('seed-provider') && providers.length >= 2, providers.join());
  for (const dir of providers) {
    const root = path.join(repoRoot, 'examples', dir);
    assertValid('provider', readJson(path.join(root, 'provider.json')), `examples/${dir}/provider.json`);
    const capabilities = filesUnder(path.join(root, 'capabilities'), '.json');
    assert.ok(capabilities.length > 0, dir);
    for (const file of capabilities) assertValid('capability', readJson(file), path.relative(repoRoot, file));
  }
  assertValid('config', readJson(path.join(repoRoot, 'examples', 'capability-graph.json')), 'examples/capability-graph.json');
});

test('what `capability-graph init` writes validates against the schemas', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cg-schema-'));
  try {
    const r = spawnSync(process.execPath, [path.join(repoRoot, 'bin', 'capability-graph.cjs'), 'init', 'acme-tools'], { cwd: dir, encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    assertValid('config', readJson(path.join(dir, 'capability-graph.json')), 'capability-graph.json');
    assertValid('provider', readJson(path.join(dir, 'acme-tools', 'provider.json')), 'provider.json');
    const capabilities = filesUnder(path.join(dir, 'acme-tools', 'capabilities'), '.json');
    assert.ok(capabilities.length > 0);
    for (const file of capabilities) assertValid('capability', readJson(file), path.basename(file));
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

/** The seed provider's static revision when opened from `rootDir`. */
async function seedRevision(source) {
  const graph = await CapabilityGraph.open({ providers: [source] });
  try {
    return (await graph.listProviders()).items[0].staticRevision;
  } finally {
    await graph.close();
  }
}

test('$schema in provider.json, capability files and inline definitions is ignored: the static revision stays', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cg-schema-'));
  try {
    fs.cpSync(seedRoot, dir, { recursive: true });
    const plain = await seedRevision({ providerId: 'seed.http', authority: { kind: 'file', rootDir: dir, definitionLayout: 'directory' } });
    const withSchema = (file, schema) => {
      const value = readJson(file);
      fs.writeFileSync(file, JSON.stringify({ $schema: schema, ...value }, null, 2));
      return value;
    };
    const provider = withSchema(path.join(dir, 'provider.json'), './node_modules/@devcodex/capability-graph/schema/provider.json');
    const capabilities = filesUnder(path.join(dir, 'capabilities'), '.json').map((f) => withSchema(f, '../node_modules/@devcodex/capability-graph/schema/capability.json'));
    assert.equal(await seedRevision({ providerId: 'seed.http', authority: { kind: 'file', rootDir: dir, definitionLayout: 'directory' } }), plain);

    const definition = { ...provider, capabilities };
    assert.equal(await seedRevision({ definition }), plain);
    assertValid('definition', { $schema: 'schema/definition.json', ...definition }, 'the seed as a definition');
    assert.equal(await seedRevision({ definition: { $schema: 'schema/definition.json', ...definition } }), plain);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('the command line opens a config that names its schema', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cg-schema-'));
  try {
    const config = readJson(path.join(repoRoot, 'examples', 'capability-graph.json'));
    config.providers[0].authority.rootDir = seedRoot;
    const file = path.join(dir, 'capability-graph.json');
    fs.writeFileSync(file, JSON.stringify({ $schema: './node_modules/@devcodex/capability-graph/schema/config.json', ...config }));
    const r = spawnSync(process.execPath, [path.join(repoRoot, 'bin', 'capability-graph.cjs'), 'providers', '--json', '--config', file], { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    assert.equal(JSON.parse(r.stdout).items[0].providerId, 'seed.http');
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('the package exports its schemas as @devcodex/capability-graph/schema/*.json', async () => {
  for (const name of SCHEMAS) {
    const resolved = require.resolve(`@devcodex/capability-graph/schema/${name}.json`);
    assert.equal(fs.realpathSync(resolved), fs.realpathSync(path.join(repoRoot, 'schema', `${name}.json`)));
    assert.deepEqual(require(`@devcodex/capability-graph/schema/${name}.json`), shipped[name]);
  }
  const { default: imported } = await import('@devcodex/capability-graph/schema/provider.json', { with: { type: 'json' } });
  assert.deepEqual(imported, shipped.provider);
  assert.throws(() => require.resolve('@devcodex/capability-graph/schema/src/defs.json'), { code: 'ERR_PACKAGE_PATH_NOT_EXPORTED' });
});

test('the config schema\'s mcp.http block is what `capability-graph mcp` accepts: the same keys, the same refusals', () => {
  const D27 = ['allowedOrigins', 'tokenFile', 'allowUnauthenticated', 'maxConnections', 'headersTimeoutMs', 'bodyTimeoutMs'];
  assert.deepEqual(Object.keys(shipped.config.$defs.mcpHttp.properties).sort(), [...D27].sort());
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cg-schema-http-'));
  try {
    fs.writeFileSync(path.join(dir, 'token'), 'a-token\n');
    const mcp = (http) => {
      const config = readJson(path.join(repoRoot, 'examples', 'capability-graph.json'));
      config.providers[0].authority.rootDir = seedRoot;
      config.mcp = { ...config.mcp, http };
      const file = path.join(dir, 'capability-graph.json');
      fs.writeFileSync(file, JSON.stringify(config));
      const r = spawnSync(process.execPath, [path.join(repoRoot, 'bin', 'capability-graph.cjs'), 'mcp', '--config', file], { encoding: 'utf8', input: '' });
      return { config, r };
    };
    const every = { allowedOrigins: ['https://app.example'], tokenFile: 'token', allowUnauthenticated: false, maxConnections: 16, headersTimeoutMs: 5000, bodyTimeoutMs: 10000 };
    const accepted = mcp(every);
    assertValid('config', accepted.config, 'every mcp.http setting');
    assert.equal(accepted.r.status, 0, accepted.r.stderr);
    for (const [key, value] of [['allowedOrigins', []], ['tokenFile', ''], ['allowUnauthenticated', 1], ['maxConnections', 0], ['headersTimeoutMs', 0.5], ['bodyTimeoutMs', '30'], ['token', 'secret']]) {
      const refused = mcp({ [key]: value });
      assert.equal(validators.config(refused.config), false, `the schema refuses mcp.http.${key}: ${JSON.stringify(value)}`);
      assert.equal(refused.r.status, 1, key);
      assert.equal(JSON.parse(refused.r.stderr).error.details.path, `mcp.http.${key}`);
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
