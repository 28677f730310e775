'use strict';
// Calls that wait for host code (executors, retrievers, adapters, readers, databases): each is
// bounded by its deadline, the caller's signal and close(), and every outcome goes back to the
// engine to judge.

const { failure, unwrap } = require('../engine/native.cjs');
const { GraphError } = require('../errors.cjs');
const { toWireJson, ARGUMENTS, HOST_KEY } = require('../pure-json.cjs');

/** Verbs whose work grows with the graph: they run on the libuv pool, never on this thread. */
const POOL_VERBS = new Set(require('../engine-tables.cjs').poolVerbs);

/** `code`, `nextAction` and `details.package` of whatever an executor threw, when strings. */
function thrownFields(error) {
  try {
    const text = (v) => (typeof v === 'string' ? v : undefined);
    return error !== null && (typeof error === 'object' || typeof error === 'function')
      ? [text(error.code), text(error.nextAction), text(error.details?.package)]
      : [undefined, undefined, undefined];
  } catch {
    return [undefined, undefined, undefined];
  }
}

/** Why `bounded` stopped waiting for a host component (never a value a component can throw). */
const TIMED_OUT = Symbol('timedOut');
const CANCELLED = Symbol('cancelled');
const CLOSED = Symbol('closed');

/**
 * Calls a host component with an AbortSignal of its own: `invoke(signal)`. Settles with its
 * answer, or rejects with what the component threw, with TIMED_OUT past `timeoutMs`, with
 * CANCELLED when the caller's `signal` aborts, or with CLOSED when close() ends the `active`
 * calls. Unless the component answered, its signal is aborted; a late answer is discarded.
 * Every wait on host code goes through here, so every such wait settles.
 */
function bounded(invoke, { timeoutMs, signal, active } = {}) {
  return new Promise((resolve, reject) => {
    // After close() no host component is called any more.
    if (active?.closed) return reject(CLOSED);
    const controller = new AbortController();
    let settled = false;
    let timer;
    const settle = (ok, value) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      active?.delete(entry);
      if (!ok) controller.abort();
      (ok ? resolve : reject)(value);
    };
    const onAbort = () => settle(false, CANCELLED);
    const entry = { close: () => settle(false, CLOSED) };
    if (signal?.aborted) return onAbort();
    signal?.addEventListener('abort', onAbort, { once: true });
    if (timeoutMs != null) timer = setTimeout(() => settle(false, TIMED_OUT), timeoutMs);
    active?.add(entry);
    let answer;
    try {
      answer = invoke(controller.signal);
    } catch (error) {
      return settle(false, error);
    }
    Promise.resolve(answer).then(
      (value) => settle(true, value),
      (error) => settle(false, error),
    );
  });
}

const closedError = () => new GraphError({ code: 'CG_GRAPH_CLOSED' });

/**
 * Runs the host component a pending call waits for. The first of its answer, the deadline, the
 * caller's abort and close() (for `active` calls) settles the call; every outcome is judged by
 * the engine. `prepare` runs after the answer, still within the deadline. An error the engine
 * issued during the call (`issued`: error → its JSON) that comes back is replaced by the
 * engine's own copy, whatever the component changed on it.
 */
async function runHost(pending, invoke, { signal, active, timeoutCode, prepare, issued, answered } = {}) {
  const request = JSON.parse(pending.request);
  let output;
  try {
    output = await bounded(
      async (own) => {
        const answer = await invoke(request, own);
        await prepare?.(answer);
        return answer;
      },
      { timeoutMs: pending.timeoutMs, signal, active },
    );
  } catch (error) {
    if (error === CLOSED) throw closedError();
    if (error === CANCELLED) throw failure(pending.fail('CG_MODEL_CANCELLED'));
    if (error === TIMED_OUT) throw failure(pending.fail(timeoutCode));
    const issuedJson = issued?.get(error);
    if (issuedJson !== undefined) throw GraphError.fromJSON(issuedJson);
    throw failure(pending.fail(...thrownFields(error)));
  }
  // The engine's own answer (the lexical executor's) needs no judging.
  if (answered) return unwrap(output);
  // An answer is printed no further than the engine can accept it (the executor's
  // match.maxOutputBytes): past it the walk stops and the engine refuses the answer.
  const bound = pending.outputBound;
  return unwrap(pending.finish(toWireJson(output, undefined, bound == null ? undefined : { maxChars: bound })));
}

/** A verb's query as wire JSON (an omitted query is {}), and its top-level AbortSignal when the
 *  verb takes one (`takesSignal`): it stays here, the engine sees a marker where it was. */
function wireQuery(query, takesSignal) {
  let signal;
  const args = toWireJson(
    query === undefined ? {} : query,
    (value, path) => {
      if (!takesSignal || path.length !== 1 || path[0] !== 'signal' || !(value instanceof AbortSignal)) return undefined;
      signal = value;
      return JSON.stringify({ [HOST_KEY]: 'signal' });
    },
    ARGUMENTS,
  );
  return [args, signal];
}

module.exports = { POOL_VERBS, TIMED_OUT, CANCELLED, CLOSED, thrownFields, bounded, closedError, runHost, wireQuery };
