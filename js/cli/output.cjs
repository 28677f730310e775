'use strict';
// What the command line writes: answers as JSON or, for a person at a terminal, as text; the
// reports of the maintenance commands; and the line a person reads after an error's envelope.

const { GraphError } = require('../errors.cjs');

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
  match: (r) => {
    const rows = (items) => items.map((m) => `  ${m.qualifiedId}${m.confidence === undefined ? '' : `  ${m.confidence}`}\n`).join('');
    return `${r.status}\n${rows(r.matches)}${r.nearest?.length ? `nearest:\n${rows(r.nearest)}` : ''}`;
  },
};
HUMAN.spec = HUMAN.read;

const EXIT = { ok: 0, failed: 1, conflict: 2, planned: 3 };

/** A maintenance report: JSON, or for a person at a terminal its lines, then `next` (what to do
 *  now, only ever for a person). Returns the exit code. */
function report(out, flags, result, next) {
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
    if (next) out.write(next);
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

/** What a person can do next, by the error's next action. */
const ADVICE = {
  fix_input: (command) => `check the command line (\`capability-graph help${command ? ` ${command}` : ''}\` explains it)`,
  // A missing optional package is named in the details; installing it is the whole remedy.
  check_config: (command, details) =>
    typeof details?.package === 'string' ? `install it: \`npm install ${details.package}\`` : 'check the configuration (`capability-graph doctor` reports what is wrong)',
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
  const next = ADVICE[nextAction]?.(command, details) ?? 'run the command again';
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

module.exports = { HUMAN, report, describe, errorHint, output, readerGone };
