// The installed capability-graph binary (SPEC §11): every command, output, exit codes, envelopes.
import test from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, cpSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, realpathSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import Ajv2020 from 'ajv/dist/2020.js';
import { projectWithoutModel, repoRoot, seedRoot } from './helpers.mjs';

/** A project that installed the package: node_modules/.bin/capability-graph. */
function project() {
  const dir = mkdtempSync(path.join(tmpdir(), 'cg-cli-'));
  mkdirSync(path.join(dir, 'node_modules', '@devcodex'), { recursive: true });
  mkdirSync(path.join(dir, 'node_modules', '.bin'));
  symlinkSync(repoRoot, path.join(dir, 'node_modules', '@devcodex', 'capability-graph'), 'dir');
  symlinkSync(path.join('..', '@devcodex', 'capability-graph', 'bin', 'capability-graph.cjs'), path.join(dir, 'node_modules', '.bin', 'capability-graph'));
  cpSync(seedRoot, path.join(dir, 'seed'), { recursive: true });
  writeFileSync(
    path.join(dir, 'capability-graph.json'),
    JSON.stringify({
      providers: [{ providerId: 'seed.http', authority: { kind: 'file', rootDir: 'seed', definitionLayout: 'directory' } }],
      executor: { kind: 'lexical' },
      mcp: { prefix: 'seed_', entryPoints: ['seed.http::route'] },
    }),
  );
  const run = (...args) => {
    const r = spawnSync(path.join(dir, 'node_modules', '.bin', 'capability-graph'), args, { cwd: dir, encoding: 'utf8' });
    return { code: r.status, stdout: r.stdout, stderr: r.stderr, json: () => JSON.parse(r.stdout) };
  };
  return { dir, run, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

const envelope = (r) => {
  assert.equal(r.code, 1);
  assert.equal(r.stdout, '');
  const e = JSON.parse(r.stderr);
  assert.equal(e.ok, false);
  return e.error;
};

test('doctor with a missing config prints exactly the documented envelope', () => {
  const p = project();
  try {
    const r = p.run('doctor', '--config', 'deliberately-missing-config.json');
    assert.equal(r.code, 1);
    assert.equal(r.stdout, '');
    assert.equal(
      r.stderr,
      '{"ok":false,"error":{"code":"CG_CONFIG_INVALID","phase":"config","message":"Cannot read a valid bounded JSON configuration file","nextAction":"check_config"}}\n',
    );
    writeFileSync(path.join(p.dir, 'big.json'), `{"x":"${'a'.repeat(1024 * 1024)}"}`);
    assert.equal(envelope(p.run('providers', '--config', 'big.json')).code, 'CG_CONFIG_INVALID');
    writeFileSync(path.join(p.dir, 'bad.json'), '{ nope');
    assert.equal(envelope(p.run('catalog', '--config', 'bad.json')).message, 'Cannot read a valid bounded JSON configuration file');
  } finally {
    p.cleanup();
  }
});

test('graph commands answer JSON when stdout is not a terminal', () => {
  const p = project();
  try {
    assert.equal(p.run('providers').json().items[0].providerId, 'seed.http');
    const catalog = p.run('catalog', '--limit', '2', '--json').json();
    assert.equal(catalog.items.length, 2);
    assert.equal(p.run('catalog', '--cursor', catalog.nextCursor, '--limit', '2').json().items[0].qualifiedId, 'seed.http::route.http');
    assert.deepEqual(p.run('catalog', '--prefix', 'route.').json().items.map((i) => i.qualifiedId), ['seed.http::route.http', 'seed.http::route.validation']);
    assert.deepEqual(p.run('catalog', '--parent', 'seed.http::route').json().items.length, 2);
    assert.equal(p.run('show', 'seed.http::route', 'seed.http::nope').json().results[1].error.code, 'CG_CAPABILITY_NOT_FOUND');
    assert.deepEqual(Object.keys(p.run('neighbors', 'seed.http::route', '--kinds', 'children,parents').json().groups).length, 8);
    assert.deepEqual(p.run('resolve', 'seed.http::route.validation').json().added, ['seed.http::schema.request']);
    assert.equal(p.run('select', 'seed.http::route.validation').json().resolved.length, 2);
    assert.equal(p.run('read', 'seed.http::route.validation', '--role', 'guide', '--locale', 'en').json().results[0].value.knowledgeId, 'D-02');
    assert.match(p.run('spec', 'seed.http', '--knowledge', 'SPEC-01').json().results[0].value.text, /Seed HTTP conventions/);
    const m = p.run('match', 'validate the request body before the handler runs', '--context', 'tenant=acme', '--limit', '2').json();
    assert.equal(m.matches[0].qualifiedId, 'seed.http::route.validation');
    const revision = p.run('providers').json().items[0].staticRevision;
    assert.equal(p.run('catalog', '--revision', revision, '--scope', 'seed.http').json().meta.staticRevision, revision);
    assert.equal(envelope(p.run('catalog', '--scope', 'other')).code, 'CG_SCOPE_DENIED');
    assert.equal(envelope(p.run('resolve', 'seed.http::nope')).code, 'CG_CAPABILITY_NOT_FOUND');
    assert.equal(envelope(p.run('catalog', '--revision', 's:0000000000000000')).code, 'CG_REVISION_MISMATCH');
  } finally {
    p.cleanup();
  }
});

test('read pages a document of any size with --cursor and --max-bytes', () => {
  const p = project();
  try {
    // A document over read.maxResponseBytes (4 MiB) cannot be read whole, only by pages.
    const line = 'A long guide line, repeated well past the whole-read budget.\n\n';
    const body = line.repeat(Math.ceil((4 * 1024 * 1024 + 1000) / line.length));
    writeFileSync(path.join(p.dir, 'seed', 'knowledge', 'route-validation.md'), body);
    // Its one item failed: the command failed.
    assert.equal(envelope(p.run('read', 'seed.http::route.validation', '--knowledge', 'D-02')).code, 'CG_DOCUMENT_TOO_LARGE');
    let page = p.run('read', 'seed.http::route.validation', '--knowledge', 'D-02', '--max-bytes', '32768').json();
    assert.equal(page.startOffset, 0);
    assert.ok(page.nextCursor && page.hasMore);
    assert.equal(page.text, body.slice(0, page.endOffset));
    const second = p.run('read', 'seed.http::route.validation', '--knowledge', 'D-02', '--cursor', page.nextCursor, '--max-bytes', '32768').json();
    assert.equal(second.startOffset, page.endOffset);
    assert.equal(second.text, body.slice(page.endOffset, second.endOffset));
    // The last page: no cursor.
    page = p.run('read', 'seed.http::route.http', '--knowledge', 'D-01', '--max-bytes', '32768').json();
    assert.deepEqual([page.hasMore, page.nextCursor], [false, undefined]);
    assert.equal(page.text, readFileSync(path.join(p.dir, 'seed', 'knowledge', 'route-http.md'), 'utf8'));
    const spec = p.run('spec', 'seed.http', '--knowledge', 'SPEC-01', '--max-bytes', '64').json();
    assert.equal(spec.text, readFileSync(path.join(p.dir, 'seed', 'PROVIDER.md'), 'utf8').slice(0, spec.endOffset));
    assert.ok(spec.hasMore && spec.endOffset <= 64);
    assert.equal(p.run('spec', 'seed.http', '--knowledge', 'SPEC-01', '--cursor', spec.nextCursor, '--max-bytes', '64').json().startOffset, spec.endOffset);
    // A page reads one document.
    for (const args of [
      ['read', 'seed.http::route.validation', '--max-bytes', '100'],
      ['read', 'seed.http::route.validation', '--knowledge', 'D-02', '--knowledge', 'D-01', '--cursor', 'x'],
      ['read', 'seed.http::route.validation', '--knowledge', 'D-02', '--role', 'guide', '--max-bytes', '100'],
      ['read', 'seed.http::route.validation', '--knowledge', 'D-02', '--max-bytes', 'ten'],
    ]) {
      const e = envelope(p.run(...args));
      assert.deepEqual([e.code, e.phase], ['CG_INPUT_INVALID', 'config'], args.join(' '));
    }
    assert.equal(envelope(p.run('read', 'seed.http::route.validation', '--knowledge', 'D-02', '--cursor', 'garbage!')).code, 'CG_INPUT_INVALID');
  } finally {
    p.cleanup();
  }
});

test('usage errors are CG_INPUT_INVALID in phase config; help and version work everywhere', () => {
  const p = project();
  try {
    for (const args of [['nope'], ['catalog', '--nope'], ['show'], ['neighbors'], ['catalog', '--limit'], ['catalog', '--limit', 'ten'], ['export', '--format', 'svg'], ['providers', 'extra'], ['catalog', '--json=yes'], ['match', 'x', '--context', 'novalue']]) {
      const e = envelope(p.run(...args));
      assert.deepEqual([e.code, e.phase, e.nextAction], ['CG_INPUT_INVALID', 'config', 'fix_input'], args.join(' '));
    }
    assert.match(p.run('--help').stdout, /^capability-graph /);
    assert.equal(p.run('catalog', '--help').code, 0);
    assert.equal(p.run('--version').stdout.trim(), JSON.parse(readFileSync(path.join(repoRoot, 'package.json'), 'utf8')).version);
    assert.equal(p.run('doctor', '--version').code, 0);
  } finally {
    p.cleanup();
  }
});

test('help and help <command> print help and exit 0; so does <command> --help', () => {
  const p = project();
  try {
    const overview = p.run('help');
    assert.deepEqual([overview.code, overview.stderr], [0, '']);
    assert.match(overview.stdout, /^capability-graph .*\n\nUsage: capability-graph <command>/);
    for (const command of ['catalog', 'match', 'doctor', 'help']) {
      for (const args of [['help', command], [command, '--help']]) {
        const r = p.run(...args);
        assert.deepEqual([r.code, r.stderr], [0, ''], args.join(' '));
        assert.ok(r.stdout.startsWith(`Usage: capability-graph ${command}`), r.stdout);
        assert.match(r.stdout, /--config FILE/);
      }
    }
    // A command with more than one form lists every form.
    for (const args of [['help', 'read'], ['read', '--help']]) {
      const r = p.run(...args);
      assert.equal(r.code, 0, args.join(' '));
      const forms = r.stdout.split('\n\n')[0].split('\n');
      assert.deepEqual(
        forms.map((l) => l.trim().replace(/\s+/g, ' ')),
        [
          'Usage: capability-graph read ID [--knowledge K]… [--role R]… [--locale L]… read documents',
          'capability-graph read ID --knowledge K [--max-bytes N] [--cursor C] read one document by pages',
        ],
      );
      assert.equal(forms[1].indexOf('capability-graph'), 'Usage: '.length, 'forms line up');
    }
  } finally {
    p.cleanup();
  }
});

test('-h, --help, help and no command at all print help on stdout and exit 0; so does COMMAND -h', () => {
  const p = project();
  try {
    const overview = p.run('help').stdout;
    assert.match(overview, /^capability-graph .*\n\nUsage: capability-graph <command>/);
    for (const args of [[], ['-h'], ['--help'], ['help']]) {
      const r = p.run(...args);
      assert.deepEqual([r.code, r.stdout, r.stderr], [0, overview, ''], args.join(' ') || 'no arguments');
    }
    // Every command's page, also for a command that needs arguments it was not given.
    for (const command of ['providers', 'catalog', 'show', 'read', 'match', 'export', 'mcp', 'doctor', 'init', 'migrate', 'embed', 'help']) {
      const page = p.run('help', command);
      assert.deepEqual([page.code, page.stderr], [0, ''], `help ${command}`);
      assert.ok(page.stdout.startsWith(`Usage: capability-graph ${command}`), page.stdout);
      for (const flag of ['-h', '--help']) {
        const r = p.run(command, flag);
        assert.deepEqual([r.code, r.stdout, r.stderr], [0, page.stdout, ''], `${command} ${flag}`);
      }
    }
    assert.match(overview, /^ {2}-h, --help\b/m);
  } finally {
    p.cleanup();
  }
});

test('-V, -v and --version print the version and exit 0, alone or with a command', () => {
  const p = project();
  try {
    const version = `${JSON.parse(readFileSync(path.join(repoRoot, 'package.json'), 'utf8')).version}\n`;
    for (const args of [['-V'], ['-v'], ['--version'], ['catalog', '-V'], ['doctor', '-v'], ['match', '--version']]) {
      const r = p.run(...args);
      assert.deepEqual([r.code, r.stdout, r.stderr], [0, version, ''], args.join(' '));
    }
    assert.match(p.run('help').stdout, /^ {2}-V, --version\b.*-v/m);
    // -v is only the one-letter form: --v is no flag.
    const e = envelope(p.run('--v'));
    assert.deepEqual([e.code, e.phase, e.details], ['CG_INPUT_INVALID', 'config', { field: '--v' }]);
  } finally {
    p.cleanup();
  }
});

test('a positional argument that starts with a dash is given after --; before it, it is an unknown flag', () => {
  const p = project();
  try {
    const intent = '-validate the request body before the handler runs';
    const m = p.run('match', '--limit', '2', '--', intent);
    assert.equal(m.code, 0, m.stderr);
    assert.equal(m.json().matches[0].qualifiedId, 'seed.http::route.validation');
    // After --, a flag's name is an argument too: here a second intent.
    assert.deepEqual(envelope(p.run('match', '--', intent, '--json')).details, { field: 'match' });
    const e = envelope(p.run('match', '-x'));
    assert.deepEqual([e.code, e.phase, e.details], ['CG_INPUT_INVALID', 'config', { field: '-x' }]);
    // A flag's value that starts with a dash is given with =: it reaches the graph, which judges it.
    assert.deepEqual(envelope(p.run('catalog', '--cursor', '-x')).details, { field: '--cursor' });
    const cursor = envelope(p.run('catalog', '--cursor=-x'));
    assert.deepEqual([cursor.phase, cursor.details.field], ['query', 'cursor']);
  } finally {
    p.cleanup();
  }
});

test('match --mode rank prints what the SDK answers; a no_match names its nearest; a bad mode is the graph\'s error', async () => {
  const p = project();
  const { CapabilityGraph, lexicalExecutor } = await import('@devcodex/capability-graph');
  const graph = await CapabilityGraph.open({ providers: [{ providerId: 'seed.http', authority: { kind: 'file', rootDir: path.join(p.dir, 'seed'), definitionLayout: 'directory' } }], executor: lexicalExecutor() });
  try {
    const intent = 'schema of the universe';
    const withoutMeta = ({ meta, ...rest }) => rest;
    const ranked = p.run('match', intent, '--mode', 'rank', '--limit', '2');
    assert.equal(ranked.code, 0, ranked.stderr);
    assert.deepEqual(withoutMeta(ranked.json()), withoutMeta(await graph.match({ intent, mode: 'rank', limit: 2 })));
    const refused = p.run('match', intent, '--mode=accept');
    assert.equal(refused.json().status, 'no_match');
    assert.deepEqual(refused.json().nearest, (await graph.match({ intent })).nearest);
    for (const mode of ['best', 'RANK']) {
      const e = envelope(p.run('match', intent, '--mode', mode));
      assert.deepEqual([e.code, e.phase, e.nextAction, e.details.field], ['CG_INPUT_INVALID', 'match', 'fix_input', 'mode']);
    }
    const missing = envelope(p.run('match', intent, '--mode'));
    assert.deepEqual([missing.code, missing.phase, missing.nextAction, missing.details], ['CG_INPUT_INVALID', 'config', 'fix_input', { field: '--mode' }]);
  } finally {
    await graph.close();
    p.cleanup();
  }
});

test('--context __proto__=x reaches match as an own context key, like any key', () => {
  const p = project();
  try {
    const ok = p.run('match', 'validate the request body', '--context', '__proto__=x', '--context', 'constructor=y');
    assert.equal(ok.code, 0, ok.stderr);
    // Counted like any key: 32 others plus __proto__ is one too many.
    const many = Array.from({ length: 32 }, (_, i) => ['--context', `k${i}=v`]).flat();
    const e = envelope(p.run('match', 'x', ...many, '--context', '__proto__=x'));
    assert.deepEqual([e.code, e.details], ['CG_CONTEXT_INVALID', { field: 'context', limit: 32 }]);
    assert.equal(p.run('match', 'x', ...many).code, 0);
  } finally {
    p.cleanup();
  }
});

test('export prints Mermaid, DOT and JSON', () => {
  const p = project();
  try {
    const json = p.run('export', '--format', 'json').json();
    assert.equal(json.nodes.length, 5);
    assert.ok(json.edges.some((e) => e.kind === 'requires' && e.from === 'seed.http::route.validation'));
    const mermaid = p.run('export', '--format', 'mermaid', '--provider', 'seed.http').stdout;
    const lines = mermaid.trim().split('\n');
    assert.equal(lines[0], 'flowchart LR');
    const nodes = lines.filter((l) => /^ {2}n\d+\["/.test(l));
    const edges = lines.filter((l) => /^ {2}n\d+ (-->|-\.->|-\.-|==>)\|\w+\| n\d+$/.test(l));
    assert.equal(nodes.length, 5);
    assert.equal(edges.length, json.edges.length);
    assert.equal(nodes.length + edges.length + 1, lines.length, 'every line is a node or an edge');
    const dot = p.run('export', '--format', 'dot').stdout;
    const parsed = spawnSync('dot', ['-Tjson'], { input: dot, encoding: 'utf8' });
    if (parsed.error?.code === 'ENOENT') {
      // Without Graphviz (CI installs it), a structural check.
      assert.match(dot, /^digraph capabilities \{[\s\S]*\}\n$/);
      assert.equal((dot.match(/ -> /g) ?? []).length, json.edges.length);
    } else {
      assert.equal(parsed.status, 0, parsed.stderr);
      const graph = JSON.parse(parsed.stdout);
      assert.equal(graph.objects.length, 5);
      assert.equal(graph.edges.length, json.edges.length);
    }
    assert.equal(envelope(p.run('export', '--format', 'json', '--provider', 'nope')).code, 'CG_PROVIDER_NOT_FOUND');
  } finally {
    p.cleanup();
  }
});

test('doctor reports checks; a readable config with problems is failed', () => {
  const p = project();
  try {
    const ok = p.run('doctor', '--json');
    assert.equal(ok.code, 0);
    assert.deepEqual(ok.json().checks.map((c) => [c.id, c.status]), [
      ['config', 'pass'],
      ['budgets', 'pass'],
      ['provider:seed.http', 'pass'],
      ['documents:seed.http', 'pass'],
      ['executor', 'pass'],
    ]);
    rmSync(path.join(p.dir, 'seed', 'knowledge', 'schema-request.md'));
    writeFileSync(path.join(p.dir, 'broken.json'), JSON.stringify({ providers: [{ providerId: 'seed.http', authority: { kind: 'file', rootDir: 'seed', definitionLayout: 'directory' } }, { providerId: 'ghost', authority: { kind: 'file', rootDir: 'ghost' } }], budgets: { catalog: { maxItems: 0 } } }));
    const bad = p.run('doctor', '--config', 'broken.json', '--json');
    assert.equal(bad.code, 1);
    const checks = Object.fromEntries(bad.json().checks.map((c) => [c.id, c]));
    assert.equal(bad.json().status, 'failed');
    assert.equal(checks.budgets.status, 'fail');
    assert.match(checks['documents:seed.http'].message, /D-03: CG_DOCUMENT_NOT_FOUND/);
    assert.equal(checks['provider:ghost'].status, 'fail');
    assert.match(checks['provider:ghost'].message, /"path":"providers\[1\]/);
    assert.equal(checks['provider:ghost'].problems, undefined, 'a provider that cannot be reached has no definitions to list');
    assert.equal(checks.executor.status, 'warn');
    assert.ok(!bad.stdout.includes(p.dir), 'no absolute path in the report');
  } finally {
    p.cleanup();
  }
});

test('doctor lists every definition problem of a provider, ordered and bounded', () => {
  const p = project();
  try {
    const put = (rel, value) => {
      mkdirSync(path.dirname(path.join(p.dir, 'acme', rel)), { recursive: true });
      writeFileSync(path.join(p.dir, 'acme', rel), JSON.stringify(value));
    };
    const cap = (capabilityId, extra = {}) => ({ capabilityId, name: 'N', description: 'D', whenToUse: 'W', ...extra });
    put('provider.json', { providerId: 'acme', name: 'Acme', version: '1' });
    put('capabilities/bad-id.json', { capabilityId: 'Bad ID', name: 'N', whenToUse: 'W' });
    put('capabilities/b.json', cap('b', { knowledge: [{ kind: 'document', knowledgeId: 'K-1', role: 'guide', locator: { type: 'relative-file', path: '../escape.md' } }] }));
    put('capabilities/c.json', cap('c', { requires: ['ghost', 'b'] }));
    put('capabilities/dup.json', cap('c'));
    put('capabilities/x.json', cap('x', { requires: ['y'] }));
    put('capabilities/y.json', cap('y', { requires: ['x'] }));
    writeFileSync(path.join(p.dir, 'acme.json'), JSON.stringify({ providers: [{ providerId: 'acme', authority: { kind: 'file', rootDir: 'acme', definitionLayout: 'directory' } }] }));
    const r = p.run('doctor', '--config', 'acme.json', '--json');
    assert.equal(r.code, 1);
    const check = r.json().checks.find((c) => c.id === 'provider:acme');
    assert.equal(check.status, 'fail');
    assert.match(check.message, /^CG_DEFINITION_INVALID /, 'the message is what open reports');
    assert.equal(check.omitted, 0);
    assert.deepEqual(
      check.problems.map((x) => [x.file, x.capabilityId, x.field, x.code, x.reason]),
      [
        ['capabilities/b.json', 'b', 'knowledge[0].locator.path', 'CG_DEFINITION_INVALID', 'path_invalid'],
        ['capabilities/bad-id.json', undefined, 'capabilityId', 'CG_DEFINITION_INVALID', 'id_invalid'],
        ['capabilities/bad-id.json', undefined, 'description', 'CG_DEFINITION_INVALID', 'required'],
        ['capabilities/c.json', 'c', 'requires', 'CG_RELATION_INVALID', 'missing_endpoint'],
        ['capabilities/dup.json', 'c', 'capabilityId', 'CG_DEFINITION_INVALID', 'duplicate_capability'],
        ['capabilities/x.json', 'x', 'requires', 'CG_RELATION_CYCLE', 'cycle'],
      ],
    );
    assert.ok(!r.stdout.includes(p.dir), 'no absolute path in the report');
    // open still stops at the first problem, with the same error as before.
    const open = spawnSync(process.execPath, ['--input-type=module', '-e', `
      import { CapabilityGraph } from '@devcodex/capability-graph';
      CapabilityGraph.open({ providers: [{ providerId: 'acme', authority: { kind: 'file', rootDir: 'acme', definitionLayout: 'directory' } }] })
        .catch((e) => console.log(JSON.stringify(e)));`], { cwd: p.dir, encoding: 'utf8' });
    const first = JSON.parse(open.stdout);
    assert.deepEqual([first.code, first.details.file, first.details.field], ['CG_DEFINITION_INVALID', 'capabilities/b.json', 'knowledge[0].locator.path']);

    // At most 100 problems are listed; the rest are counted.
    for (let i = 0; i < 60; i++) put(`capabilities/many-${String(i).padStart(2, '0')}.json`, { capabilityId: `m${i}`, name: ' ', description: ' ' });
    const many = p.run('doctor', '--config', 'acme.json', '--json').json().checks.find((c) => c.id === 'provider:acme');
    assert.equal(many.problems.length, 100);
    assert.equal(many.problems.length + many.omitted, 6 + 60 * 3);
    const keys = many.problems.map((x) => [x.file, x.capabilityId ?? '', x.field ?? '', x.code].join('\u0000'));
    assert.deepEqual(keys, [...keys].sort(), 'ordered by file, capabilityId, field, code');

    // An inline definition's problems point at the config file.
    writeFileSync(path.join(p.dir, 'inline.json'), JSON.stringify({ providers: [{ definition: { providerId: 'inl', name: 'I', version: '1', capabilities: [cap('a', { requires: ['nope'] }), { capabilityId: 'b2' }] } }] }));
    const inline = p.run('doctor', '--config', 'inline.json', '--json').json().checks.find((c) => c.id === 'provider:inl');
    assert.deepEqual(inline.problems.map((x) => [x.file, x.capabilityId, x.field, x.reason]), [
      ['inline.json', undefined, 'capabilities[1].description', 'required'],
      ['inline.json', undefined, 'capabilities[1].name', 'required'],
      ['inline.json', undefined, 'capabilities[1].whenToUse', 'required'],
      ['inline.json', 'a', 'capabilities[0].requires', 'missing_endpoint'],
    ]);
  } finally {
    p.cleanup();
  }
});

test('doctor lists a definition file that cannot be read or parsed beside every other problem', () => {
  const p = project();
  try {
    const write = (rel, text) => {
      mkdirSync(path.dirname(path.join(p.dir, 'acme', rel)), { recursive: true });
      writeFileSync(path.join(p.dir, 'acme', rel), text);
    };
    const cap = (capabilityId, extra = {}) => JSON.stringify({ capabilityId, name: 'N', description: 'D', whenToUse: 'W', ...extra });
    write('provider.json', JSON.stringify({ providerId: 'acme', name: 'Acme', version: '1' }));
    write('capabilities/a.json', cap('a', { requires: ['ghost'] }));
    write('capabilities/broken.json', '{ "capabilityId": ');
    write('capabilities/c.json', JSON.stringify({ capabilityId: 'c', name: 'N', whenToUse: 'W' }));
    write('capabilities/latin1.json', Buffer.from([0x7b, 0x22, 0xe9, 0x22, 0x3a, 0x31, 0x7d]));
    writeFileSync(path.join(p.dir, 'acme.json'), JSON.stringify({ providers: [{ providerId: 'acme', authority: { kind: 'file', rootDir: 'acme', definitionLayout: 'directory' } }] }));
    const r = p.run('doctor', '--config', 'acme.json', '--json');
    assert.equal(r.code, 1);
    const check = r.json().checks.find((c) => c.id === 'provider:acme');
    assert.match(check.message, /^CG_DEFINITION_INVALID /, 'the message is what open reports');
    assert.deepEqual(
      check.problems.map((x) => [x.file, x.capabilityId, x.field, x.code, x.reason]),
      [
        ['capabilities/a.json', 'a', 'requires', 'CG_RELATION_INVALID', 'missing_endpoint'],
        ['capabilities/broken.json', undefined, undefined, 'CG_DEFINITION_INVALID', 'invalid_json'],
        ['capabilities/c.json', undefined, 'description', 'CG_DEFINITION_INVALID', 'required'],
        ['capabilities/latin1.json', undefined, undefined, 'CG_DEFINITION_INVALID', 'invalid_utf8'],
      ],
    );
  } finally {
    p.cleanup();
  }
});

test('init creates a provider and its config; dry runs plan; conflicts write nothing', () => {
  const p = project();
  try {
    rmSync(path.join(p.dir, 'capability-graph.json'));
    const planned = p.run('init', 'mine', '--dry-run', '--json');
    assert.equal(planned.code, 3);
    assert.equal(planned.json().status, 'planned');
    assert.deepEqual(planned.json().checks.map((c) => c.id), ['targets', 'schema']);
    assert.ok(!existsSync(path.join(p.dir, 'mine')));
    const done = p.run('init', 'mine', '--provider-id', 'acme.mine', '--json');
    assert.equal(done.code, 0, done.stdout + done.stderr);
    // The report as before, with one more check (`schema`) and nothing for a person alone.
    assert.deepEqual(Object.keys(done.json()), ['status', 'checks', 'warnings', 'written']);
    assert.equal(done.json().status, 'ok');
    assert.deepEqual(done.json().checks.map((c) => c.id), ['config', 'budgets', 'provider:acme.mine', 'documents:acme.mine', 'executor', 'schema']);
    assert.doesNotMatch(done.stdout, /next:|npx capability-graph/);
    assert.equal(JSON.parse(readFileSync(path.join(p.dir, 'mine', 'provider.json'))).providerId, 'acme.mine');
    assert.deepEqual(readdirSync(path.join(p.dir, 'mine')).sort(), ['PROVIDER.md', 'capabilities', 'knowledge', 'provider.json']);
    assert.equal(p.run('match', 'a task a user might ask for').json().matches[0].qualifiedId, 'acme.mine::example');
    const before = readFileSync(path.join(p.dir, 'mine', 'provider.json'), 'utf8');
    const conflict = p.run('init', 'mine', '--json');
    assert.equal(conflict.code, 2);
    assert.equal(conflict.json().status, 'conflict');
    assert.equal(readFileSync(path.join(p.dir, 'mine', 'provider.json'), 'utf8'), before, 'untouched');
    assert.equal(p.run('init', 'mine', '--force', '--json').code, 0);
  } finally {
    p.cleanup();
  }
});

/** The files `init DIR` writes that have a JSON Schema, in `cwd`, by the schema that fits each. */
const initJsonFiles = (cwd, dir) => ({ provider: path.join(cwd, dir, 'provider.json'), capability: path.join(cwd, dir, 'capabilities', 'example.json'), config: path.join(cwd, 'capability-graph.json') });

/** Whether the package is installed in a folder above `dir` (then it resolves from `dir`). */
const installedAbove = (dir) =>
  path
    .dirname(dir)
    .split(path.sep)
    .map((_, i, parts) => parts.slice(0, i + 1).join(path.sep) || path.sep)
    .some((d) => existsSync(path.join(d, 'node_modules', '@devcodex', 'capability-graph')));

/** The static revision of the provider a config opens, by the command line. */
const revisionBy = (run) => JSON.parse(run('providers', '--json').stdout).items[0].staticRevision;

test('init names each file\'s JSON Schema as the package resolves from its folder; an editor validates the files offline', () => {
  const p = project();
  try {
    rmSync(path.join(p.dir, 'capability-graph.json'));
    const planned = p.run('init', 'mine', '--dry-run', '--json').json().checks.find((c) => c.id === 'schema');
    const done = p.run('init', 'mine', '--json');
    assert.equal(done.code, 0, done.stdout + done.stderr);
    const check = done.json().checks.find((c) => c.id === 'schema');
    assert.deepEqual(check, { id: 'schema', status: 'pass', message: '"$schema" names the JSON Schemas in node_modules/@devcodex/capability-graph/schema' });
    assert.deepEqual(planned, check, 'the dry run says the same');
    const expected = {
      provider: '../node_modules/@devcodex/capability-graph/schema/provider.json',
      capability: '../../node_modules/@devcodex/capability-graph/schema/capability.json',
      config: './node_modules/@devcodex/capability-graph/schema/config.json',
    };
    for (const [kind, file] of Object.entries(initJsonFiles(p.dir, 'mine'))) {
      const value = JSON.parse(readFileSync(file, 'utf8'));
      // First, and through node_modules although the package there is a link.
      assert.equal(Object.keys(value)[0], '$schema', file);
      assert.equal(value.$schema, expected[kind]);
      // As an editor does: the schema file the path names, from the file's folder, nothing else.
      const schemaFile = path.resolve(path.dirname(file), value.$schema);
      assert.equal(realpathSync(schemaFile), realpathSync(path.join(repoRoot, 'schema', `${kind}.json`)));
      const validate = new Ajv2020({ strict: true, allErrors: true }).compile(JSON.parse(readFileSync(schemaFile, 'utf8')));
      assert.ok(validate(value), `${kind}: ${JSON.stringify(validate.errors)}`);
    }
    // The engine opens what init wrote; a provider folder outside the project gets no $schema
    // (the package does not resolve from there) while the config beside it does.
    assert.equal(p.run('catalog').json().items[0].qualifiedId, 'mine::example');
    const outside = mkdtempSync(path.join(tmpdir(), 'cg-outside-'));
    try {
      if (installedAbove(outside)) return;
      const elsewhere = p.run('init', path.join(outside, 'mine'), '--force', '--json');
      assert.equal(elsewhere.code, 0, elsewhere.stdout + elsewhere.stderr);
      const files = initJsonFiles(p.dir, path.relative(p.dir, path.join(outside, 'mine')));
      assert.equal(JSON.parse(readFileSync(files.config, 'utf8')).$schema, expected.config);
      assert.equal(JSON.parse(readFileSync(files.provider, 'utf8')).$schema, undefined);
      const warned = elsewhere.json().checks.find((c) => c.id === 'schema');
      assert.equal(warned.status, 'warn');
      assert.match(warned.message, /^no "\$schema" in \.\.\/cg-outside-[^,]*\/mine\/provider\.json, [^,]*\/mine\/capabilities\/example\.json: /);
    } finally {
      rmSync(outside, { recursive: true, force: true });
    }
  } finally {
    p.cleanup();
  }
});

test('init run where the package does not resolve (a global or one-off run) writes no $schema and says how to add it', (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'cg-global-'));
  if (installedAbove(dir)) return t.skip('the package is installed above the temporary folder');
  try {
    const run = (...args) => spawnSync(process.execPath, [path.join(repoRoot, 'bin', 'capability-graph.cjs'), ...args], { cwd: dir, encoding: 'utf8' });
    const planned = JSON.parse(run('init', 'mine', '--dry-run', '--json').stdout).checks.find((c) => c.id === 'schema');
    const r = run('init', 'mine', '--json');
    assert.equal(r.status, 0, r.stdout + r.stderr);
    const check = JSON.parse(r.stdout).checks.find((c) => c.id === 'schema');
    assert.deepEqual(check, {
      id: 'schema',
      status: 'warn',
      message:
        'no "$schema" in mine/provider.json, mine/capabilities/example.json, capability-graph.json: @devcodex/capability-graph does not resolve from there (a global or one-off run); ' +
        'install it in the project (npm install --save-dev @devcodex/capability-graph) and add "$schema" as each file\'s first key, e.g. "../node_modules/@devcodex/capability-graph/schema/provider.json" in mine/provider.json',
    });
    assert.deepEqual(planned, check, 'the dry run says the same');
    for (const file of Object.values(initJsonFiles(dir, 'mine'))) assert.equal(JSON.parse(readFileSync(file, 'utf8')).$schema, undefined, file);
    // `$schema` never enters the static revision: the same provider with it has the same one.
    const p = project();
    try {
      rmSync(path.join(p.dir, 'capability-graph.json'));
      assert.equal(p.run('init', 'mine', '--json').code, 0);
      assert.ok(JSON.parse(readFileSync(path.join(p.dir, 'mine', 'provider.json'), 'utf8')).$schema);
      assert.equal(revisionBy(p.run), revisionBy(run));
    } finally {
      p.cleanup();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('migrate moves a legacy provider to the directory layout with its revision unchanged', () => {
  const p = project();
  try {
    const legacy = path.join(p.dir, 'legacy');
    cpSync(seedRoot, legacy, { recursive: true });
    mkdirSync(path.join(legacy, 'defs', 'http'), { recursive: true });
    for (const f of readdirSync(path.join(legacy, 'capabilities'))) {
      const target = f.startsWith('route') ? path.join('defs', 'http', f) : f;
      renameSync(path.join(legacy, 'capabilities', f), path.join(legacy, target.replace(/\.json$/, '.capability.json')));
    }
    rmSync(path.join(legacy, 'capabilities'), { recursive: true });
    writeFileSync(path.join(p.dir, 'legacy.json'), JSON.stringify({ providers: [{ providerId: 'seed.http', authority: { kind: 'file', rootDir: 'legacy' } }] }));
    const before = p.run('providers', '--config', 'legacy.json').json().items[0].staticRevision;
    const planned = p.run('migrate', 'legacy', '--dry-run', '--json');
    assert.equal(planned.code, 3);
    assert.ok(planned.json().planned.includes('defs/http/route-http.capability.json -> capabilities/defs/http/route-http.json'));
    assert.ok(existsSync(path.join(legacy, 'request.capability.json')), 'a dry run writes nothing');
    const done = p.run('migrate', 'legacy', '--config', 'legacy.json', '--json');
    assert.equal(done.code, 0, done.stdout + done.stderr);
    assert.equal(done.json().checks[0].status, 'pass');
    assert.ok(!existsSync(path.join(legacy, 'request.capability.json')));
    assert.ok(existsSync(path.join(legacy, 'capabilities', 'request.json')));
    const config = JSON.parse(readFileSync(path.join(p.dir, 'legacy.json'), 'utf8'));
    assert.equal(config.providers[0].authority.definitionLayout, 'directory');
    assert.equal(p.run('providers', '--config', 'legacy.json').json().items[0].staticRevision, before);
    assert.equal(p.run('migrate', 'legacy', '--json').json().status, 'ok', 'nothing left to do');
    // A target in the way is a conflict, and nothing moves.
    const other = path.join(p.dir, 'other');
    cpSync(path.join(legacy), other, { recursive: true });
    rmSync(path.join(other, 'capabilities'), { recursive: true });
    writeFileSync(path.join(other, 'request.capability.json'), readFileSync(path.join(legacy, 'capabilities', 'request.json')));
    mkdirSync(path.join(other, 'capabilities'));
    writeFileSync(path.join(other, 'capabilities', 'request.json'), 'in the way');
    const conflict = p.run('migrate', 'other', '--json');
    assert.equal(conflict.code, 2);
    assert.equal(conflict.json().status, 'conflict');
    assert.ok(existsSync(path.join(other, 'request.capability.json')));
    assert.equal(readFileSync(path.join(other, 'capabilities', 'request.json'), 'utf8'), 'in the way');
    // A tree that would not load in the directory layout is rolled back.
    rmSync(path.join(other, 'capabilities', 'request.json'));
    writeFileSync(path.join(other, 'capabilities', 'notes.json'), '{ not a definition');
    const failed = p.run('migrate', 'other', '--json');
    assert.equal(failed.code, 1);
    assert.equal(failed.json().status, 'failed');
    assert.ok(existsSync(path.join(other, 'request.capability.json')), 'moved back');
    assert.ok(!existsSync(path.join(other, 'capabilities', 'request.json')));
  } finally {
    p.cleanup();
  }
});

test('mcp serves tools over stdio with only the protocol on stdout', async () => {
  const p = project();
  const transport = new StdioClientTransport({
    command: path.join(p.dir, 'node_modules', '.bin', 'capability-graph'),
    args: ['mcp', '--document-bodies'],
    cwd: p.dir,
    stderr: 'pipe',
  });
  const client = new Client({ name: 'cli-test', version: '1.0.0' });
  try {
    await client.connect(transport);
    const { tools } = await client.listTools();
    assert.ok(tools.some((t) => t.name === 'seed_list_entry_points'));
    const r = await client.callTool({ name: 'seed_read_specification', arguments: { providerId: 'seed.http' } });
    assert.notEqual(r.isError, true);
  } finally {
    await client.close();
    p.cleanup();
  }
});

test('mcp --watch reloads a file provider its author edits; stderr says what it serves', async () => {
  const p = project();
  const transport = new StdioClientTransport({
    command: path.join(p.dir, 'node_modules', '.bin', 'capability-graph'),
    args: ['mcp', '--watch'],
    cwd: p.dir,
    stderr: 'pipe',
  });
  let log = '';
  // A line written from now on (the watch already reported its first read).
  const logged = (pattern, from = log.length) =>
    new Promise((resolve) => {
      const check = () => pattern.test(log.slice(from)) && resolve();
      transport.stderr.on('data', (d) => {
        log += d;
        check();
      });
      check();
    });
  const client = new Client({ name: 'cli-test', version: '1.0.0' });
  const name = async () => {
    const r = await client.callTool({ name: 'seed_get_capabilities', arguments: { ids: ['seed.http::route'] } });
    return JSON.parse(r.content[0].text).results[0].value.name;
  };
  try {
    const listening = logged(/seed\.http serves s:[0-9a-f]{16}/);
    await client.connect(transport);
    await listening;
    assert.equal(await name(), 'Routing');
    const file = path.join(p.dir, 'seed', 'capabilities', 'route.json');
    const served = logged(/seed\.http serves s:[0-9a-f]{16}/);
    writeFileSync(file, JSON.stringify({ ...JSON.parse(readFileSync(file, 'utf8')), name: 'Routing, edited' }));
    await served;
    assert.equal(await name(), 'Routing, edited');
    const failed = logged(/seed\.http reload failed: \{"code":"CG_DEFINITION_INVALID"/);
    writeFileSync(file, '{');
    await failed;
    assert.equal(await name(), 'Routing, edited', 'the last good snapshot stays in service');
  } finally {
    await client.close();
    p.cleanup();
  }
});

const hasScript = /util-linux/.test(spawnSync('script', ['--version'], { encoding: 'utf8' }).stdout ?? '');
const noScript = !hasScript && "the pseudo-terminal comes from util-linux's script";

/** `capability-graph ARGS` in project `p`, run on a pseudo-terminal by script(1): stdout and
 *  stderr are a TTY, merged into the result's stdout. */
function runOnTerminal(p, args) {
  const command = [p.bin ?? 'node_modules/.bin/capability-graph', ...args].map((a) => `'${a}'`).join(' ');
  return spawnSync('script', ['-qec', command, '/dev/null'], { cwd: p.dir, encoding: 'utf8', input: '' });
}

/** The exit code and non-empty lines of `capability-graph ARGS` on a terminal; the progress
 *  line, erased before anything else is printed, is left out. */
function onTerminal(p, ...args) {
  const r = runOnTerminal(p, args);
  // eslint-disable-next-line no-control-regex
  const lines = r.stdout.replace(/loading providers…\r\x1b\[K/g, '').split(/\r?\n/).filter(Boolean);
  return { code: r.status, lines };
}

test('on a terminal: readable tables, and progress on stderr', { skip: noScript }, () => {
  const p = project();
  try {
    const tty = (...args) => runOnTerminal(p, args).stdout.replace(/\r/g, '');
    const table = tty('providers');
    assert.match(table, /provider\s+name\s+version\s+revision\n-+/);
    assert.match(table, /seed\.http\s+Seed HTTP\s+0\.1\.0\s+s:[0-9a-f]{16}/);
    assert.match(table, /loading providers…/, 'progress while loading');
    assert.doesNotMatch(tty('providers', '--json'), /loading providers/, 'never with --json');
    assert.match(tty('match', 'add an HTTP endpoint'), /matched\n {2}seed\.http::route\.http/);
    // A no_match on a terminal lists the nearest candidates under it.
    assert.match(tty('match', 'schema of the universe'), /no_match\nnearest:\n {2}seed\.http::\S+ {2}0\.\d+\n/);
  } finally {
    p.cleanup();
  }
});

test('on a terminal a config error is followed by a line naming the file and what is wrong with it', { skip: noScript }, () => {
  const p = project();
  try {
    writeFileSync(path.join(p.dir, 'broken.json'), '{ "providers": [');
    mkdirSync(path.join(p.dir, 'folder.json'));
    const ENVELOPE =
      '{"ok":false,"error":{"code":"CG_CONFIG_INVALID","phase":"config","message":"Cannot read a valid bounded JSON configuration file","nextAction":"check_config"}}';
    assert.deepEqual(onTerminal(p, 'providers', '--config', 'missing.json'), {
      code: 1,
      lines: [ENVELOPE, 'capability-graph: config file "missing.json" does not exist; create one with `capability-graph init DIR` or pass --config FILE'],
    });
    rmSync(path.join(p.dir, 'capability-graph.json'));
    assert.match(onTerminal(p, 'doctor').lines[1], /^capability-graph: config file "capability-graph\.json" does not exist; create one with `capability-graph init DIR`/);
    assert.deepEqual(onTerminal(p, 'catalog', '--config', 'broken.json').lines, [ENVELOPE, 'capability-graph: config file "broken.json" is not valid JSON holding an object']);
    assert.deepEqual(onTerminal(p, 'catalog', '--config', 'folder.json').lines, [
      ENVELOPE,
      'capability-graph: config file "folder.json" cannot be read (not a readable regular file of at most 1 MiB)',
    ]);
    // Not on a terminal: the envelope alone, byte for byte.
    const piped = p.run('providers', '--config', 'missing.json');
    assert.equal(piped.stderr, `${ENVELOPE}\n`);
    // A file whose reported size lies (0, and it never ends) is read only up to the bound.
    if (existsSync('/proc/self/pagemap')) {
      const lying = p.run('catalog', '--config', '/proc/self/pagemap');
      assert.deepEqual([lying.code, lying.stderr], [1, `${ENVELOPE}\n`]);
    }
  } finally {
    p.cleanup();
  }
});

test('on a terminal a missing optional package is followed by the command that installs it', { skip: noScript }, () => {
  // A project with this package and neither the MCP SDK nor the weights package installed.
  const p = projectWithoutModel();
  try {
    cpSync(seedRoot, path.join(p.dir, 'seed'), { recursive: true });
    writeFileSync(path.join(p.dir, 'capability-graph.json'), JSON.stringify({ providers: [{ providerId: 'seed.http', authority: { kind: 'file', rootDir: 'seed', definitionLayout: 'directory' } }] }));
    const { code, lines } = onTerminal(p, 'mcp');
    assert.equal(code, 1, lines.join('\n'));
    assert.equal(JSON.parse(lines[0]).error.details.package, '@modelcontextprotocol/sdk');
    assert.match(lines[1], /; install it: `npm install @modelcontextprotocol\/sdk`$/);
  } finally {
    p.cleanup();
  }
});

const NOT_FOUND = '{"ok":false,"error":{"code":"CG_CAPABILITY_NOT_FOUND","phase":"query","message":"Requested capability does not exist","nextAction":"refresh"}}';
const NO_DOCUMENT =
  '{"ok":false,"error":{"code":"CG_DOCUMENT_NOT_FOUND","phase":"document","message":"Requested document does not exist","nextAction":"fix_input","details":{"knowledgeId":"NOPE"}}}';

/** A listing of a tree: every entry's relative path, type and content. */
function tree(dir) {
  const out = [];
  const walk = (rel) => {
    for (const name of readdirSync(path.join(dir, rel)).sort()) {
      const child = path.join(rel, name);
      const stat = lstatSync(path.join(dir, child));
      if (stat.isDirectory()) {
        out.push(`${child}/`);
        walk(child);
      } else out.push(`${child} ${readFileSync(path.join(dir, child), 'utf8')}`);
    }
  };
  walk('');
  return out;
}

test('a closed stdout ends a command quietly with exit 0', async () => {
  const p = project();
  try {
    const bin = path.join(p.dir, 'node_modules', '.bin', 'capability-graph');
    const closed = (...args) =>
      new Promise((resolve) => {
        const child = spawn(bin, args, { cwd: p.dir, stdio: ['ignore', 'pipe', 'pipe'] });
        // The reader is gone before the command writes anything: every write is EPIPE.
        child.stdout.destroy();
        let stderr = '';
        child.stderr.setEncoding('utf8').on('data', (c) => (stderr += c));
        child.on('close', (code, signal) => resolve({ code, signal, stderr }));
      });
    for (const args of [['export', '--format', 'json'], ['export', '--format', 'dot'], ['catalog'], ['read', 'seed.http::route.validation'], ['doctor', '--json'], ['help'], ['--version']]) {
      assert.deepEqual(await closed(...args), { code: 0, signal: null, stderr: '' }, args.join(' '));
    }
    const piped = spawnSync('bash', ['-c', `set -o pipefail; '${bin}' export --format json | head -c 10`], { cwd: p.dir, encoding: 'utf8' });
    assert.deepEqual([piped.status, piped.stdout.length, piped.stderr], [0, 10, '']);
  } finally {
    p.cleanup();
  }
});

test('a graph command whose every item failed exits 1 with the first failure as its envelope; a partial batch exits 0', () => {
  const p = project();
  try {
    for (const [args, stderr] of [
      [['show', 'seed.http::nope'], NOT_FOUND],
      [['show', 'seed.http::nope', 'other::x'], NOT_FOUND],
      [['show', 'other::x', 'seed.http::nope'], '{"ok":false,"error":{"code":"CG_PROVIDER_NOT_FOUND","phase":"query","message":"Requested provider does not exist","nextAction":"refresh"}}'],
      [['read', 'seed.http::route', '--knowledge', 'NOPE'], NO_DOCUMENT],
      [['spec', 'seed.http', '--knowledge', 'NOPE'], NO_DOCUMENT],
    ]) {
      const r = p.run(...args);
      assert.deepEqual([r.code, r.stdout, r.stderr], [1, '', `${stderr}\n`], args.join(' '));
    }
    const partial = p.run('show', 'seed.http::route', 'seed.http::nope');
    assert.deepEqual([partial.code, partial.stderr], [0, '']);
    assert.deepEqual(partial.json().results.map((s) => s.ok), [true, false]);
    const reads = p.run('read', 'seed.http::route', '--knowledge', 'D-01', '--knowledge', 'NOPE');
    assert.deepEqual([reads.code, reads.stderr], [0, '']);
    assert.deepEqual(reads.json().results.map((s) => s.error?.code ?? s.value.knowledgeId), ['D-01', 'CG_DOCUMENT_NOT_FOUND']);
    // Nothing failed: no top-level documents is an answer (filtered_empty), exit 0.
    const empty = p.run('read', 'seed.http::route');
    assert.deepEqual([empty.code, empty.stderr, empty.json().knowledgeState, empty.json().results], [0, '', 'filtered_empty', []]);
  } finally {
    p.cleanup();
  }
});

test('--context values are JSON scalars where they are valid JSON and strings otherwise', () => {
  const p = project();
  try {
    const intent = 'validate the request body';
    for (const value of ['007', '7', '-0', '1e400', '[1]', '{}', '"quoted"', 'true', 'null', '', 'a=b', '0x10']) {
      const r = p.run('match', intent, '--context', `n=${value}`);
      assert.deepEqual([r.code, r.stderr], [0, ''], value);
    }
    // A number is a number, whatever its length; a string is at most 1 KiB.
    const long = '0'.repeat(1030);
    assert.equal(p.run('match', intent, '--context', `n=0.${long}1`).code, 0, 'a valid JSON number');
    const e = envelope(p.run('match', intent, '--context', `n=${long}7`));
    assert.deepEqual([e.code, e.phase], ['CG_CONTEXT_INVALID', 'match'], 'leading zeros: not JSON, so a string, over 1 KiB');
  } finally {
    p.cleanup();
  }
});

test('a bad mcp block in the config is CG_CONFIG_INVALID naming it; a bad --prefix is a usage error', () => {
  const p = project();
  try {
    const config = (mcp) => {
      writeFileSync(path.join(p.dir, 'mcp.json'), JSON.stringify({ providers: [{ providerId: 'seed.http', authority: { kind: 'file', rootDir: 'seed', definitionLayout: 'directory' } }], mcp }));
      return p.run('mcp', '--config', 'mcp.json');
    };
    for (const [mcp, where] of [
      [{ prefix: 'bad prefix!' }, 'mcp.prefix'],
      [{ documentBodies: 'yes' }, 'mcp.documentBodies'],
      [{ entryPoints: ['not an id'] }, 'mcp.entryPoints[0]'],
      [{ nope: 1 }, 'mcp.nope'],
      [5, 'mcp'],
      [[], 'mcp'],
      [null, 'mcp'],
    ]) {
      const e = envelope(config(mcp));
      assert.deepEqual([e.code, e.phase, e.nextAction, e.details?.path], ['CG_CONFIG_INVALID', 'config', 'check_config', where], JSON.stringify(mcp));
    }
    const e = envelope(p.run('mcp', '--prefix', 'bad prefix!'));
    assert.deepEqual([e.code, e.phase, e.details], ['CG_INPUT_INVALID', 'config', { field: '--prefix' }]);
  } finally {
    p.cleanup();
  }
});

test('a config file that starts with a UTF-8 BOM is read like any other', () => {
  const p = project();
  try {
    writeFileSync(path.join(p.dir, 'bom.json'), '\uFEFF' + readFileSync(path.join(p.dir, 'capability-graph.json'), 'utf8'));
    const r = p.run('providers', '--config', 'bom.json');
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.json().items[0].providerId, 'seed.http');
    assert.equal(p.run('doctor', '--config', 'bom.json', '--json').code, 0);
  } finally {
    p.cleanup();
  }
});

test('on a terminal every error is the exact envelope and one line for a person; --json or a pipe gets the envelope alone', { skip: noScript }, () => {
  const p = project();
  try {
    const shown = onTerminal(p, 'show', 'seed.http::nope');
    assert.equal(shown.code, 1);
    assert.equal(shown.lines.length, 2, shown.lines.join('\n'));
    assert.equal(shown.lines[0], NOT_FOUND);
    assert.match(shown.lines[1], /^capability-graph: requested capability does not exist.*; .*catalog/);
    for (const args of [['catalog', '--nope'], ['resolve', 'seed.http::nope'], ['catalog', '--revision', 's:0000000000000000'], ['read', 'seed.http::route', '--knowledge', 'NOPE'], ['match', 'x', '--context', 'novalue']]) {
      const r = onTerminal(p, ...args);
      assert.equal(r.code, 1, args.join(' '));
      assert.equal(r.lines.length, 2, r.lines.join('\n'));
      assert.equal(JSON.parse(r.lines[0]).ok, false);
      assert.match(r.lines[1], /^capability-graph: \S.*; \S/, args.join(' '));
      assert.ok(!r.lines[1].includes(p.dir), 'no path');
    }
    assert.match(onTerminal(p, 'catalog', '--nope').lines[1], /--nope.*capability-graph help catalog/);
    // --json: the envelope alone, config errors included.
    assert.deepEqual(onTerminal(p, 'show', 'seed.http::nope', '--json').lines, [NOT_FOUND]);
    assert.equal(onTerminal(p, 'providers', '--config', 'missing.json', '--json').lines.length, 1);
    // Not on a terminal: the envelope alone.
    assert.equal(p.run('show', 'seed.http::nope').stderr, `${NOT_FOUND}\n`);
  } finally {
    p.cleanup();
  }
});

test('help COMMAND explains the command: what it does, every flag, an example and its exit codes', () => {
  const FLAGS = {
    providers: [],
    catalog: ['--prefix', '--parent', '--limit', '--cursor'],
    show: [],
    neighbors: ['--kinds', '--limit'],
    resolve: [],
    select: [],
    read: ['--knowledge', '--role', '--locale', '--max-bytes', '--cursor'],
    spec: ['--knowledge', '--max-bytes', '--cursor'],
    match: ['--context', '--limit'],
    export: ['--provider', '--format'],
    mcp: ['--prefix', '--document-bodies', '--http', '--allowed-host', '--allowed-origin', '--token-file', '--allow-unauthenticated', '--watch'],
    doctor: [],
    init: ['--provider-id', '--dry-run', '--force'],
    migrate: ['--dry-run'],
  };
  const COMMON = ['--config', '--json', '--scope', '--revision', '--help', '--version'];
  const p = project();
  try {
    for (const [command, flags] of Object.entries(FLAGS)) {
      const help = p.run('help', command);
      assert.deepEqual([help.code, help.stderr], [0, ''], command);
      assert.equal(p.run(command, '--help').stdout, help.stdout, `${command} --help is help ${command}`);
      const sections = Object.fromEntries(
        help.stdout.split('\n\n').map((block) => [block.split('\n')[0].replace(/:$/, ''), block]),
      );
      // After the usage lines: a sentence or more saying what the command does.
      const about = help.stdout.split('\n\n')[1];
      assert.ok(about && !/^(Flags|Common flags|Examples?|Exit codes)$/.test(about.split('\n')[0]) && about.length > 40, `${command} says what it does:\n${help.stdout}`);
      for (const flag of flags) assert.match(sections.Flags ?? '', new RegExp(`^  ${flag}\\b.*\\S`, 'm'), `${command} explains ${flag}`);
      if (!flags.length) assert.equal(sections.Flags, undefined, `${command} has no flags of its own`);
      for (const flag of COMMON) assert.match(sections['Common flags'] ?? '', new RegExp(`${flag}\\b`), `${command} lists ${flag}`);
      assert.match(sections.Example ?? sections.Examples ?? '', new RegExp(`^  capability-graph ${command}\\b`, 'm'), `${command} has an example`);
      const exits = sections['Exit codes'] ?? '';
      assert.match(exits, /^  0 /m, `${command} says when it exits 0`);
      assert.match(exits, /^  1 /m, `${command} says when it exits 1`);
      if (['init', 'migrate'].includes(command)) for (const code of [2, 3]) assert.match(exits, new RegExp(`^  ${code} `, 'm'), `${command} exits ${code}`);
    }
    // The rules are docs/cli.md's: a partial batch is an answer, a batch whose every item failed is not.
    assert.match(p.run('help', 'show').stdout, /partial batch/);
    assert.match(p.run('help', 'init').stdout, /conflict/);
    // Every graph command's example runs against the shipped seed provider.
    for (const command of ['providers', 'catalog', 'show', 'neighbors', 'resolve', 'select', 'read', 'spec', 'match', 'export']) {
      const example = p.run('help', command).stdout.match(/^  capability-graph (.*)$/m)[1].replace(/\s+#.*$/, '');
      const args = [...example.matchAll(/"([^"]*)"|(\S+)/g)].map((m) => m[1] ?? m[2]).slice(1);
      const r = p.run(command, ...args);
      assert.equal(r.code, 0, `capability-graph ${example}: ${r.stderr}`);
    }
  } finally {
    p.cleanup();
  }
});

test('an unknown flag or command suggests the nearest one on a terminal; the envelope stays exact', { skip: noScript }, () => {
  const p = project();
  try {
    const limit = onTerminal(p, 'catalog', '--limt', '5');
    assert.equal(limit.code, 1);
    assert.deepEqual(limit.lines[0], '{"ok":false,"error":{"code":"CG_INPUT_INVALID","phase":"config","message":"Request input is invalid","nextAction":"fix_input","details":{"field":"--limt"}}}');
    assert.match(limit.lines[1], /^capability-graph: .*--limt.*did you mean --limit\?.*capability-graph help catalog/);
    assert.match(onTerminal(p, 'read', 'seed.http::route', '--knowlege', 'D-01').lines[1], /did you mean --knowledge\?/);
    assert.match(onTerminal(p, 'catalog', '--jsno').lines[1], /did you mean --json\?/);
    assert.match(onTerminal(p, 'mcp', '--document-body').lines[1], /did you mean --document-bodies\?/);
    assert.match(onTerminal(p, 'catlog').lines[1], /did you mean catalog\?/);
    // Nothing near: no guess.
    assert.doesNotMatch(onTerminal(p, 'catalog', '--zzzzzz').lines[1], /did you mean/);
    // A flag of another command is not offered.
    assert.doesNotMatch(onTerminal(p, 'providers', '--limt').lines[1], /did you mean/);
    // Not on a terminal, or with --json: the envelope alone, as before.
    assert.equal(p.run('catalog', '--limt', '5').stderr, `${limit.lines[0]}\n`);
    assert.deepEqual(onTerminal(p, 'catalog', '--limt', '5', '--json').lines, [limit.lines[0]]);
  } finally {
    p.cleanup();
  }
});

test('mcp on a terminal says on stderr that it serves MCP on stdio and how a client connects; piped, it prints nothing', { skip: noScript }, () => {
  const p = project();
  try {
    // Its input ends at once: the server answers nothing and exits.
    const shown = onTerminal(p, 'mcp', '--config', 'capability-graph.json');
    assert.equal(shown.code, 0, shown.lines.join('\n'));
    assert.equal(shown.lines.length, 1, shown.lines.join('\n'));
    assert.match(shown.lines[0], /^capability-graph: serving MCP on stdio; connect a client that starts this command, e\.g\. /);
    // The inspector command it gives is the documented form, with the config it was given.
    const docs = readFileSync(path.join(repoRoot, 'docs', 'tools-and-mcp.md'), 'utf8');
    assert.match(docs, /^### Connecting a client$/m);
    const inspector = /e\.g\. (npx @modelcontextprotocol\/inspector .*) -- npx capability-graph mcp --config capability-graph\.json \(see "Connecting a client" in docs\/tools-and-mcp\.md\)$/.exec(shown.lines[0]);
    assert.ok(inspector, shown.lines[0]);
    assert.ok(docs.includes(`${inspector[1]} -- npx capability-graph mcp --config capability-graph.json`), inspector[1]);
    // --json on a terminal, or stderr not a terminal: nothing on stderr but a failure's envelope.
    assert.deepEqual(onTerminal(p, 'mcp', '--json').lines, []);
    const piped = spawnSync(path.join(p.dir, 'node_modules', '.bin', 'capability-graph'), ['mcp'], { cwd: p.dir, encoding: 'utf8', input: '' });
    assert.deepEqual([piped.status, piped.stdout, piped.stderr], [0, '', '']);
  } finally {
    p.cleanup();
  }
});

test('on a terminal, a read that finds only collections names their members and --knowledge', { skip: noScript }, () => {
  const p = project();
  try {
    const r = onTerminal(p, 'read', 'seed.http::route');
    assert.equal(r.code, 0);
    assert.equal(r.lines.length, 1, r.lines.join('\n'));
    assert.match(r.lines[0], /^capability-graph: .*ROUTING.*D-01, D-02.*--knowledge D-01/);
    assert.deepEqual(onTerminal(p, 'read', 'seed.http::route', '--json').lines.map((l) => JSON.parse(l).knowledgeState), ['filtered_empty']);
  } finally {
    p.cleanup();
  }
});

/** A provider in the legacy layout (route definitions in defs/http) and its config. */
function legacyProvider(p, name) {
  const legacy = path.join(p.dir, name);
  cpSync(seedRoot, legacy, { recursive: true });
  mkdirSync(path.join(legacy, 'defs', 'http'), { recursive: true });
  for (const f of readdirSync(path.join(legacy, 'capabilities'))) {
    const target = f.startsWith('route') ? path.join('defs', 'http', f) : f;
    renameSync(path.join(legacy, 'capabilities', f), path.join(legacy, target.replace(/\.json$/, '.capability.json')));
  }
  rmSync(path.join(legacy, 'capabilities'), { recursive: true });
  return legacy;
}

test('migrate blocked by a file where it needs a folder moves nothing and says what is in the way', () => {
  const p = project();
  try {
    const legacy = legacyProvider(p, 'blocked');
    mkdirSync(path.join(legacy, 'capabilities'));
    writeFileSync(path.join(legacy, 'capabilities', 'defs'), 'a file where a folder is needed');
    const before = tree(legacy);
    const r = p.run('migrate', 'blocked', '--json');
    assert.equal(r.code, 2, r.stdout + r.stderr);
    assert.equal(r.stderr, '');
    const report = r.json();
    assert.equal(report.status, 'conflict');
    assert.match(report.checks.find((c) => c.status === 'fail').message, /capabilities\/defs/);
    assert.ok(!r.stdout.includes(p.dir), 'no absolute path');
    assert.deepEqual(tree(legacy), before, 'nothing moved');
    // A symbolic link in the way is in the way too.
    rmSync(path.join(legacy, 'capabilities', 'defs'));
    mkdirSync(path.join(p.dir, 'elsewhere'));
    symlinkSync(path.join(p.dir, 'elsewhere'), path.join(legacy, 'capabilities', 'defs'));
    assert.equal(p.run('migrate', 'blocked', '--json').json().status, 'conflict');
    assert.deepEqual(readdirSync(path.join(p.dir, 'elsewhere')), []);
  } finally {
    p.cleanup();
  }
});

test('migrate restores the tree exactly when the moved tree does not load', () => {
  const p = project();
  try {
    const legacy = legacyProvider(p, 'restored');
    mkdirSync(path.join(legacy, 'capabilities'));
    writeFileSync(path.join(legacy, 'capabilities', 'notes.json'), '{ not a definition');
    const before = tree(legacy);
    const r = p.run('migrate', 'restored', '--json');
    assert.equal(r.code, 1);
    assert.equal(r.json().status, 'failed');
    assert.deepEqual(tree(legacy), before, 'every file back, no folder left behind');
  } finally {
    p.cleanup();
  }
});

// Root writes into a read-only folder; as root the command runs as `nobody` (util-linux setpriv).
const asRoot = process.getuid?.() === 0;
// setpriv is there, and `nobody` can reach the package (a checkout under /root cannot).
const asNobody = (...command) => ['setpriv', ['--reuid=nobody', '--regid=nogroup', '--clear-groups', ...command]];
const setpriv = asRoot && spawnSync(...asNobody('test', '-r', path.join(repoRoot, 'js', 'cli', 'main.cjs'))).status === 0;

test('migrate that fails while moving restores the tree and names a catalog code', { skip: asRoot && !setpriv && 'root may write into a read-only folder, and nobody cannot run the package here (setpriv, permissions)' }, () => {
  const p = project();
  try {
    const legacy = legacyProvider(p, 'locked');
    // The last definitions sit in a folder that cannot be changed: their moves fail.
    mkdirSync(path.join(legacy, 'zz'));
    renameSync(path.join(legacy, 'schema-request.capability.json'), path.join(legacy, 'zz', 'schema-request.capability.json'));
    if (asRoot) {
      // Everything the unprivileged run needs to read and change is opened to it.
      spawnSync('chmod', ['-R', 'a+rwX', p.dir]);
      p.run = (...args) => {
        const bin = path.join(p.dir, 'node_modules', '.bin', 'capability-graph');
        const r = spawnSync(...asNobody(process.execPath, bin, ...args), { cwd: p.dir, encoding: 'utf8' });
        return { code: r.status, stdout: r.stdout, stderr: r.stderr, json: () => JSON.parse(r.stdout) };
      };
    }
    chmodSync(path.join(legacy, 'zz'), 0o555);
    const before = tree(legacy);
    try {
      const r = p.run('migrate', 'locked', '--json');
      assert.equal(r.code, 1, r.stdout + r.stderr);
      assert.equal(r.json().status, 'failed');
      assert.doesNotMatch(r.stdout, /CG_INTERNAL/);
      assert.match(r.stdout, /CG_[A-Z_]+/);
      assert.deepEqual(tree(legacy), before);
    } finally {
      chmodSync(path.join(legacy, 'zz'), 0o755);
    }
  } finally {
    p.cleanup();
  }
});

test('init checks everything before it writes anything', () => {
  const p = project();
  try {
    rmSync(path.join(p.dir, 'capability-graph.json'));
    const nothing = () => assert.deepEqual(readdirSync(p.dir).sort(), ['node_modules', 'seed'].concat(existsSync(path.join(p.dir, 'capability-graph.json')) ? ['capability-graph.json'] : []).sort());
    // The config path is a folder: nothing is written, with or without --force.
    mkdirSync(path.join(p.dir, 'capability-graph.json'));
    for (const force of [[], ['--force']]) {
      const r = p.run('init', 'mine', '--json', ...force);
      assert.equal(r.code, 2, r.stdout + r.stderr);
      assert.equal(r.json().status, 'conflict');
      assert.match(r.json().checks[0].message, /capability-graph\.json/);
      assert.ok(!existsSync(path.join(p.dir, 'mine')), 'no provider file written');
    }
    rmSync(path.join(p.dir, 'capability-graph.json'), { recursive: true });
    // A folder name that gives no provider ID, and a provider ID that is not one.
    for (const args of [['init', '2024'], ['init', 'mine', '--provider-id', 'Bad ID'], ['init', 'mine', '--provider-id', 'UPPER']]) {
      const e = envelope(p.run(...args));
      assert.deepEqual([e.code, e.phase, e.details?.field], ['CG_INPUT_INVALID', 'config', '--provider-id'], args.join(' '));
      nothing();
    }
    // A file where the provider folder should be.
    writeFileSync(path.join(p.dir, 'afile'), 'x');
    const blocked = p.run('init', 'afile', '--json', '--force');
    assert.equal(blocked.code, 2);
    assert.equal(readFileSync(path.join(p.dir, 'afile'), 'utf8'), 'x');
    assert.ok(!existsSync(path.join(p.dir, 'capability-graph.json')));
    rmSync(path.join(p.dir, 'afile'));
    // Written through temporary files renamed into place: none is left.
    const done = p.run('init', 'fresh', '--json');
    assert.equal(done.code, 0, done.stdout + done.stderr);
    assert.deepEqual(tree(path.join(p.dir, 'fresh')).map((l) => l.split(' ')[0]), ['PROVIDER.md', 'capabilities/', 'capabilities/example.json', 'knowledge/', 'knowledge/example.md', 'provider.json']);
    assert.deepEqual(readdirSync(p.dir).sort(), ['capability-graph.json', 'fresh', 'node_modules', 'seed']);
    assert.equal(JSON.parse(readFileSync(path.join(p.dir, 'fresh', 'provider.json'), 'utf8')).providerId, 'fresh');
    // A link on the way to DIR is the host's choice, not something in the way.
    mkdirSync(path.join(p.dir, 'real'));
    symlinkSync('real', path.join(p.dir, 'linked'));
    const linked = p.run('init', 'linked/prov', '--provider-id', 'acme.linked', '--force', '--json');
    assert.equal(linked.code, 0, linked.stdout + linked.stderr);
    assert.ok(existsSync(path.join(p.dir, 'real', 'prov', 'provider.json')));
  } finally {
    p.cleanup();
  }
});

test('on a terminal, init ends with the commands that use what it wrote; a pipe gets the report alone', { skip: noScript }, () => {
  const p = project();
  try {
    rmSync(path.join(p.dir, 'capability-graph.json'));
    assert.ok(!onTerminal(p, 'init', 'mine', '--dry-run').lines.includes('next:'), 'nothing to use yet after a dry run');
    const { code, lines } = onTerminal(p, 'init', 'mine');
    assert.equal(code, 0, lines.join('\n'));
    const next = lines.slice(lines.indexOf('next:') + 1);
    assert.ok(next.length > 0, lines.join('\n'));
    // Each command it names runs in this project as it stands (mcp ends with its input).
    const commands = next.filter((l) => l.startsWith('  npx capability-graph ')).map((l) => l.slice('  npx capability-graph '.length).split(/ {2,}/)[0]);
    assert.deepEqual(commands.map((c) => c.split(' ')[0]), ['catalog', 'match', 'doctor', 'mcp']);
    for (const command of commands) {
      const [name, ...rest] = command.split(' ');
      const r = p.run(name, ...(rest.length ? [JSON.parse(rest.join(' '))] : []));
      assert.equal(r.code, 0, `${command}: ${r.stderr}`);
      if (name === 'match') assert.equal(r.json().matches[0].qualifiedId, 'mine::example');
    }
    // The client's entry is JSON that starts this project's server.
    const entry = JSON.parse(next.find((l) => l.trim().startsWith('{ "mcpServers"')));
    const { command, args } = entry.mcpServers.capabilities;
    assert.deepEqual([command, args[0]], ['npx', 'capability-graph']);
    assert.equal(p.run(...args.slice(1)).code, 0);
    assert.match(next.join('\n'), /"Connecting a client" in the\n? *package's docs\/tools-and-mcp\.md/);
    // Not on a terminal (or with --json): the JSON report alone.
    assert.doesNotMatch(p.run('init', 'mine', '--force').stdout, /next:/);
  } finally {
    p.cleanup();
  }
});
