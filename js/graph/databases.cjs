'use strict';
// Database authorities: each provider read whole through an open view, a page at a time, into
// the engine's collector, which judges every page.

const { native, unwrap, call } = require('../engine/native.cjs');
const { toWireJson, marker } = require('../pure-json.cjs');
const { TIMED_OUT, CLOSED, thrownFields, bounded, closedError } = require('./host-calls.cjs');

/** A database read stopped by a deadline (`reason`, named by the engine). */
class Stopped {
  constructor(reason) {
    this.reason = reason;
  }
}
/** A database read the engine's collector stopped, its failure recorded there. */
const COLLECTOR_STOPPED = Symbol('collectorStopped');

/** More items than `limit` in `items`, told by its length alone (a Proxy may throw). */
function overLimit(items, limit) {
  try {
    return Array.isArray(items) && items.length > limit;
  } catch {
    return false;
  }
}

/** A view's page as the collector takes it: its `items`, `nextCursor` and (of `changedSince`)
 *  `unknown`, read once, and its `itemsJson` (the items as one JSON array text, which the
 *  engine parses) when it gave that instead: [page JSON, items text or undefined]. The page is
 *  held to the call's `bound` ({ items, chars }) before it is walked or handed on: more items
 *  than asked for, or more text, stand as the walk's marker, which the collector refuses. */
function wirePage(page, bound) {
  if (page === null || typeof page !== 'object') return [toWireJson({}), undefined];
  const { items, nextCursor, unknown, itemsJson } = page;
  const over = (kind) => `{"items":${marker(kind)}}`;
  if (overLimit(items, bound.items)) return [over('too_many_values'), undefined];
  if (typeof itemsJson === 'string' && itemsJson.length > bound.chars) return [over('too_many_chars'), undefined];
  const wired = toWireJson({ items, nextCursor, unknown }, undefined, { maxChars: bound.chars });
  if (wired === marker('too_many_chars')) return [over('too_many_chars'), undefined];
  if (itemsJson === undefined) return [wired, undefined];
  // Text that is not well-formed is not JSON the engine could read: the page breaks the contract.
  const text = typeof itemsJson === 'string' && itemsJson.isWellFormed() ? itemsJson : '';
  return [wired, text];
}

/** The view fields that describe the source, as plain JSON (compared by the engine). */
function sourceContext(view) {
  return JSON.parse(toWireJson({ provider: view.provider, sourceRevision: view.sourceRevision, knowledgeRootDir: view.knowledgeRootDir }));
}

/** The optional calls a view may have; the collector chooses among those it has. */
const VIEW_CALLS = ['scanRelations', 'neighbors', 'changedSince', 'vectors'];

/**
 * Reads one provider whole through an open view into `reads` (the engine's collector), a page
 * at a time: the collector names each call to make (the capability records, then the edges by
 * what the view offers), judges each page and says when the read is over, stopped, or not
 * needed (the view names the state the current snapshot was read from). Each adapter call runs
 * within `budgets.callTimeoutMs`. The view's source fields are read when it opens and again
 * after the scans. `signal` aborts when the whole read is past its deadline; from then on
 * nothing more reaches the collector, which reads the next provider.
 */
async function readView(adapter, providerId, budgets, active, signal, reads) {
  const step = async (invoke) => {
    if (signal.aborted) throw new Stopped('database_read_timeout');
    let answer;
    try {
      answer = await bounded(invoke, { timeoutMs: budgets.callTimeoutMs, active });
    } catch (error) {
      if (error === TIMED_OUT) throw new Stopped('database_call_timeout');
      throw error;
    }
    if (signal.aborted) throw new Stopped('database_read_timeout');
    return answer;
  };
  // Releasing a view cannot change what was read, and frees what the adapter holds for it (a
  // pooled connection): it is bounded like every adapter call, and made after close() too.
  const release = (v) => (typeof v?.close === 'function' ? bounded(() => v.close(), { timeoutMs: budgets.callTimeoutMs }).catch(() => {}) : undefined);
  let view;
  let opening;
  try {
    view = await step(() => (opening = Promise.resolve(adapter.openView(providerId))));
  } catch (error) {
    // A view that opens after its call was given up (a deadline, close()) is released once open.
    opening?.then(release, () => {});
    throw error;
  }
  try {
    const opened = sourceContext(view);
    const offers = VIEW_CALLS.filter((name) => typeof view?.[name] === 'function');
    let next = unwrap(call(() => reads.begin(providerId, JSON.stringify({ ...opened, cwd: process.cwd() }), JSON.stringify(offers))));
    if (next?.unchanged) return;
    const pages = async () => {
      while (next !== null) {
        if (next.stopped) throw COLLECTOR_STOPPED;
        const { call: method, args, bound } = next;
        const page = await step(() => view[method](...args));
        const [wired, itemsJson] = wirePage(page, bound);
        next = unwrap(call(() => reads.page(wired, itemsJson)));
      }
    };
    await pages();
    // The read is complete; the collector may then ask for the view's precomputed vectors,
    // whose failures it keeps from the read.
    next = unwrap(call(() => reads.end(JSON.stringify(sourceContext(view)))));
    await pages();
  } finally {
    // The next read waits for the release; a read close() ended does not.
    const released = release(view);
    if (!active?.closed) await released;
  }
}

/**
 * Reads one provider from a database authority into `reads` within
 * `budgets.database.readTimeoutMs`. The engine validates all of it; a failure travels as its
 * `code`, or the `reason` a deadline stopped it for (the collector records its own stops).
 * close() ends the read (CG_GRAPH_CLOSED).
 */
async function readDatabase(adapter, providerId, budgets, active, reads) {
  const fail = (failed) => unwrap(call(() => reads.fail(providerId, JSON.stringify(failed))));
  try {
    await bounded((signal) => readView(adapter, providerId, budgets, active, signal, reads), { timeoutMs: budgets.readTimeoutMs, active });
  } catch (error) {
    if (error === CLOSED) throw closedError();
    if (error === COLLECTOR_STOPPED) return;
    if (error === TIMED_OUT) return fail({ reason: 'database_read_timeout' });
    if (error instanceof Stopped) return fail({ reason: error.reason });
    return fail({ code: thrownFields(error)[0] ?? null });
  }
}

/** Reads the database authorities `sources` ([{ providerId, handle }]) into `reads`, a
 *  collector of the engine's (a new one unless given), which `open` and `reload` take. */
async function readDatabases(sources, hosts, budgets, active, reads = call(() => new native.NativeDatabaseReads(JSON.stringify(budgets)))) {
  for (const { providerId, handle } of sources) await readDatabase(hosts.all[handle], providerId, budgets, active, reads);
  return reads;
}

module.exports = { readDatabases };
