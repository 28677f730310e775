'use strict';
// The command line as node:util parseArgs reads it (strict), against the command table: the
// command, its positional arguments and its flags. Anything unknown, missing or malformed is a
// usage error (CG_INPUT_INVALID, phase config) naming the flag or command, with the nearest
// known name for a person. A positional argument that starts with a dash is given after `--`.

const { parseArgs } = require('node:util');
const { inputInvalid } = require('../errors.cjs');
const { COMMON, ALIASES, COMMANDS, own } = require('./commands.cjs');

function usage(field) {
  return inputInvalid(field, { phase: 'config' });
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

/** parseArgs' options for a table of flags (and the one-letter aliases). */
function optionsOf(flags) {
  const options = {};
  for (const [name, spec] of Object.entries(flags)) {
    options[name] = { type: spec.value ? 'string' : 'boolean', ...(spec.multi ? { multiple: true } : {}), ...(spec.short ? { short: spec.short } : {}) };
  }
  for (const alias of Object.keys(ALIASES)) options[alias] = { type: 'boolean' };
  return options;
}

/** The command: the first positional argument before any `--` (the common flags are known
 *  wherever they stand; a command's own flags come after it). */
function commandOf(argv) {
  const { tokens } = parseArgs({ args: argv, options: optionsOf(COMMON), strict: false, allowPositionals: true, tokens: true });
  for (const token of tokens) {
    if (token.kind === 'option-terminator') return undefined;
    if (token.kind === 'positional') return token.value;
  }
  return undefined;
}

/**
 * The first flag of `tokens` that is wrong, left to right, as its usage error: unknown (an
 * alias only in its one-letter form), a value where none is taken, none (or an empty one, or
 * what looks like another flag) where one is, not a whole number where one is needed, or given
 * twice when it is not repeatable.
 */
function firstProblem(tokens, flags) {
  const given = new Set();
  for (const token of tokens) {
    if (token.kind !== 'option') continue;
    const alias = own(ALIASES, token.name) !== undefined;
    const spec = alias ? (token.rawName.startsWith('--') ? undefined : {}) : own(flags, token.name);
    if (spec === undefined) return unknown(token.rawName, token.name, Object.keys(flags), '--');
    const flag = `--${alias ? ALIASES[token.name] : token.name}`;
    const { value } = token;
    if (!spec.value) {
      if (value !== undefined) return usage(flag);
    } else {
      // A flag that takes a value never takes an empty one (it would drop what it narrows).
      if (value === undefined || value === '' || (!token.inlineValue && value.startsWith('-'))) return usage(flag);
      if (spec.number && !/^\d+$/.test(value)) return usage(flag);
    }
    if (!spec.multi && given.has(flag)) return usage(flag);
    given.add(flag);
  }
  return undefined;
}

/** Parses argv into { command, args, flags }; any unknown command or flag is a usage error
 *  (`seen.command` says which command it was for). */
function parseCommandLine(argv, seen = {}) {
  const command = commandOf(argv);
  seen.command = command;
  const known = { ...COMMON, ...own(COMMANDS, command)?.flags };
  const config = { args: argv, options: optionsOf(known), allowPositionals: true, tokens: true };
  let parsed;
  try {
    parsed = parseArgs({ ...config, strict: true });
  } catch (error) {
    if (!String(error?.code).startsWith('ERR_PARSE_ARGS_')) throw error;
    // parseArgs says the line is wrong; its tokens say where.
    throw firstProblem(parseArgs({ ...config, strict: false }).tokens, known) ?? usage(command ?? 'arguments');
  }
  const problem = firstProblem(parsed.tokens, known);
  if (problem !== undefined) throw problem;
  // Keys are flag names from the command line: no prototype to collide with.
  const flags = Object.create(null);
  for (const [name, value] of Object.entries(parsed.values)) {
    const canonical = own(ALIASES, name) ?? name;
    flags[canonical] = known[canonical].number ? Number(value) : value;
  }
  const args = command === undefined ? parsed.positionals : parsed.positionals.slice(1);
  return { command, args, flags };
}

module.exports = { parseCommandLine, usage, unknown, SUGGESTION };
