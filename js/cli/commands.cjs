'use strict';
// The command table of the capability-graph command line: each command's positional arguments
// ([fewest, most]) and its own flags; the common flags every command takes.

/** Flags: name → { value: true when it takes one, multi: true when repeatable, number: true when
 *  its value is a whole number, short: its one-letter form }. */
const COMMON = {
  config: { value: true },
  json: {},
  scope: { value: true },
  revision: { value: true },
  help: { short: 'h' },
  version: { short: 'V' },
};
/** One-letter forms that are not a flag's own `short` (`-v` is `--version` too; `--v` is nothing). */
const ALIASES = { v: 'version' };
const COMMANDS = {
  providers: { args: [0, 0], flags: {} },
  catalog: { args: [0, 0], flags: { prefix: { value: true }, parent: { value: true }, limit: { value: true, number: true }, cursor: { value: true } } },
  show: { args: [1, Infinity], flags: {} },
  neighbors: { args: [1, 1], flags: { kinds: { value: true }, limit: { value: true, number: true } } },
  resolve: { args: [1, Infinity], flags: {} },
  select: { args: [1, Infinity], flags: {} },
  read: { args: [1, 1], flags: { knowledge: { value: true, multi: true }, role: { value: true, multi: true }, locale: { value: true, multi: true }, cursor: { value: true }, 'max-bytes': { value: true, number: true } } },
  spec: { args: [1, 1], flags: { knowledge: { value: true, multi: true }, cursor: { value: true }, 'max-bytes': { value: true, number: true } } },
  match: { args: [1, 1], flags: { context: { value: true, multi: true }, limit: { value: true, number: true }, mode: { value: true } } },
  export: { args: [0, 0], flags: { provider: { value: true }, format: { value: true } } },
  mcp: { args: [0, 0], flags: { prefix: { value: true }, 'document-bodies': {}, http: { value: true }, 'allowed-host': { value: true, multi: true }, 'allowed-origin': { value: true, multi: true }, 'token-file': { value: true }, 'allow-unauthenticated': {}, watch: {} } },
  doctor: { args: [0, 0], flags: {} },
  init: { args: [1, 1], flags: { 'provider-id': { value: true }, 'dry-run': {}, force: {} } },
  migrate: { args: [1, 1], flags: { 'dry-run': {} } },
  embed: { args: [1, 1], flags: {} },
};

const COMMAND_NAMES = [...Object.keys(COMMANDS), 'help'];

/** `table[name]` when `name` is one of its own keys (never an Object.prototype member). */
const own = (table, name) => (table !== undefined && Object.hasOwn(table, name) ? table[name] : undefined);

module.exports = { COMMON, ALIASES, COMMANDS, COMMAND_NAMES, own };
