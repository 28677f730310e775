'use strict';
// The command line read against the command table: the command, its positional arguments and
// its flags. Anything unknown, missing or malformed is a usage error (CG_INPUT_INVALID, phase
// config) naming the flag or command, with the nearest known name for a person.

const { inputInvalid } = require('../errors.cjs');
const { COMMON, COMMANDS, own } = require('./commands.cjs');

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

module.exports = { parseArgs, usage, unknown, SUGGESTION };
