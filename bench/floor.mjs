// The read floor: the time to find and read every definition file of the given provider
// folders once, without parsing, with as many threads as the engine's file reader uses (one
// per core). The engine cannot open a file provider faster than this.
//
//   node bench/floor.mjs [--legacy] <providerDir>...   → prints { ms, files, bytes } as JSON
//
// Like the engine, the walk lists every `capabilities/` folder first (on this thread), then the
// reader threads each take an equal chunk of the sorted list and read each file's bytes
// (synchronous reads, as the engine's threads do). Timed from the first readdir to the last
// thread's answer, reader threads started beforehand; the page cache is as warm as it is for
// the engine runs beside it.

import { readdirSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';

if (!isMainThread) {
  parentPort.on('message', (files) => {
    let bytes = 0;
    for (const file of files) bytes += readFileSync(file).length;
    parentPort.postMessage(bytes);
    parentPort.close();
  });
  parentPort.postMessage('ready');
} else {
  const legacy = process.argv[2] === '--legacy';
  const dirs = process.argv.slice(legacy ? 3 : 2);
  const threads = os.availableParallelism();
  // Reader threads are started before the clock: the engine's are native and cost microseconds
  // to spawn, a Node.js worker costs tens of milliseconds.
  const workers = await Promise.all(Array.from({ length: threads }, () => new Promise((resolve, reject) => {
    const worker = new Worker(fileURLToPath(import.meta.url));
    worker.once('message', () => resolve(worker));
    worker.once('error', reject);
  })));
  const started = performance.now();
  const files = [];
  for (const dir of dirs) {
    files.push(path.join(dir, 'provider.json'));
    // The legacy layout's definitions may lie anywhere: its reader lists the whole root.
    const listed = legacy ? dir : path.join(dir, 'capabilities');
    for (const entry of readdirSync(listed, { recursive: true, withFileTypes: true })) {
      if (entry.isFile() && (!legacy || entry.name.endsWith('.capability.json'))) files.push(path.join(entry.parentPath, entry.name));
    }
  }
  files.sort();
  const listMs = performance.now() - started;
  const chunk = Math.ceil(files.length / threads);
  const reads = workers.map((worker, t) => new Promise((resolve, reject) => {
    worker.once('message', resolve);
    worker.once('error', reject);
    worker.postMessage(files.slice(t * chunk, (t + 1) * chunk));
  }));
  const bytes = (await Promise.all(reads)).reduce((a, b) => a + b, 0);
  const ms = performance.now() - started;
  process.stdout.write(`${JSON.stringify({ ms, listMs, files: files.length, bytes })}\n`);
}
