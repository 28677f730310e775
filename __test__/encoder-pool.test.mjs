// The first-party encoder runs on the engine's fixed pool fed by a bounded queue (SPEC D26): no
// `match` starts a thread, a full queue fails a call at once (CG_MODEL_UNAVAILABLE / retry,
// encoder_busy), and close() settles every call. Bounds are asserted as threads alive and calls
// answered, never as time.
import test from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { CapabilityGraph, GraphError, semanticExecutor } from '@devcodex/capability-graph';
import { needsModel, seedSource } from './helpers.mjs';

/** The threads of this process, by name. */
function threads() {
  return readdirSync('/proc/self/task').map((tid) => {
    try {
      return readFileSync(`/proc/self/task/${tid}/comm`, 'utf8').trim();
    } catch {
      return '';
    }
  });
}

const BURST = 2_000;
const QUEUE = 16;
// The engine's pool: one thread per core the process may use, at most 16.
const POOL = Math.min(availableParallelism(), 16);
// Threads that may start besides: a memory trim, a libuv or V8 helper.
const SLACK = 4;

const open = () =>
  CapabilityGraph.open({ providers: [seedSource()], executor: semanticExecutor(), budgets: { match: { maxQueued: QUEUE } } });

/** Starts `n` matches; resolves their outcomes and the most threads seen while they ran. */
async function burst(g, n, during = () => {}) {
  let most = threads().length;
  const sample = () => {
    most = Math.max(most, threads().length);
  };
  const timer = setInterval(sample, 5);
  let settled = 0;
  const calls = Array.from({ length: n }, (_, i) =>
    g.match({ intent: i % 2 ? 'add a route to the http server' : 'read a configuration file' }).finally(() => {
      if (++settled % 50 === 0) sample();
    }),
  );
  await during();
  const outcomes = await Promise.allSettled(calls);
  clearInterval(timer);
  sample();
  return { outcomes, most };
}

const isBusy = (o) => o.status === 'rejected' && o.reason instanceof GraphError && o.reason.code === 'CG_MODEL_UNAVAILABLE' && o.reason.phase === 'match' && o.reason.nextAction === 'retry' && o.reason.details?.reason === 'encoder_busy';

test(`${BURST} concurrent semantic matches run on the fixed pool: threads stay bounded, every call is answered or refused as busy`, { skip: needsModel }, async () => {
  const g = await open();
  try {
    // The pool starts with the first call (and loads the encoder); what runs after is counted.
    assert.equal((await g.match({ intent: 'add a route' })).status, 'matched');
    const before = threads();
    const pool = before.filter((name) => name.startsWith('cg-engine-')).length;
    assert.ok(pool >= 1 && pool <= POOL, `pool threads: ${pool}`);
    const { outcomes, most } = await burst(g, BURST);
    assert.ok(most <= before.length + SLACK, `threads: ${before.length} before, at most ${most} during`);
    assert.equal(threads().filter((name) => name.startsWith('cg-engine-')).length, pool, 'the pool never grows');
    const answered = outcomes.filter((o) => o.status === 'fulfilled').length;
    const busy = outcomes.filter(isBusy).length;
    assert.equal(answered + busy, BURST, JSON.stringify(outcomes.find((o) => !isBusy(o) && o.status === 'rejected')?.reason));
    assert.ok(answered >= QUEUE, `answered ${answered}`);
    // A refused call was refused at once: the pool has room again afterwards.
    assert.equal((await g.match({ intent: 'add a route' })).status, 'matched');
  } finally {
    await g.close();
  }
});

test('close() during a burst of semantic matches settles every call', { skip: needsModel }, async () => {
  const g = await open();
  await g.match({ intent: 'add a route' });
  const before = threads().length;
  const { outcomes, most } = await burst(g, BURST, async () => {
    await new Promise((resolve) => setImmediate(resolve));
    await g.close();
  });
  assert.ok(most <= before + SLACK, `threads: ${before} before, at most ${most} during`);
  const closed = outcomes.filter((o) => o.status === 'rejected' && o.reason?.code === 'CG_GRAPH_CLOSED').length;
  const other = outcomes.filter((o) => !(o.status === 'fulfilled' || isBusy(o) || o.reason?.code === 'CG_GRAPH_CLOSED'));
  assert.deepEqual(other, []);
  assert.ok(closed > 0, 'calls in flight at close() end CG_GRAPH_CLOSED');
});
