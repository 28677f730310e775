'use strict';
// The capability-graph command line: argument handling, config loading, output. Every
// question goes to the graph's verbs; a failure is the stderr envelope {"ok":false,"error":…}
// with nothing on stdout and exit 1 (on a terminal without --json, one line for a person after
// it). A batch whose every item failed is a failure (its first item's error); a partial batch is
// an answer. A closed stdout ends the command quietly.

const fs = require('node:fs');
const path = require('node:path');
const { GraphError, catalog, inputInvalid } = require('../errors.cjs');
const { CapabilityGraph, lexicalExecutor, semanticExecutor, internal } = require('../graph/graph.cjs');
const { native, unwrap, call } = require('../engine/native.cjs');

const VERSION = require('../../package.json').version;
const CONFIG_MAX_BYTES = 1024 * 1024;
const CONFIG_MAX = `${CONFIG_MAX_BYTES / 1024 / 1024} MiB`;
const DEFAULT_CONFIG = 'capability-graph.json';

// --- arguments ------------------------------------------------------------------------------

/** Flags: name → { value: true when it takes one, multi: true when repeatable }. */
const COMMON = { config: { value: true }, json: {}, scope: { value: true }, revision: { value: true }, help: {}, version: {} };
const COMMANDS = {
  providers: { args: [0, 0], flags: {} },
  catalog: { args: [0, 0], flags: { prefix: { value: true }, parent: { value: true }, limit: { value: true, number: true }, cursor: { value: true } } },
  show: { args: [1, Infinity], flags: {} },
  neighbors: { args: [1, 1], flags: { kinds: { value: true }, limit: { value: true, number: true } } },
  resolve: { args: [1, Infinity], flags: {} },
  select: { args: [1, Infinity], flags: {} },
  read: { args: [1, 1], flags: { knowledge: { value: true, multi: true }, role: { value: true, multi: true }, locale: { value: true, multi: true }, cursor: { value: true }, 'max-bytes': { value: true, number: true } } },
  spec: { args: [1, 1], flags: { knowledge: { value: true, multi: true }, cursor: { value: true }, 'max-bytes': { value: true, number: true } } },
  match: { args: [1, 1], flags: { context: { value: true, multi: true }, limit: { value: true, number: true } } },
  export: { args: [0, 0], flags: { provider: { value: true }, format: { value: true } } },
  mcp: { args: [0, 0], flags: { prefix: { value: true }, 'document-bodies': {}, http: { value: true }, 'allowed-host': { value: true, multi: true }, watch: {} } },
  doctor: { args: [0, 0], flags: {} },
  init: { args: [1, 1], flags: { 'provider-id': { value: true }, 'dry-run': {}, force: {} } },
  migrate: { args: [1, 1], flags: { 'dry-run': {} } },
  embed: { args: [1, 1], flags: {} },
};

const HELP = `capability-graph ${VERSION}

Usage: capability-graph <command> [arguments] [flags]

Graph commands
  providers                                   list providers
  catalog [--prefix P] [--parent ID] [--limit N] [--cursor C]
  show ID…                                    capability details
  neighbors ID [--kinds K,K] [--limit N]      relation groups
  resolve ID…                                 capabilities and what they require
  select ID…                                  resolve a selection
  read ID [--knowledge K]… [--role R]… [--locale L]…   read documents
  read ID --knowledge K [--max-bytes N] [--cursor C]   read one document by pages
  spec PROVIDER [--knowledge K]… [--max-bytes N] [--cursor C]   specification documents
  match INTENT [--context key=value]… [--limit N]
  export [--provider P] --format mermaid|dot|json
  mcp [--prefix P] [--document-bodies] [--watch]   serve MCP on stdio
  mcp --http [HOST:]PORT [--allowed-host H:P]…   serve MCP over Streamable HTTP at /mcp

Maintenance
  help [COMMAND]                              this help, or one command's
  doctor                                      check config, budgets, providers, documents, executor
  init DIR [--provider-id ID] [--dry-run] [--force]
  migrate DIR [--dry-run]                     legacy *.capability.json → directory layout
  embed DIR                                   write DIR/vectors/<model-id>.bin for the semantic executor

Common flags
  --config FILE   JSON config (default ./capability-graph.json, at most ${CONFIG_MAX})
  --json          JSON output (the default when stdout is not a terminal)
  --scope P1,P2   narrow the provider scope
  --revision REV  serve from this static revision
  --help, --version
`;

function usage(field) {
  return inputInvalid(field, { phase: 'config' });
}

/** `table[name]` when `name` is one of its own keys (never an Object.prototype member). */
const own = (table, name) => (table !== undefined && Object.hasOwn(table, name) ? table[name] : undefined);

// What `help COMMAND` adds to a command's usage lines. The exit rules are those docs/cli.md
// states: a graph command answers 0 or fails 1; a maintenance command exits by its report's
// status.
const GRAPH_EXITS = [
  ['0', 'an answer: JSON with --json or when stdout is not a terminal, text otherwise'],
  ['1', 'a failure: stdout stays empty, stderr holds {"ok":false,"error":{…}}'],
  ['0', 'also when stdout is closed by its reader: the command ends quietly'],
];
const BATCH_EXITS = [
  ['0', 'an answer, a partial batch included: each item that failed keeps its error in its slot'],
  ['1', 'a failure, and a batch whose every item failed (its first item\'s error is the envelope)'],
  GRAPH_EXITS[2],
];
const WRITE_EXITS = (what) => [
  ['0', 'ok: done'],
  ['1', `failed: ${what}; or the command line is wrong`],
  ['2', 'conflict: a target exists or is in the way; nothing written'],
  ['3', 'planned: --dry-run found work (listed as plan lines)'],
];
const PAGE_FLAGS = {
  'max-bytes': ['N', 'read one document by pages of at most N bytes (with one --knowledge)'],
  cursor: ['C', 'continue a paged read with the nextCursor of the page before'],
};
const DETAILS = {
  providers: {
    about: 'Lists every provider in scope with its name, version, static revision and specification summary.',
    example: 'capability-graph providers --json',
    exits: GRAPH_EXITS,
  },
  catalog: {
    about: 'Lists catalog rows, providers then capabilities in ID order, one page at a time; the\npage\'s nextCursor continues it.',
    flags: {
      prefix: ['P', 'only capabilities whose ID starts with P'],
      parent: ['ID', 'only the direct children of capability ID'],
      limit: ['N', 'rows per page (default and maximum 200)'],
      cursor: ['C', 'the next page: the nextCursor of the page before, same flags'],
    },
    example: 'capability-graph catalog --prefix route --limit 20',
    exits: GRAPH_EXITS,
  },
  show: {
    about: 'Shows each capability\'s details: its definition, a summary of its relations and its\ndocuments. IDs are qualified (provider::capability); one slot per ID.',
    example: 'capability-graph show seed.http::route.validation seed.http::route',
    exits: BATCH_EXITS,
  },
  neighbors: {
    about: 'Lists a capability\'s relation groups: parents, children, specializes, specializedBy,\nrelated, relatedBy, requires, requiredBy.',
    flags: {
      kinds: ['K,K', 'only these groups (default: all eight)'],
      limit: ['N', 'items per group (default 50, at most 100)'],
    },
    example: 'capability-graph neighbors seed.http::route --kinds children,requires',
    exits: GRAPH_EXITS,
  },
  resolve: {
    about: 'Resolves capabilities and everything they require (the closure over requires), in\ndependency order, with why each one was added.',
    example: 'capability-graph resolve seed.http::route.validation',
    exits: GRAPH_EXITS,
  },
  select: {
    about: 'Resolves a selection: the capabilities chosen plus the ones they require, ready to hand\nto an agent.',
    example: 'capability-graph select seed.http::route.validation',
    exits: GRAPH_EXITS,
  },
  read: {
    about: 'Reads a capability\'s documents (its top-level ones unless --knowledge names others), or\none document by pages with --max-bytes or --cursor.',
    flags: {
      knowledge: ['K', 'only document K (repeatable); a collection\'s members are read only when named'],
      role: ['R', 'only documents of role R (repeatable)'],
      locale: ['L', 'only documents in locale L (repeatable)'],
      ...PAGE_FLAGS,
    },
    example: 'capability-graph read seed.http::route.validation --knowledge D-02 --max-bytes 4096',
    exits: BATCH_EXITS,
  },
  spec: {
    about: 'Reads a provider\'s specification documents, or one of them by pages with --max-bytes or\n--cursor.',
    flags: { knowledge: ['K', 'only document K (repeatable)'], ...PAGE_FLAGS },
    example: 'capability-graph spec seed.http --knowledge SPEC-01 --max-bytes 4096',
    exits: BATCH_EXITS,
  },
  match: {
    about: 'Asks the configured executor which capabilities fit INTENT, then resolves what they\nrequire. Without an executor in the config it fails with CG_MODEL_NOT_CONFIGURED.',
    flags: {
      context: ['key=value', 'a fact for the executor (repeatable); a JSON scalar stays one (n=7, x=null)'],
      limit: ['N', 'most capabilities to select (default 5, at most 20)'],
    },
    example: 'capability-graph match "validate the request body" --context tenant=acme --limit 3',
    exits: GRAPH_EXITS,
  },
  export: {
    about: 'Prints the graph for people: capabilities as nodes, parents, specializes, related and\nrequires as differently styled edges.',
    flags: {
      provider: ['P', 'only provider P'],
      format: ['F', 'mermaid, dot or json (required)'],
    },
    example: 'capability-graph export --provider seed.http --format mermaid',
    exits: GRAPH_EXITS,
  },
  mcp: {
    about: 'Serves the graph\'s tools over MCP: on stdio (stdout carries only the protocol) until its\ninput ends and every request read is answered, or over Streamable HTTP at /mcp with --http.\nThe config\'s "mcp" block gives the server\'s options.',
    flags: {
      prefix: ['P', 'prefix of every tool name (default: the config\'s mcp.prefix)'],
      'document-bodies': ['', 'also the tools that return document bodies'],
      http: ['[HOST:]PORT', 'serve Streamable HTTP instead of stdio (loopback unless HOST is given)'],
      'allowed-host': ['H:P', 'a Host header to accept instead of the loopback names (repeatable; with --http)'],
      watch: ['', 'reload a file provider when its files change (each file authority without its own\n     "watch"); stderr says what each reload serves or why it failed'],
    },
    example: 'capability-graph mcp --document-bodies\n  capability-graph mcp --http 127.0.0.1:8080',
    exits: [
      ['0', 'stdio: the input ended (or the client closed its end) and every request read was\n     answered; HTTP: stopped by SIGINT or SIGTERM'],
      ['1', 'the server could not start: stderr holds {"ok":false,"error":{…}}'],
    ],
  },
  doctor: {
    about: 'Checks the config, the budgets, every provider (listing each definition problem), its\nlocal documents and the executor, and reports each check.',
    example: 'capability-graph doctor --config ./capability-graph.json',
    exits: [
      ['0', 'ok: every check passes'],
      ['1', 'failed: a check fails (it says what is wrong), or the command line is wrong'],
    ],
  },
  init: {
    about: 'Creates a provider in DIR (provider.json, capabilities/, knowledge/, PROVIDER.md) and a\n./capability-graph.json using the lexical executor. Everything is checked before anything\nis written; a failure part way undoes every step.',
    flags: {
      'provider-id': ['ID', 'the provider ID (default: from the folder\'s name)'],
      'dry-run': ['', 'say what would be written, write nothing'],
      force: ['', 'overwrite files that exist (never a folder in the way)'],
    },
    example: 'capability-graph init my-provider --dry-run',
    exits: WRITE_EXITS('a write failed and every step was undone'),
  },
  migrate: {
    about: 'Moves a legacy provider\'s *.capability.json files to capabilities/…/*.json, proves the\nstatic revision unchanged and sets definitionLayout "directory" in the config given with\n--config. Anything that fails puts the tree back exactly as it was.',
    flags: { 'dry-run': ['', 'say what would move, move nothing'] },
    example: 'capability-graph migrate ./providers/acme --config ./capability-graph.json --dry-run',
    exits: WRITE_EXITS('a move failed, the revision changed or the config could not be written; the tree is as it was'),
  },
  embed: {
    about: 'Embeds the capabilities of the provider folder DIR with the semantic executor of the\nconfig given with --config (its first-party encoder without one) and writes their vectors\nto DIR/vectors/<model-id>.bin; a graph opening DIR then embeds only what changed since.',
    example: 'capability-graph embed ./providers/acme --config ./capability-graph.json',
    exits: [
      ['0', 'ok: the file is written'],
      ['1', 'failed: no vectors (the model is unavailable, its deadline passed) or the file could not be written'],
    ],
  },
  help: {
    about: 'Prints the overview of every command, or one command\'s help: what it does, its flags,\nan example and its exit codes. `COMMAND --help` prints the same.',
    example: 'capability-graph help catalog',
    exits: [
      ['0', 'the help'],
      ['1', 'an unknown command: stderr holds {"ok":false,"error":{…}}'],
    ],
  },
};

/** Aligned rows of `  left  right`. */
const rows = (pairs) => {
  const width = Math.max(...pairs.map(([left]) => left.length));
  return pairs.map(([left, right]) => `  ${left.padEnd(width)}  ${right}`);
};

/** The help of one command: its lines of the overview (one per form), what it does, its flags,
 *  the common flags, an example and its exit codes. */
function commandHelp(command) {
  const lines = HELP.split('\n');
  const forms = lines.filter((l) => l.startsWith(`  ${command} `) || l === `  ${command}`).map((l) => l.trim());
  const common = lines.slice(lines.indexOf('Common flags'), -1);
  const heads = forms.map((form, i) => `${i === 0 ? 'Usage: ' : '       '}capability-graph ${form}`);
  const { about, flags, example, exits } = DETAILS[command];
  const own = flags
    ? ['Flags', ...rows(Object.entries(flags).map(([name, [arg, text]]) => [`--${name}${arg ? ` ${arg}` : ''}`, text])), '']
    : [];
  const examples = example.split('\n').length > 1 ? 'Examples' : 'Example';
  return [...heads, '', about, '', ...own, ...common, '', examples, `  ${example}`, '', 'Exit codes', ...rows(exits), ''].join('\n');
}

/** The nearest of `names` to what was typed, for the human line (never in the envelope: the
 *  catalog's details name the field alone). */
const SUGGESTION = Symbol('suggestion');

/** Edits (insert, delete, substitute, swap two neighbours) between `a` and `b`. */
function distance(a, b) {
  const d = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) d[0][j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[a.length][b.length];
}

/** A close name (a third of the typed one may be wrong) or the one name it begins; else none. */
function nearest(typed, names) {
  const word = typed.toLowerCase();
  const starting = names.filter((n) => word.length >= 2 && n.startsWith(word));
  if (starting.length === 1) return starting[0];
  let best;
  let bestDistance = Math.max(1, Math.floor(word.length / 3)) + 1;
  for (const name of names) {
    const d = distance(word, name);
    if (d < bestDistance) [best, bestDistance] = [name, d];
  }
  return best;
}

/** A usage error for something unknown, carrying the nearest known name for a person. */
function unknown(field, typed, names, prefix = '') {
  const error = usage(field);
  const near = nearest(typed, names);
  if (near !== undefined) Object.defineProperty(error, SUGGESTION, { value: `${prefix}${near}` });
  return error;
}

const COMMAND_NAMES = [...Object.keys(COMMANDS), 'help'];

/** Parses argv into { command, args, flags }; any unknown command or flag is a usage error
 *  (`seen.command` says which command it was for). */
function parseArgs(argv, seen = {}) {
  // Keys are flag names from the command line: no prototype to collide with.
  const flags = Object.create(null);
  const positional = [];
  let command;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--') {
      positional.push(...argv.slice(i + 1));
      break;
    }
    if (!arg.startsWith('--')) {
      if (command === undefined) command = seen.command = arg;
      else positional.push(arg);
      continue;
    }
    const [name, inline] = arg.slice(2).split(/=(.*)/s, 2);
    const flag = `--${name}`;
    const spec = own(COMMON, name) ?? own(own(COMMANDS, command)?.flags, name);
    if (!spec) throw unknown(flag, name, [...Object.keys(COMMON), ...Object.keys(own(COMMANDS, command)?.flags ?? {})], '--');
    let value = true;
    if (spec.value) {
      value = inline ?? argv[++i];
      // A flag that takes a value never takes an empty one (it would drop what it narrows).
      if (value === undefined || value === '') throw usage(flag);
      if (spec.number) {
        if (!/^\d+$/.test(value)) throw usage(flag);
        value = Number(value);
      }
    } else if (inline !== undefined) throw usage(flag);
    if (spec.multi) (flags[name] ??= []).push(value);
    else if (name in flags) throw usage(flag);
    else flags[name] = value;
  }
  return { command, args: positional, flags };
}

// --- config ---------------------------------------------------------------------------------

/** What went wrong with the config file, for the human line on a terminal (never in the envelope). */
const CONFIG_PROBLEM = Symbol('configProblem');

function unreadableConfig(file, problem) {
  const entry = catalog.codes.find((c) => c.code === 'CG_CONFIG_INVALID');
  const error = new GraphError({ code: 'CG_CONFIG_INVALID', phase: 'config', message: entry.messages[1] });
  Object.defineProperty(error, CONFIG_PROBLEM, { value: { file, problem } });
  return error;
}

/** Reads the JSON config file; a missing, oversized or non-JSON file fails the command. */
function readConfig(file) {
  let text;
  try {
    text = readBounded(file, CONFIG_MAX_BYTES);
    if (text === undefined) throw unreadableConfig(file, 'unreadable');
  } catch (error) {
    if (error instanceof GraphError) throw error;
    throw unreadableConfig(file, error?.code === 'ENOENT' ? 'missing' : 'unreadable');
  }
  // A BOM is accepted, as in definition files.
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  let value;
  try {
    value = JSON.parse(text);
  } catch {
    throw unreadableConfig(file, 'invalid');
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw unreadableConfig(file, 'invalid');
  return value;
}

/**
 * The text of the regular file `file` if it holds at most `max` bytes, else undefined. The bytes
 * are counted as they are read: a file's reported size can lie (`/proc` files say 0 and never
 * end). Opened without blocking, so a FIFO is refused instead of waited on.
 */
function readBounded(file, max) {
  const fd = fs.openSync(file, fs.constants.O_RDONLY | (fs.constants.O_NONBLOCK ?? 0));
  try {
    if (!fs.fstatSync(fd).isFile()) return undefined;
    const chunks = [];
    const buffer = Buffer.allocUnsafe(64 * 1024);
    for (let total = 0; ; ) {
      const n = fs.readSync(fd, buffer, 0, buffer.length, null);
      if (n === 0) return Buffer.concat(chunks, total).toString('utf8');
      total += n;
      if (total > max) return undefined;
      chunks.push(Buffer.from(buffer.subarray(0, n)));
    }
  } finally {
    fs.closeSync(fd);
  }
}

/** The line a person reads after the envelope: which file (as given) and what is wrong with it. */
function configHint({ file, problem }) {
  const name = JSON.stringify(file);
  if (problem === 'missing') {
    return `capability-graph: config file ${name} does not exist; create one with \`capability-graph init DIR\` or pass --config FILE\n`;
  }
  if (problem === 'invalid') return `capability-graph: config file ${name} is not valid JSON holding an object\n`;
  return `capability-graph: config file ${name} cannot be read (not a readable regular file of at most ${CONFIG_MAX})\n`;
}

/** The config as `CapabilityGraph.open` takes it: roots relative to the config file, the
 *  executor built from its kind, the `mcp` block set apart. */
function openConfig(raw, configFile, { watch = false } = {}) {
  const base = path.dirname(path.resolve(configFile));
  const rel = (p) => (typeof p === 'string' && p !== '' ? path.resolve(base, p) : p);
  const { mcp, executor, ...config } = raw;
  if (Array.isArray(config.providers)) {
    config.providers = config.providers.map((p) => {
      if (p === null || typeof p !== 'object') return p;
      const copy = { ...p };
      if (copy.authority && typeof copy.authority === 'object' && copy.authority.kind === 'file') {
        copy.authority = { ...copy.authority, rootDir: rel(copy.authority.rootDir) };
        if (watch && !('watch' in copy.authority)) copy.authority.watch = true;
      }
      if ('documentRoot' in copy) copy.documentRoot = rel(copy.documentRoot);
      if (copy.knowledgeRoots && typeof copy.knowledgeRoots === 'object') {
        copy.knowledgeRoots = Object.fromEntries(
          Object.entries(copy.knowledgeRoots).map(([alias, r]) => [
            alias,
            r && typeof r === 'object' ? { ...r, ...(r.rootDir ? { rootDir: rel(r.rootDir) } : {}), ...(r.resolveFrom ? { resolveFrom: rel(r.resolveFrom) } : {}) } : r,
          ]),
        );
      }
      return copy;
    });
  }
  // A semantic executor's embedder module loads asynchronously: openers await the executor.
  if (executor !== undefined) config.executor = buildExecutor(executor, base);
  return { config, mcp };
}

function buildExecutor(spec, base) {
  const invalid = (expected) => new GraphError({ code: 'CG_CONFIG_INVALID', phase: 'config', details: { path: 'executor', expected } });
  if (spec === null || typeof spec !== 'object') throw invalid('object with kind');
  const { kind, ...options } = spec;
  if (kind === 'lexical') return lexicalExecutor(options);
  if (kind === 'codex') return require('../executors/codex.cjs').codexExecutor(options);
  if (kind === 'semantic') return semanticFromConfig(options, base);
  throw invalid('one of: lexical, codex, semantic');
}

/** `{ kind: 'semantic', minScore?, embedder? }`: `embedder` names a module (relative to the
 *  config) whose default export is the host embedder; without it, the first-party encoder. */
async function semanticFromConfig({ embedder, ...options }, base) {
  if (embedder === undefined) return semanticExecutor(options);
  if (typeof embedder !== 'string' || embedder === '') {
    throw new GraphError({ code: 'CG_CONFIG_INVALID', phase: 'config', details: { path: 'executor.embedder', expected: 'module path' } });
  }
  let loaded;
  try {
    loaded = await import(require('node:url').pathToFileURL(path.resolve(base, embedder)).href);
  } catch {
    throw new GraphError({ code: 'CG_CONFIG_INVALID', phase: 'config', details: { path: 'executor.embedder', expected: 'module path' } });
  }
  return semanticExecutor({ ...options, embedder: loaded.default });
}

// --- output ---------------------------------------------------------------------------------

function table(rows, columns) {
  if (rows.length === 0) return '(none)\n';
  const widths = columns.map((c) => Math.max(c.length, ...rows.map((r) => String(r[c] ?? '').length)));
  const line = (cells) => cells.map((c, i) => String(c ?? '').padEnd(widths[i])).join('  ').trimEnd();
  return [line(columns), line(widths.map((w) => '-'.repeat(w))), ...rows.map((r) => line(columns.map((c) => r[c])))].join('\n') + '\n';
}

/** Readable renderings for a terminal; anything without one prints as indented JSON. */
const HUMAN = {
  providers: (r) => table(r.items.map((p) => ({ provider: p.providerId, name: p.name, version: p.version, revision: p.staticRevision })), ['provider', 'name', 'version', 'revision']),
  catalog: (r) => table(r.items.map((c) => ({ id: c.qualifiedId, name: c.name })), ['id', 'name']) + (r.nextCursor ? `more: --cursor ${r.nextCursor}\n` : ''),
  show: (r) =>
    r.results
      .map((s) => (s.ok ? `${s.value.qualifiedId}\n  ${s.value.name}: ${s.value.description}\n  when to use: ${s.value.whenToUse}\n` : `#${s.inputIndex}: ${s.error.code}\n`))
      .join('\n'),
  neighbors: (r) =>
    Object.entries(r.groups)
      .filter(([, g]) => g.items.length)
      .map(([kind, g]) => `${kind}: ${g.items.map((i) => i.qualifiedId).join(', ')}${g.nextCursor ? ' …' : ''}`)
      .join('\n') + '\n',
  resolve: (r) => r.items.map((i) => `${i.qualifiedId}${i.reason.requested ? '' : `  (required by ${i.reason.requiredBy.join(', ')})`}`).join('\n') + '\n',
  select: (r) => r.resolved.map((i) => `${i.providerId}::${i.capabilityId}`).join('\n') + '\n',
  read: (r) =>
    r.results === undefined
      ? `${r.text}${r.nextCursor ? `\nmore: --cursor ${r.nextCursor}\n` : ''}`
      : r.results.map((s) => (s.ok ? `--- ${s.value.knowledgeId} (${s.value.source})\n${s.value.text}` : `--- #${s.inputIndex}: ${s.error.code}\n`)).join('\n'),
  match: (r) => `${r.status}\n` + r.matches.map((m) => `  ${m.qualifiedId}${m.confidence === undefined ? '' : `  ${m.confidence}`}`).join('\n') + (r.matches.length ? '\n' : ''),
};
HUMAN.spec = HUMAN.read;

// --- commands -------------------------------------------------------------------------------

function pins(flags) {
  return {
    ...(flags.scope ? { requestProviderScope: flags.scope.split(',') } : {}),
    ...(flags.revision ? { requiredStaticRevision: flags.revision } : {}),
  };
}

/** Whether a document command reads one document by pages (`--cursor` or `--max-bytes`). */
const paged = (flags) => flags.cursor !== undefined || flags['max-bytes'] !== undefined;

/** The page query of `read`/`spec`: exactly one `--knowledge`, none of the whole-read filters. */
function page(flags, filters) {
  if (flags.knowledge?.length !== 1) throw usage('--knowledge');
  const other = filters.find((name) => flags[name] !== undefined);
  if (other) throw usage(`--${other}`);
  return {
    knowledgeId: flags.knowledge[0],
    ...pins(flags),
    ...(flags.cursor !== undefined ? { cursor: flags.cursor } : {}),
    ...(flags['max-bytes'] !== undefined ? { maxBytes: flags['max-bytes'] } : {}),
  };
}

/** A context value: a JSON scalar where the text is one (`7`, `true`, `null`, `"x"`), else the
 *  text itself (`007`, `[1]`, `1e400`: not a finite scalar). */
function contextValue(raw) {
  let parsed;
  try {
    parsed = JSON.parse(raw);
  } catch {
    return raw;
  }
  const scalar = parsed === null || typeof parsed === 'string' || typeof parsed === 'boolean' || (typeof parsed === 'number' && Number.isFinite(parsed));
  return scalar ? parsed : raw;
}

function contextOf(pairs = []) {
  // Any 1–64-byte key is a context key, `__proto__` included: an own key, as the SDK passes it.
  const context = Object.create(null);
  for (const pair of pairs) {
    const eq = pair.indexOf('=');
    if (eq <= 0) throw usage('--context');
    context[pair.slice(0, eq)] = contextValue(pair.slice(eq + 1));
  }
  return context;
}

const GRAPH_COMMANDS = {
  providers: (g, a, f) => g.listProviders(pins(f)),
  catalog: (g, a, f) =>
    g.listCatalog({
      ...pins(f),
      ...(f.prefix !== undefined ? { capabilityIdPrefix: f.prefix } : {}),
      ...(f.parent !== undefined ? { parent: f.parent } : {}),
      ...(f.limit !== undefined ? { limit: f.limit } : {}),
      ...(f.cursor !== undefined ? { cursor: f.cursor } : {}),
    }),
  show: (g, a, f) => g.getCapabilities(a, pins(f)),
  neighbors: (g, a, f) =>
    g.getNeighbors(a[0], { ...pins(f), ...(f.kinds ? { kinds: f.kinds.split(',') } : {}), ...(f.limit !== undefined ? { limitPerKind: f.limit } : {}) }),
  resolve: (g, a, f) => g.resolve({ ids: a, ...pins(f) }),
  select: (g, a, f) => g.resolveSelection({ selected: a, ...pins(f) }),
  read: (g, a, f) =>
    paged(f)
      ? g.readDocumentPage({ capability: a[0], ...page(f, ['role', 'locale']) })
      : g.readDocuments({ selected: a, ...pins(f), ...(f.knowledge ? { knowledgeIds: f.knowledge } : {}), ...(f.role ? { roles: f.role } : {}), ...(f.locale ? { locales: f.locale } : {}) }),
  spec: (g, a, f) =>
    paged(f) ? g.readSpecificationPage({ providerId: a[0], ...page(f, []) }) : g.readSpecification({ providerId: a[0], ...pins(f), ...(f.knowledge ? { knowledgeIds: f.knowledge } : {}) }),
  match: (g, a, f) => g.match({ intent: a[0], ...pins(f), ...(f.context ? { context: contextOf(f.context) } : {}), ...(f.limit !== undefined ? { limit: f.limit } : {}) }),
};

const quote = (s) => JSON.stringify(s);

/** A provider graph for people: Mermaid or DOT, nodes and the four declared relations. */
function renderExport(graph, format) {
  const style = { parents: 'solid', specializes: 'dashed', related: 'dotted', requires: 'bold' };
  if (format === 'dot') {
    const lines = ['digraph capabilities {', '  rankdir=LR;', '  node [shape=box];'];
    for (const n of graph.nodes) lines.push(`  ${quote(n.id)} [label=${quote(`${n.name}\n${n.id}`)}];`);
    for (const e of graph.edges) lines.push(`  ${quote(e.from)} -> ${quote(e.to)} [label=${quote(e.kind)}, style=${style[e.kind]}];`);
    lines.push('}');
    return lines.join('\n') + '\n';
  }
  const arrow = { parents: '-->', specializes: '-.->', related: '-.-', requires: '==>' };
  const ids = new Map(graph.nodes.map((n, i) => [n.id, `n${i}`]));
  const label = (s) => s.replace(/["\n]/g, ' ');
  const lines = ['flowchart LR'];
  for (const n of graph.nodes) lines.push(`  ${ids.get(n.id)}["${label(n.name)}<br/>${label(n.id)}"]`);
  for (const e of graph.edges) lines.push(`  ${ids.get(e.from)} ${arrow[e.kind]}|${e.kind}| ${ids.get(e.to)}`);
  return lines.join('\n') + '\n';
}

async function openGraph(flags, stderr) {
  const file = flags.config ?? DEFAULT_CONFIG;
  const { config, mcp } = openConfig(readConfig(file), file, { watch: flags.watch === true });
  config.executor = await config.executor;
  // Progress only for a person watching: never with --json, never into a pipe.
  const progress = stderr.isTTY && !flags.json;
  if (progress) stderr.write('loading providers…');
  try {
    return { graph: await CapabilityGraph.open(config), mcp };
  } finally {
    if (progress) stderr.write('\r\x1b[K');
  }
}

// --- maintenance ----------------------------------------------------------------------------

const EXIT = { ok: 0, failed: 1, conflict: 2, planned: 3 };

function report(out, flags, result) {
  if (flags.json || !out.isTTY) out.write(JSON.stringify(result) + '\n');
  else {
    out.write(`${result.status}\n`);
    for (const c of result.checks) {
      out.write(`  ${c.status.padEnd(4)} ${c.id}: ${c.message}\n`);
      for (const p of c.problems ?? []) {
        const at = [p.capabilityId, p.field].filter(Boolean).join(' ');
        out.write(`         ${p.file}${at ? ` ${at}` : ''}: ${p.code} ${p.reason}\n`);
      }
      if (c.omitted) out.write(`         … and ${c.omitted} more\n`);
    }
    for (const p of result.planned ?? []) out.write(`  plan ${p}\n`);
    for (const w of result.written ?? []) out.write(`  wrote ${w}\n`);
  }
  return EXIT[result.status];
}

/** An error as one line; `index` names the provider a one-provider check opened (its path says providers[0]). */
function describe(error, index) {
  if (!(error instanceof GraphError)) return 'CG_INTERNAL';
  let details = error.details;
  if (index !== undefined && typeof details?.path === 'string') {
    details = { ...details, path: details.path.replace(/^providers\[0\]/, `providers[${index}]`) };
  }
  return `${error.code}${details ? ` ${JSON.stringify(details)}` : ''}`;
}

async function doctor(flags) {
  const file = flags.config ?? DEFAULT_CONFIG;
  const raw = readConfig(file);
  const { config } = openConfig(raw, file);
  // An embedder module that does not load is the executor check's failure, reported below.
  config.executor = await Promise.resolve(config.executor).catch(() => undefined);
  const checks = [];
  const warnings = [];
  const check = (id, status, message) => checks.push({ id, status, message });
  const providers = Array.isArray(config.providers) ? config.providers : [];
  let budgets = config.budgets;
  try {
    const shell = await CapabilityGraph.open({ ...config, providers: [], hostAllowedProviders: undefined, integrationEnabledProviders: undefined });
    await shell.close();
    check('config', 'pass', 'configuration is valid');
    check('budgets', 'pass', 'budgets are valid');
  } catch (error) {
    const inBudgets = String(error?.details?.path ?? '').startsWith('budgets');
    check('config', inBudgets ? 'pass' : 'fail', inBudgets ? 'configuration is valid' : describe(error));
    check('budgets', inBudgets ? 'fail' : 'pass', inBudgets ? describe(error) : 'budgets are valid');
    budgets = undefined; // providers are still checked, with the default budgets
  }
  for (const [i, source] of providers.entries()) {
    const id = source?.providerId ?? source?.definition?.providerId ?? `#${i}`;
    let graph;
    try {
      graph = await CapabilityGraph.open({ providers: [source], budgets });
      check(`provider:${id}`, 'pass', `loaded at ${(await graph.listProviders()).items[0].staticRevision}`);
      const documents = (await internal.query(graph, 'checkDocuments', {})).providers[0];
      check(
        `documents:${id}`,
        documents.failures.length ? 'fail' : 'pass',
        documents.failures.length
          ? documents.failures.map((f) => `${f.capabilityId ? `${f.capabilityId} ` : ''}${f.knowledgeId}: ${f.code}`).join('; ')
          : `${documents.documents} local documents readable`,
      );
    } catch (error) {
      check(`provider:${id}`, 'fail', describe(error, i));
      // The whole list, as a compiler gives it; an inline definition's problems are in the config.
      const listed = await internal.diagnose({ providers: [source], budgets }).catch(() => undefined);
      const found = listed?.providers[0];
      if (found?.problems.length) {
        const where = path.basename(file);
        Object.assign(checks.at(-1), {
          problems: found.problems.map((p) => ({ file: p.file ?? where, ...p })),
          omitted: found.omitted,
        });
      }
    } finally {
      await graph?.close();
    }
  }
  if (raw.executor === undefined) {
    check('executor', 'warn', 'no executor: match answers CG_MODEL_NOT_CONFIGURED');
  } else {
    try {
      await buildExecutor(raw.executor, path.dirname(path.resolve(file)));
      check('executor', 'pass', `${raw.executor.kind} executor configured`);
    } catch (error) {
      check('executor', 'fail', describe(error));
    }
  }
  const status = checks.some((c) => c.status === 'fail') ? 'failed' : 'ok';
  return { status, checks, warnings };
}

const PROVIDER_TEMPLATE = (providerId) => ({
  'provider.json': {
    providerId,
    name: providerId,
    version: '0.1.0',
    specification: {
      specificationId: `${providerId}.conventions`,
      version: '1',
      documents: [{ kind: 'document', knowledgeId: 'SPEC-01', role: 'specification', title: 'Conventions', locator: { type: 'relative-file', path: 'PROVIDER.md' } }],
    },
  },
  'capabilities/example.json': {
    capabilityId: 'example',
    name: 'Example capability',
    description: 'Replace this with something your software can do.',
    whenToUse: 'Describe when an agent should choose this capability.',
    examples: ['A task a user might ask for.'],
    knowledge: [{ kind: 'document', knowledgeId: 'EXAMPLE-GUIDE', role: 'guide', title: 'Example guide', locator: { type: 'relative-file', path: 'knowledge/example.md' } }],
  },
  'knowledge/example.md': '# Example guide\n\nExplain how to use the capability here.\n',
  'PROVIDER.md': `# ${providerId} conventions\n\nRules every capability of this provider follows.\n`,
});

// --- changing a tree: checked first, undone whole -------------------------------------------

const text = (content) => (typeof content === 'string' ? content : JSON.stringify(content, null, 2) + '\n');

/** A path for people: relative to the current directory, `/`-separated. */
const shown = (file) => path.relative(process.cwd(), file).split(path.sep).join('/') || '.';

/**
 * What stands in the way of creating `file` (absolute) beneath `base`: an ancestor that is not a
 * folder, or `file` itself when it exists — unless it is a regular file and `replace` is set.
 * Beneath `base` a symbolic link is in the way too; up to `base` links are the host's own
 * (`/tmp` may be one). `{ at, what }` or undefined.
 */
function obstacle(file, base, replace = false) {
  const { root } = path.parse(file);
  const parts = file.slice(root.length).split(path.sep).filter(Boolean);
  for (let i = 1; i <= parts.length; i++) {
    const at = path.join(root, ...parts.slice(0, i));
    const beneath = at.startsWith(base + path.sep);
    let stat;
    try {
      stat = beneath ? fs.lstatSync(at) : fs.statSync(at);
    } catch (error) {
      if (error?.code === 'ENOENT') return undefined; // nothing beneath exists either
      return { at, what: 'cannot be checked' };
    }
    if (i < parts.length) {
      if (!stat.isDirectory()) return { at, what: 'is not a folder' };
    } else if (!(replace && stat.isFile())) {
      return { at, what: stat.isFile() ? 'exists' : 'is not a regular file' };
    }
  }
  return undefined;
}

/** A file-system condition as a catalog error: the tree cannot be changed (check_config), or the
 *  machine is short of something for now (retry). `file` as people see it. */
function treeError(error, file) {
  const errno = typeof error?.errno === 'number' && process.platform !== 'win32' ? -error.errno : undefined;
  const transient = errno !== undefined && native.osErrorIsTransient(errno);
  const reason = transient ? 'temporarily_unwritable' : ['EACCES', 'EPERM', 'EROFS'].includes(error?.code) ? 'not_writable' : ['ENOSPC', 'EDQUOT'].includes(error?.code) ? 'no_space' : 'unwritable';
  return new GraphError({ code: 'CG_CONFIG_INVALID', phase: 'load', nextAction: transient ? 'retry' : 'check_config', details: { file, reason } });
}

/** Steps on the file system, each with its undo; `undo()` reverts them newest first. */
class Changes {
  #undo = [];

  /** Creates the missing folders down to `dir`, top first. */
  mkdirs(dir) {
    const missing = [];
    for (let d = dir; !fs.existsSync(d); d = path.dirname(d)) missing.unshift(d);
    for (const d of missing) {
      fs.mkdirSync(d);
      this.#undo.push(() => fs.rmdirSync(d));
    }
  }

  rename(from, to) {
    fs.renameSync(from, to);
    this.#undo.push(() => fs.renameSync(to, from));
  }

  /** Writes `content` to a new file beside `file`, to be renamed into place; returns its name. */
  stage(file, content) {
    this.mkdirs(path.dirname(file));
    const temp = path.join(path.dirname(file), `.${path.basename(file)}.${process.pid}.tmp`);
    this.#undo.push(() => fs.rmSync(temp, { force: true }));
    fs.writeFileSync(temp, content, { flag: 'wx' });
    return temp;
  }

  /** Puts a staged file in place; a file already there is moved aside (listed in `kept`, for
   *  the caller to delete once every step has succeeded). */
  place(temp, file, kept) {
    if (fs.existsSync(file)) {
      const aside = `${temp}.old`;
      this.rename(file, aside);
      kept.push(aside);
    }
    this.rename(temp, file);
  }

  /** Reverts every step; returns how many could not be undone. */
  undo() {
    const stuck = [];
    for (const step of this.#undo.reverse()) {
      try {
        step();
      } catch {
        stuck.push(step);
      }
    }
    this.#undo = [];
    return stuck.length;
  }
}

async function init(dir, flags) {
  let providerId = flags['provider-id'];
  providerId ??= path.basename(path.resolve(dir)).toLowerCase().replace(/[^a-z0-9._-]+/g, '-').replace(/^[^a-z]+/, '');
  const template = PROVIDER_TEMPLATE(providerId);
  // The engine judges the ID and the whole template before anything is written; a folder name
  // that gives no ID (digits only) needs --provider-id.
  try {
    const trial = await CapabilityGraph.open({ providers: [{ definition: { ...template['provider.json'], capabilities: [template['capabilities/example.json']] } }] });
    await trial.close();
  } catch (error) {
    if (error instanceof GraphError && error.details?.field === 'providerId') throw usage('--provider-id');
    throw error;
  }
  const files = Object.entries(template).map(([rel, content]) => [path.resolve(dir, rel), content]);
  const configFile = path.resolve(DEFAULT_CONFIG);
  files.push([configFile, { providers: [{ providerId, authority: { kind: 'file', rootDir: path.relative(path.dirname(configFile), path.resolve(dir)) || '.', definitionLayout: 'directory' } }], executor: { kind: 'lexical' } }]);
  const planned = files.map(([f]) => shown(f));
  const existing = [];
  const blocked = [];
  const base = path.resolve(dir);
  for (const [file] of files) {
    const found = obstacle(file, file === configFile ? path.dirname(configFile) : base, true);
    if (found) blocked.push(`${shown(found.at)} ${found.what}`);
    else if (fs.existsSync(file)) existing.push(shown(file));
  }
  if (blocked.length || (existing.length && !flags.force)) {
    const checks = [];
    if (blocked.length) checks.push({ id: 'targets', status: 'fail', message: `in the way: ${[...new Set(blocked)].join(', ')}` });
    if (existing.length && !flags.force) checks.push({ id: 'targets', status: 'fail', message: `already exist: ${existing.join(', ')}` });
    return { status: 'conflict', checks, warnings: [], planned };
  }
  if (flags['dry-run']) return { status: 'planned', checks: [{ id: 'targets', status: 'pass', message: 'nothing in the way' }], warnings: [], planned };
  const changes = new Changes();
  const kept = [];
  let current;
  try {
    const staged = files.map(([file, content]) => {
      current = file;
      return [changes.stage(file, text(content)), file];
    });
    for (const [temp, file] of staged) {
      current = file;
      changes.place(temp, file, kept);
    }
  } catch (error) {
    const stuck = changes.undo();
    return failedWrite(treeError(error, shown(current)), stuck);
  }
  for (const aside of kept) fs.rmSync(aside, { force: true });
  const verified = await doctor({ config: configFile });
  return { status: verified.status, checks: verified.checks, warnings: [], written: planned };
}

/** The report of a change that failed part way and was undone (or could not be, in part). */
function failedWrite(error, stuck) {
  return {
    status: 'failed',
    checks: [
      { id: 'write', status: 'fail', message: describe(error) },
      stuck === 0
        ? { id: 'rollback', status: 'pass', message: 'nothing changed: every file is where it was' }
        : { id: 'rollback', status: 'fail', message: `${stuck} step(s) could not be undone: compare the tree with the planned moves` },
    ],
    warnings: [],
  };
}

/** How long `embed` waits for the vectors of a provider (the model embeds every capability). */
const EMBED_WAIT_MS = 3_600_000;

/**
 * `embed DIR`: opens the provider folder DIR alone with the config's semantic executor (and
 * budgets), waits for its capability vectors and writes them beside provider.json, replacing
 * the file whole (written aside, then renamed).
 */
async function embed(dir, flags) {
  const root = path.resolve(dir);
  let options = {};
  if (flags.config !== undefined) {
    const { config } = openConfig(readConfig(flags.config), flags.config);
    options = { budgets: config.budgets, executor: await config.executor };
  }
  if (options.executor?.id !== 'semantic') options.executor = semanticExecutor();
  const layout = fs.existsSync(path.join(root, 'capabilities')) ? 'directory' : 'legacy';
  // The engine reads the provider ID from the manifest.
  const { providerId } = unwrap(call(native.definitionFiles, root, layout));
  const graph = await CapabilityGraph.open({ ...options, providers: [{ providerId, authority: { kind: 'file', rootDir: root, definitionLayout: layout } }] });
  try {
    const { file, count, bytes } = await internal.vectorsFile(graph, providerId, EMBED_WAIT_MS);
    const target = path.join(root, ...file.split('/'));
    const aside = `${target}.${process.pid}.tmp`;
    try {
      fs.mkdirSync(path.dirname(target), { recursive: true });
      fs.writeFileSync(aside, bytes);
      fs.renameSync(aside, target);
    } catch (error) {
      fs.rmSync(aside, { force: true });
      throw treeError(error, file);
    }
    return { status: 'ok', checks: [{ id: 'vectors', status: 'pass', message: `${count} capabilities embedded` }], written: [file], warnings: [] };
  } finally {
    await graph.close();
  }
}

async function migrate(dir, flags) {
  const root = path.resolve(dir);
  // The engine reads the manifest and lists the definitions in one pass over the tree.
  const { providerId, files: legacy } = unwrap(call(native.definitionFiles, root, 'legacy'));
  const moves = legacy.map((rel) => [rel, path.posix.join('capabilities', rel.replace(/\.capability\.json$/, '.json'))]);
  const planned = moves.map(([from, to]) => `${from} -> ${to}`);
  if (moves.length === 0) return { status: 'ok', checks: [{ id: 'layout', status: 'pass', message: 'no legacy definitions' }], warnings: [] };
  // Every destination is checked before anything moves: a file where a folder is needed, a
  // symbolic link on the way, a target that exists.
  const at = (rel) => path.join(root, ...rel.split('/'));
  const relative = (file) => path.relative(root, file).split(path.sep).join('/');
  const blocked = new Set();
  for (const [, to] of moves) {
    const found = obstacle(at(to), root);
    if (found) blocked.add(`${relative(found.at)} ${found.what}`);
  }
  if (blocked.size) {
    return { status: 'conflict', checks: [{ id: 'targets', status: 'fail', message: `in the way: ${[...blocked].join(', ')}` }], warnings: [], planned };
  }
  if (flags['dry-run']) return { status: 'planned', checks: [], warnings: [], planned };
  const revision = async (layout) => {
    const graph = await CapabilityGraph.open({ providers: [{ providerId, authority: { kind: 'file', rootDir: root, definitionLayout: layout } }] });
    try {
      return (await graph.listProviders()).items[0].staticRevision;
    } finally {
      await graph.close();
    }
  };
  const before = await revision('legacy');
  // The config's new text is ready before anything moves.
  let config;
  if (flags.config) {
    const raw = readConfig(flags.config);
    const base = path.dirname(path.resolve(flags.config));
    for (const p of raw.providers ?? []) {
      if (p?.authority?.kind === 'file' && path.resolve(base, p.authority.rootDir ?? '') === root) p.authority.definitionLayout = 'directory';
    }
    config = [path.resolve(flags.config), JSON.stringify(raw, null, 2) + '\n'];
  }
  const changes = new Changes();
  let current;
  try {
    for (const [from, to] of moves) {
      current = from;
      changes.mkdirs(path.dirname(at(to)));
      changes.rename(at(from), at(to));
    }
  } catch (error) {
    return failedWrite(treeError(error, current), changes.undo());
  }
  let after;
  try {
    after = await revision('directory');
  } catch {
    after = undefined;
  }
  if (after !== before) {
    const stuck = changes.undo();
    const checks = [{ id: 'revision', status: 'fail', message: `static revision would change (${before} -> ${after ?? 'invalid'}); rolled back` }];
    if (stuck) checks.push({ id: 'rollback', status: 'fail', message: `${stuck} step(s) could not be undone: compare the tree with the planned moves` });
    return { status: 'failed', checks, warnings: [] };
  }
  const checks = [{ id: 'revision', status: 'pass', message: `static revision ${before} unchanged` }];
  const written = moves.map(([, to]) => to);
  if (config) {
    const [file, content] = config;
    const kept = [];
    try {
      current = shown(file);
      changes.place(changes.stage(file, content), file, kept);
    } catch (error) {
      return failedWrite(treeError(error, current), changes.undo());
    }
    for (const aside of kept) fs.rmSync(aside, { force: true });
    written.push(shown(file));
  }
  return { status: 'ok', checks, warnings: [], written };
}

// --- main -----------------------------------------------------------------------------------

/** CG_CONFIG_INVALID (phase config) for `path` of the config file. */
function configInvalid(path, expected) {
  return new GraphError({ code: 'CG_CONFIG_INVALID', phase: 'config', details: { path, ...(expected ? { expected } : {}) } });
}

async function serveMcp(graph, mcp = {}, flags, stderr) {
  const { createMcpServer } = require('../mcp/server.cjs');
  const { StdioServerTransport } = require('../mcp/stdio.cjs');
  if (mcp === null || typeof mcp !== 'object' || Array.isArray(mcp)) throw configInvalid('mcp', 'object');
  // The config's block first, alone: what it gets wrong is the config's (CG_CONFIG_INVALID);
  // what the flags then get wrong is a usage error.
  const named = (error, name) => (error instanceof GraphError && error.code === 'CG_INPUT_INVALID' ? name(error.details?.field) : error);
  try {
    createMcpServer(graph, mcp);
  } catch (error) {
    throw named(error, (field) => configInvalid(typeof field === 'string' ? `mcp.${field}` : 'mcp'));
  }
  const options = {
    ...mcp,
    ...(flags.prefix !== undefined ? { prefix: flags.prefix } : {}),
    ...(flags['document-bodies'] ? { documentBodies: true } : {}),
  };
  const flagged = (error) => named(error, (field) => usage(field === 'documentBodies' ? '--document-bodies' : field === 'allowedHosts' ? '--allowed-host' : '--prefix'));
  if (flags.http !== undefined) return serveMcpHttp(graph, options, flags, stderr, flagged);
  if (flags['allowed-host'] !== undefined) throw usage('--allowed-host');
  let server;
  try {
    server = createMcpServer(graph, options);
  } catch (error) {
    throw flagged(error);
  }
  // The transport closes once every request read before the end of input is answered (or its
  // stdout is gone); a signal ends the session at once.
  let stop;
  const stopped = new Promise((resolve) => (stop = resolve));
  server.onclose = stop;
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  try {
    await server.connect(new StdioServerTransport());
    await stopped;
  } finally {
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
    await server.close().catch(() => {});
  }
}

/** `[HOST:]PORT` of `--http`; the host is loopback unless told otherwise. */
function httpAddress(value) {
  const m = /^(?:(\[[0-9A-Fa-f:.]+\]|[^:[\]]+):)?(\d{1,5})$/.exec(value);
  if (!m || Number(m[2]) > 65535) throw usage('--http');
  return { host: (m[1] ?? '127.0.0.1').replace(/^\[(.*)\]$/, '$1'), port: Number(m[2]) };
}

/** One line on stderr per reload a watch asked for, and per lost watch: what it serves now, or
 *  the error's envelope. */
function reportReloads(graph, stderr) {
  graph.on('reload', (event) => {
    if (event.trigger !== 'watch') return;
    const line = event.ok
      ? `${event.providerId} serves ${event.entry.staticRevision}`
      : `${event.providerId} ${event.entry ? 'reload' : 'watch'} failed: ${JSON.stringify(event.error.toJSON())}`;
    stderr.write(`capability-graph: ${line}\n`);
  });
}

/** `capability-graph mcp --http`: stateless Streamable HTTP at /mcp, until a signal. */
async function serveMcpHttp(graph, options, flags, stderr, flagged) {
  const { createMcpHttpHandler } = require('../mcp/http.cjs');
  const address = httpAddress(flags.http);
  let handler;
  try {
    handler = createMcpHttpHandler(graph, { ...options, ...(flags['allowed-host'] ? { allowedHosts: flags['allowed-host'] } : {}) });
  } catch (error) {
    throw flagged(error);
  }
  const http = require('node:http');
  const server = http.createServer((req, res) => {
    if (!/^\/mcp(\?|$)/.test(req.url)) {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message: 'Not found: MCP is served at /mcp' }, id: null }));
      return;
    }
    handler(req, res);
  });
  try {
    await new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen(address.port, address.host, resolve);
    });
  } catch {
    // A port in use or refused: the address is the config's to change.
    throw configInvalid('--http', 'an address this process may listen on');
  }
  const { port } = server.address();
  const host = address.host.includes(':') ? `[${address.host}]` : address.host;
  stderr.write(`capability-graph: MCP over Streamable HTTP at http://${host}:${port}/mcp\n`);
  let stop;
  const stopped = new Promise((resolve) => (stop = resolve));
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  try {
    await stopped;
  } finally {
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
}

/** The error of a batch whose every item failed (its first item's), else undefined. */
function everyItemFailed(result) {
  const slots = result?.results;
  if (!Array.isArray(slots) || slots.length === 0 || !slots.every((s) => s.ok === false)) return undefined;
  return slots[0].error;
}

/** For a person at a terminal: a whole read that found nothing because the capability's
 *  documents sit in collections (read only by --knowledge) names their members. */
async function readHint(graph, id, flags) {
  const shown = (await graph.getCapabilities([id], pins(flags))).results[0];
  if (!shown?.ok) return undefined;
  const collections = shown.value.knowledge.items.filter((k) => k.kind === 'collection').slice(0, 3);
  const parts = [];
  let first;
  for (const { knowledgeId: collectionId } of collections) {
    const page = await graph.listKnowledgeMembers({ capability: id, collectionId, limit: 10, ...pins(flags) });
    const members = page.items.map((m) => m.knowledgeId);
    if (members.length === 0) continue;
    first ??= members[0];
    parts.push(`${collectionId} holds ${members.join(', ')}${page.nextCursor ? ', …' : ''}`);
  }
  if (parts.length === 0) {
    const filters = ['role', 'locale'].filter((f) => flags[f]).map((f) => `--${f}`);
    return filters.length ? `capability-graph: no top-level document of ${id} matches ${filters.join(' and ')}\n` : undefined;
  }
  const its = parts.length === 1 ? 'its collection' : 'its collections';
  return `capability-graph: ${id} has no top-level document to read; ${its} ${parts.join('; ')}: read them with --knowledge (e.g. --knowledge ${first})\n`;
}

/** What a person can do next, by the error's next action. */
const ADVICE = {
  fix_input: (command) => `check the command line (\`capability-graph help${command ? ` ${command}` : ''}\` explains it)`,
  check_config: () => 'check the configuration (`capability-graph doctor` reports what is wrong)',
  refresh: () => 'the graph may have changed or the ID is wrong: list what exists with `capability-graph catalog` and use current IDs and revisions',
  narrow_scope: () => 'ask for less: fewer IDs, a narrower --scope, or page reads with --max-bytes',
  retry: () => 'try again',
  contact_admin: () => 'this is a bug: report it with the command that caused it',
};

/** The line a person reads after an error's envelope: what went wrong (the catalog's sentence
 *  and the details that locate it) and what to do next. */
function errorHint(error, command, suggestion) {
  const { message, nextAction, details } = error;
  const where = [
    ...Object.entries(details ?? {})
      .filter(([, v]) => typeof v === 'string' || typeof v === 'number')
      .map(([k, v]) => (['field', 'path', 'knowledgeId', 'file'].includes(k) ? String(v) : `${k} ${v}`)),
    ...(suggestion ? [`did you mean ${suggestion}?`] : []),
  ].join(', ');
  const what = `${message.charAt(0).toLowerCase()}${message.slice(1)}${where ? ` (${where})` : ''}`;
  const next = ADVICE[nextAction]?.(command) ?? 'run the command again';
  return `capability-graph: ${what}; ${next}\n`;
}

/** A stream the CLI writes to: every write's outcome is kept, so a closed stdout (EPIPE) is
 *  noticed and never an unhandled error. */
const watched = new WeakSet();
function output(stream) {
  const writes = [];
  // A failed write is answered through its callback; the stream's own 'error' is expected.
  if (!watched.has(stream)) {
    watched.add(stream);
    stream.on?.('error', () => {});
  }
  return {
    isTTY: stream.isTTY,
    write(text) {
      writes.push(
        new Promise((resolve) => {
          try {
            stream.write(text, (error) => resolve(error ?? undefined));
          } catch (error) {
            resolve(error);
          }
        }),
      );
    },
    /** The first write error, once every write has completed. */
    async settled() {
      return (await Promise.all(writes)).find(Boolean);
    },
  };
}

/** A reader that went away is not the command's failure. */
const readerGone = (error) => error?.code === 'EPIPE' || error?.code === 'ERR_STREAM_DESTROYED';

/** Runs the CLI; returns the exit code. */
async function main(argv, io = { stdout: process.stdout, stderr: process.stderr }) {
  const stdout = output(io.stdout);
  const stderr = output(io.stderr);
  let code = await run(argv, stdout, stderr);
  const failed = await stdout.settled();
  await stderr.settled();
  if (failed !== undefined && !readerGone(failed) && code === 0) code = 1;
  return code;
}

async function run(argv, stdout, stderr) {
  let graph;
  const seen = {};
  // A person reads stderr: on a terminal, without --json (known before the arguments are).
  const options = argv.includes('--') ? argv.slice(0, argv.indexOf('--')) : argv;
  const person = stderr.isTTY && !options.includes('--json');
  const fail = (error, problem, suggestion) => {
    stderr.write(JSON.stringify({ ok: false, error }) + '\n');
    if (person) stderr.write(problem ? configHint(problem) : errorHint(error, own(COMMANDS, seen.command) ? seen.command : undefined, suggestion));
    return 1;
  };
  try {
    const { command, args, flags } = parseArgs(argv, seen);
    if (flags.version) {
      stdout.write(`${VERSION}\n`);
      return 0;
    }
    if (command === 'help') {
      const known = (name) => name === 'help' || own(COMMANDS, name) !== undefined;
      if (args.length > 1) throw usage(args[args.length - 1]);
      if (args.length === 1 && !known(args[0])) throw unknown(args[0], args[0], COMMAND_NAMES);
      const topic = args[0] ?? (flags.help ? 'help' : undefined);
      stdout.write(topic ? commandHelp(topic) : HELP);
      return 0;
    }
    const spec = own(COMMANDS, command);
    if (flags.help || command === undefined) {
      stdout.write(spec ? commandHelp(command) : HELP);
      return command === undefined && !flags.help ? 1 : 0;
    }
    if (!spec) throw unknown(command, command, COMMAND_NAMES);
    if (args.length < spec.args[0] || args.length > spec.args[1]) throw usage(command);
    if (command === 'init') return report(stdout, flags, await init(args[0], flags));
    if (command === 'migrate') {
      if (flags.config !== undefined) readConfig(flags.config);
      return report(stdout, flags, await migrate(args[0], flags));
    }
    if (command === 'doctor') return report(stdout, flags, await doctor(flags));
    if (command === 'embed') return report(stdout, flags, await embed(args[0], flags));
    if (command === 'export' && !['mermaid', 'dot', 'json'].includes(flags.format)) throw usage('--format');
    const opened = await openGraph(flags, stderr);
    graph = opened.graph;
    if (command === 'mcp') {
      if (flags.watch) reportReloads(graph, stderr);
      await serveMcp(graph, opened.mcp, flags, stderr);
      return 0;
    }
    if (command === 'export') {
      const exported = await internal.query(graph, 'export', flags.provider ? { providerId: flags.provider } : {});
      stdout.write(flags.format === 'json' ? JSON.stringify(exported) + '\n' : renderExport(exported, flags.format));
      return 0;
    }
    const result = await GRAPH_COMMANDS[command](graph, args, flags);
    const failure = everyItemFailed(result);
    if (failure) return fail(failure);
    const human = !flags.json && stdout.isTTY && HUMAN[command];
    stdout.write(human ? human(result) : JSON.stringify(result) + '\n');
    if (person && command === 'read' && result.knowledgeState === 'filtered_empty' && result.results?.length === 0) {
      const hint = await readHint(graph, args[0], flags).catch(() => undefined);
      if (hint) stderr.write(hint);
    }
    return 0;
  } catch (error) {
    const graphError = error instanceof GraphError ? error : new GraphError({ code: 'CG_INTERNAL', phase: 'config' });
    return fail(graphError.toJSON(), graphError[CONFIG_PROBLEM], graphError[SUGGESTION]);
  } finally {
    await graph?.close();
  }
}

module.exports = { main };
