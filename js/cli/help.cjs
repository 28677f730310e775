'use strict';
// The help of the command line: the overview of every command, and one command's page (its
// forms, what it does, its flags, the common flags, an example and its exit codes).

const { CONFIG_MAX } = require('../graph/config-file.cjs');

const VERSION = require('../../package.json').version;

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
  match INTENT [--context key=value]… [--limit N] [--mode accept|rank]
  export [--provider P] --format mermaid|dot|json
  mcp [--prefix P] [--document-bodies] [--watch]   serve MCP on stdio
  mcp --http [HOST:]PORT [--token-file F] [--allowed-origin O]…   serve MCP over Streamable HTTP at /mcp

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
  -h, --help      this help, or the command's
  -V, --version   the version (also -v)
  --              the rest are arguments, even those that start with a dash
`;

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
      mode: ['M', 'accept (default): what fits, or no_match and the nearest; rank: the best N, always'],
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
    about: 'Serves the graph\'s tools over MCP: on stdio (stdout carries only the protocol) until its\ninput ends and every request read is answered, or over Streamable HTTP at /mcp with --http.\nThe config\'s "mcp" block gives the server\'s options. Started at a terminal, it says on stderr\nhow a client connects: a client starts this command itself.',
    flags: {
      prefix: ['P', 'prefix of every tool name (default: the config\'s mcp.prefix)'],
      'document-bodies': ['', 'also the tools that return document bodies'],
      http: ['[HOST:]PORT', 'serve Streamable HTTP instead of stdio (loopback unless HOST is given)'],
      'allowed-host': ['H:P', 'a Host header to accept instead of the loopback names (repeatable; with --http)'],
      'allowed-origin': ['O', 'an Origin to serve besides the server\'s own loopback origin (repeatable; with --http)'],
      'token-file': ['F', 'a file holding the bearer token(s) clients must send, one a line (with --http; or\n     CAPABILITY_GRAPH_MCP_TOKEN); needed to bind an address other than loopback'],
      'allow-unauthenticated': ['', 'bind an address other than loopback without a token: something in front\n     authenticates (with --http)'],
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
    about: 'Creates a provider in DIR (provider.json, capabilities/, knowledge/, PROVIDER.md) and a\n./capability-graph.json using the lexical executor. Everything is checked before anything\nis written; a failure part way undoes every step. Each JSON file names its JSON Schema in\nthe installed package ($schema) for editors; the check schema says when it cannot.',
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
    about: 'Prints the overview of every command, or one command\'s help: what it does, its flags,\nan example and its exit codes. `COMMAND --help` (or -h) prints the same; no command at all\nprints the overview.',
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

module.exports = { VERSION, HELP, commandHelp };
