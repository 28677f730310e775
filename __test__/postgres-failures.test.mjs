// The PostgreSQL example when things go wrong (postgres-server.mjs runs the server): a
// connection terminated in the middle of an open, a reload or a publish, and folders publish()
// must refuse the way the file source does.
import test from 'node:test';
import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { CapabilityGraph, GraphError } from '@devcodex/capability-graph';
import { postgresAuthority, publish } from '../examples/postgres-authority/adapter.mjs';
import { repoRoot, seedRoot } from './helpers.mjs';
import { connection, pool, server, skip, usePostgres } from './postgres-server.mjs';
import { vectorsFileBytes } from './fixtures/vectors-file.mjs';

usePostgres();

/** A copy of the seed provider (in the server's folder, removed with it), edited by `edit(dir)`. */
function seedCopy(edit = () => {}) {
  const dir = mkdtempSync(path.join(server.dir, 'seed-'));
  cpSync(seedRoot, dir, { recursive: true });
  edit(dir);
  return dir;
}
const definition = (dir, name) => path.join(dir, 'capabilities', name);
const editRecord = (dir, name, change) => writeFileSync(definition(dir, name), JSON.stringify({ ...JSON.parse(readFileSync(definition(dir, name), 'utf8')), ...change }));
/** The seed with `route` renamed and a `route_grpc` child added. */
const changedSeed = () =>
  seedCopy((dir) => {
    editRecord(dir, 'route.json', { name: 'Routing (edited)' });
    writeFileSync(definition(dir, 'route-grpc.json'), JSON.stringify({ capabilityId: 'route_grpc', name: 'gRPC routes', description: 'Bind a gRPC method to a handler.', whenToUse: 'Add a gRPC endpoint.', parents: ['route'] }));
  });

/** What a host of the example answered in `scenario` (fixtures/postgres-drop-host.mjs), run in
 *  a process of its own: an unhandled 'error' there ends it, and this then fails with its output. */
async function dropHost(scenario) {
  const script = path.join(repoRoot, '__test__', 'fixtures', 'postgres-drop-host.mjs');
  const args = JSON.stringify({ connection: connection(), scenario, seed: seedRoot, changed: changedSeed() });
  const { stdout } = await promisify(execFile)(process.execPath, [script, args], { cwd: repoRoot, timeout: 30_000 }).catch((error) =>
    assert.fail(`the host process died (exit ${error.code}): ${error.stderr.split('\n').slice(0, 6).join('\n')}`),
  );
  const report = JSON.parse(stdout);
  assert.equal(report.dropped, 1, 'the backend was terminated once, where the scenario says');
  return report;
}

/** `error` (as the drop host reports it) is the engine's report of a failed database read: what
 *  the adapter threw is never passed on. */
function assertDatabaseFailure(error) {
  assert.deepEqual(error, { graphError: true, code: 'CG_CONFIG_INVALID', phase: 'load', message: 'Configuration is invalid', nextAction: 'check_config' });
}

test('a connection terminated during the first scan page rejects open with CG_CONFIG_INVALID, and the host lives on', { skip, timeout: 40_000 }, async () => {
  const report = await dropHost('open');
  assertDatabaseFailure(report.open);
  assert.equal(report.reopened, 'Routing', 'the same pool opens the provider afterwards');
});

test('a connection terminated during a reload\'s first read fails the reload and keeps the snapshot served', { skip, timeout: 40_000 }, async () => {
  const report = await dropHost('reload');
  assert.equal(report.reload.ok, false);
  assert.equal(report.reload.error, 'CG_RELOAD_FAILED');
  assertDatabaseFailure(report.reload.provider);
  assert.deepEqual(report.kept, { sameRevision: true, route: 'Routing', refreshFailed: true });
  assert.deepEqual(report.reloaded, { ok: true, route: 'Routing (edited)' });
});

test('a connection terminated during publish()\'s first batch rejects with a GraphError and writes nothing', { skip, timeout: 40_000 }, async () => {
  const report = await dropHost('publish');
  assert.deepEqual(report.publish, {
    graphError: true,
    code: 'CG_CONFIG_INVALID',
    phase: 'load',
    message: 'Configuration is invalid',
    nextAction: 'retry',
    details: { providerId: 'seed.http', reason: 'database_failed' },
  });
  assert.equal(report.unchanged, true, 'no row half-written');
  assert.equal(report.republished, 6);
  assert.equal(report.revisionMoved, true);
});

/** What `promise` rejected with (failing the test if it resolved). */
const rejection = (promise, what) =>
  promise.then(
    () => assert.fail(`${what}: published`),
    (error) => error,
  );
/** `dir` as the seed provider's files. */
const asFiles = (dir) => ({ providerId: 'seed.http', authority: { kind: 'file', rootDir: dir, definitionLayout: 'directory' } });
/** The error the engine's file source gives for `dir`. */
const fileSourceError = (dir) =>
  rejection(
    CapabilityGraph.open({ providers: [asFiles(dir)] }).then(async (graph) => {
      await graph.close();
    }),
    `${dir} as files`,
  );
const seedRevision = async (db) => (await db.query(`SELECT revision FROM cg_providers WHERE provider_id = 'seed.http'`)).rows;

/** `error` is a GraphError that names no path and repeats nothing a driver said. */
function assertClean(error, what) {
  assert.ok(error instanceof GraphError, `${what}: ${error?.stack ?? error}`);
  const text = JSON.stringify(error);
  assert.ok(!text.includes(server.dir) && !/postgres|relation|syntax|ENOENT|terminat/i.test(text), `${what}: ${text}`);
}

test('publish() refuses a folder the way the file source does, by its code and reason, before reading a file past its budget, and commits nothing', { skip, timeout: 60_000 }, async (t) => {
  const db = pool();
  await publish(db, seedRoot);
  const before = await seedRevision(db);
  const big = (size) => JSON.stringify({ capabilityId: 'route', name: 'Routing', description: 'x'.repeat(size), whenToUse: 'Big.' });
  const cases = [
    ['a definition file over 256 KiB', (d) => writeFileSync(definition(d, 'route.json'), big(300 << 10)), 'file_too_large'],
    ['a provider.json over 256 KiB', (d) => writeFileSync(path.join(d, 'provider.json'), JSON.stringify({ ...JSON.parse(readFileSync(path.join(seedRoot, 'provider.json'), 'utf8')), specification: { text: 'x'.repeat(300 << 10) } })), 'file_too_large'],
    ['a linked definition file', (d) => (renameSync(definition(d, 'route.json'), path.join(d, 'route.json')), symlinkSync(path.join(d, 'route.json'), definition(d, 'route.json'))), 'definition_symlink_unsupported'],
    ['a linked folder of definitions', (d) => (mkdirSync(path.join(d, 'more')), symlinkSync(path.join(d, 'more'), definition(d, 'more'))), 'definition_symlink_unsupported'],
    ['a FIFO named like a definition', (d) => execFileSync('mkfifo', [definition(d, 'pipe.json')]), 'not_regular_file'],
    ['capabilities behind a link', (d) => (renameSync(path.join(d, 'capabilities'), path.join(d, 'real')), symlinkSync(path.join(d, 'real'), path.join(d, 'capabilities'))), 'definition_directory_required'],
    ['no capabilities folder', (d) => rmSync(path.join(d, 'capabilities'), { recursive: true }), 'definition_directory_required'],
    ['no provider.json', (d) => rmSync(path.join(d, 'provider.json')), 'provider_manifest_required'],
    ['a provider.json that is not JSON', (d) => writeFileSync(path.join(d, 'provider.json'), '{ "providerId": "seed.http",'), 'invalid_json'],
    ['a definition that is not UTF-8', (d) => writeFileSync(definition(d, 'route.json'), Buffer.concat([Buffer.from('{"capabilityId":"route","name":"R'), Buffer.from([0xff]), Buffer.from('","description":"d","whenToUse":"w"}')])), 'invalid_utf8'],
  ];
  for (const [what, edit, reason] of cases) {
    await t.test(what, async () => {
      const dir = seedCopy(edit);
      const error = await rejection(publish(db, dir), what);
      assertClean(error, what);
      assert.equal(error.details?.reason, reason, `${what}: ${JSON.stringify(error)}`);
      // The file source's error; one about provider.json names no provider, as none was read.
      const expected = (await fileSourceError(dir)).toJSON();
      const { providerId, ...unnamed } = expected.details;
      assert.deepEqual(error.toJSON(), { ...expected, details: expected.details.file === 'provider.json' ? unnamed : { providerId, ...unnamed } }, `${what}: the file source's error`);
      assert.deepEqual(await seedRevision(db), before, `${what}: nothing committed`);
    });
  }
  await t.test('the budget named', async () => {
    // The file source's: the file's record limit.
    const tooLarge = await rejection(publish(db, seedCopy(cases[0][1])), 'too large');
    assert.deepEqual(tooLarge.details, { providerId: 'seed.http', file: 'capabilities/route.json', reason: 'file_too_large', maxBytes: 262_144 });
  });
  await t.test('a provider.json that names no provider', async () => {
    // The file source's reason, under no provider ID.
    const nameless = await rejection(publish(db, seedCopy((d) => writeFileSync(path.join(d, 'provider.json'), 'null'))), 'null manifest');
    assertClean(nameless, 'null manifest');
    assert.deepEqual(nameless.toJSON(), { code: 'CG_DEFINITION_INVALID', phase: 'load', message: 'Provider definition is invalid', nextAction: 'fix_input', details: { file: 'provider.json', reason: 'object_required' } });
  });
  await t.test('a folder that is not there', async () => {
    // CG_CONFIG_INVALID, as the file source's missing root, naming publish()'s argument rather
    // than the path.
    const missing = await rejection(publish(db, path.join(server.dir, 'no-such-folder')), 'no folder');
    assertClean(missing, 'no folder');
    assert.deepEqual(missing.toJSON(), { code: 'CG_CONFIG_INVALID', phase: 'load', message: 'Configuration is invalid', nextAction: 'check_config', details: { path: 'providerDir', expected: 'readable directory' } });
    assert.deepEqual(await seedRevision(db), before);
  });
  await t.test('a provider.json linked inside the folder, which the file source follows', async () => {
    const linked = seedCopy((d) => (renameSync(path.join(d, 'provider.json'), path.join(d, 'manifest.json')), symlinkSync('manifest.json', path.join(d, 'provider.json'))));
    assert.equal((await publish(db, linked)).providerId, 'seed.http');
    assert.deepEqual(await seedRevision(db), before);
  });
  await t.test('a byte order mark, which the file source drops', async () => {
    // Published like the file without it.
    const marked = seedCopy((d) => writeFileSync(definition(d, 'route.json'), `\ufeff${readFileSync(definition(d, 'route.json'), 'utf8')}`));
    const files = await CapabilityGraph.open({ providers: [asFiles(marked)] });
    try {
      assert.equal((await publish(db, marked)).staticRevision, (await files.listProviders()).items[0].staticRevision);
    } finally {
      await files.close();
      await publish(db, seedRoot);
    }
  });
});

test('publish() refuses text jsonb cannot store (U+0000) up front, with its reason, and stores the text that only looks like it', { skip, timeout: 30_000 }, async () => {
  const db = pool();
  await publish(db, seedRoot);
  const before = await seedRevision(db);
  for (const [file, edit] of [
    ['capabilities/route.json', (d) => editRecord(d, 'route.json', { description: 'Binds\u0000paths.' })],
    ['provider.json', (d) => writeFileSync(path.join(d, 'provider.json'), JSON.stringify({ ...JSON.parse(readFileSync(path.join(seedRoot, 'provider.json'), 'utf8')), name: 'Seed\u0000' }))],
  ]) {
    const dir = seedCopy(edit);
    const error = await rejection(publish(db, dir), file);
    assertClean(error, file);
    assert.deepEqual(error.toJSON(), { code: 'CG_DEFINITION_INVALID', phase: 'load', message: 'Provider definition is invalid', nextAction: 'fix_input', details: { providerId: 'seed.http', file, reason: 'nul_character_unsupported' } });
    assert.deepEqual(await seedRevision(db), before, `${file}: nothing committed`);
  }
  // A backslash before `u0000` is text like any other: published and served as written.
  const text = 'Binds \\u0000 paths.';
  await publish(db, seedCopy((d) => editRecord(d, 'route.json', { description: text })));
  const host = await CapabilityGraph.open({ providers: [{ providerId: 'seed.http', authority: { kind: 'database', adapter: postgresAuthority(db, { knowledgeRootDir: seedRoot }), watch: false } }] });
  try {
    assert.equal((await host.getCapabilities(['seed.http::route'])).results[0].value.description, text);
  } finally {
    await host.close();
    await publish(db, seedRoot);
  }
});

test('publish() refuses a vectors file larger than one for its capabilities can be, by its size, naming the budget', { skip, timeout: 30_000 }, async () => {
  const db = pool();
  await publish(db, seedRoot);
  const before = await seedRevision(db);
  // 64 MiB, sparse: nothing of it is read.
  const dir = seedCopy((d) => {
    mkdirSync(path.join(d, 'vectors', 'acme'), { recursive: true });
    writeFileSync(path.join(d, 'vectors', 'acme', 'model.bin'), '');
    truncateSync(path.join(d, 'vectors', 'acme', 'model.bin'), 64 << 20);
  });
  const error = await rejection(publish(db, dir), 'a large vectors file');
  assertClean(error, 'a large vectors file');
  // Entries for twice the 5 capabilities and 16, each of the largest ID and dimensions.
  assert.deepEqual(error.toJSON(), {
    code: 'CG_INPUT_TOO_LARGE',
    phase: 'load',
    message: 'Request input exceeds its budget',
    nextAction: 'narrow_scope',
    details: { providerId: 'seed.http', file: 'vectors/acme/model.bin', maxBytes: 152 + 26 * 4_630 },
  });
  assert.deepEqual(await seedRevision(db), before);
});

test('publish() refuses a vectors file the engine refuses (an ID twice, out of order, not an ID, not a vectors file) before writing anything', { skip, timeout: 30_000 }, async () => {
  const db = pool();
  await publish(db, seedRoot);
  const before = await seedRevision(db);
  for (const [what, bytes] of [
    ['an ID twice', vectorsFileBytes(['route', 'route'])],
    ['out of order', vectorsFileBytes(['route.http', 'route'])],
    ['not an ID', vectorsFileBytes(['Route'])],
    ['not a vectors file', new TextEncoder().encode('not vectors')],
  ]) {
    const dir = seedCopy((d) => {
      mkdirSync(path.join(d, 'vectors'), { recursive: true });
      writeFileSync(path.join(d, 'vectors', 'words-v1.bin'), bytes);
    });
    const error = await rejection(publish(db, dir), what);
    assertClean(error, what);
    assert.deepEqual(error.toJSON(), {
      code: 'CG_INPUT_INVALID',
      phase: 'load',
      message: 'Request input is invalid',
      nextAction: 'fix_input',
      details: { providerId: 'seed.http', file: 'vectors/words-v1.bin', field: 'bytes' },
    }, what);
    assert.deepEqual(await seedRevision(db), before, `${what}: nothing committed`);
  }
});

test('publish() reports a database it cannot use as CG_CONFIG_INVALID without the driver\'s words: retry when it cannot connect', { skip, timeout: 30_000 }, async () => {
  // A database without the schema.
  const bare = await rejection(publish(pool('postgres'), seedRoot), 'no schema');
  assertClean(bare, 'no schema');
  assert.deepEqual(bare.toJSON(), { code: 'CG_CONFIG_INVALID', phase: 'load', message: 'Configuration is invalid', nextAction: 'check_config', details: { providerId: 'seed.http', reason: 'database_failed' } });
  // No server where the pool looks.
  const nowhere = new pg.Pool({ ...connection(), host: path.join(server.dir, 'no-server'), connectionTimeoutMillis: 5_000 });
  try {
    const error = await rejection(publish(nowhere, seedRoot), 'no server');
    assertClean(error, 'no server');
    assert.deepEqual([error.code, error.phase, error.nextAction], ['CG_CONFIG_INVALID', 'load', 'retry']);
    assert.deepEqual(error.details, { providerId: 'seed.http', reason: 'database_failed' });
  } finally {
    await nowhere.end();
  }
});
