'use strict';
// Keeps the watches of watched providers subscribed. A watch says "this provider may have
// changed" (the graph then reloads it); nothing here reads or judges definitions. Nothing here
// keeps the process alive: file watchers are not persistent and every timer is unref'd.

const fs = require('node:fs');
const path = require('node:path');

/** Resolves after `ms`, or as soon as `signal` aborts. */
function pause(ms, signal) {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    timer.unref();
    signal.addEventListener('abort', done, { once: true });
  });
}

/**
 * Keeps one watch subscribed until `signal` aborts. `subscribe(notify, own)` listens and
 * settles when the watch ends; a watch that ends before `signal` aborts, or throws, is lost:
 * `lost()` is told (never what was thrown) and it is subscribed again after a wait of
 * `timings.retryInitialMs`, doubled after each loss up to `timings.retryMaxMs`, of which a
 * random `timings.jitter` share may be cut. Every `notify()` is `changed()`; the first of a
 * subscription also means it listens, so the wait starts over.
 */
async function keepSubscribed(subscribe, { changed, lost, timings, signal }) {
  let wait = timings.retryInitialMs;
  while (!signal.aborted) {
    const own = new AbortController();
    const stop = () => own.abort();
    signal.addEventListener('abort', stop, { once: true });
    let listening = false;
    const notify = () => {
      if (own.signal.aborted) return;
      if (!listening) {
        listening = true;
        wait = timings.retryInitialMs;
      }
      changed();
    };
    try {
      await Promise.resolve().then(() => subscribe(notify, own.signal));
    } catch {
      // A lost watch: reported below, without what it threw (it could name hosts or paths).
    }
    signal.removeEventListener('abort', stop);
    own.abort();
    if (signal.aborted) return;
    lost();
    await pause(wait * (1 - timings.jitter * Math.random()), signal);
    wait = Math.min(wait * 2, timings.retryMaxMs);
  }
}

/** Folders one fallback watch follows at most (one watcher each). */
const MAX_FALLBACK_FOLDERS = 4096;

/**
 * The subscription of a file provider's root: a file-system watch of the whole tree (`fs.watch`
 * recursive; where the platform has no recursive watch, one watcher per folder, added as
 * folders appear). A change is reported once the tree has been quiet for `debounceMs`, so an
 * editor's save (several events) is one change. The watch is lost when the root can no longer
 * be watched or found.
 */
function watchFiles(rootDir, debounceMs) {
  return (notify, signal) =>
    new Promise((resolve, reject) => {
      const watchers = new Map();
      let timer;
      let ended = false;
      const end = (error) => {
        if (ended) return;
        ended = true;
        clearTimeout(timer);
        signal.removeEventListener('abort', onAbort);
        for (const w of watchers.values()) w.close();
        if (error === undefined) resolve();
        else reject(error);
      };
      const onAbort = () => end();
      const settled = () => {
        try {
          if (!fs.statSync(rootDir).isDirectory()) return end(new Error('not a folder'));
        } catch (error) {
          return end(error);
        }
        notify();
      };
      const changed = (folderAdded) => {
        if (ended) return;
        if (folderAdded && !recursive) {
          try {
            follow(rootDir);
          } catch (error) {
            return end(error);
          }
        }
        clearTimeout(timer);
        timer = setTimeout(settled, debounceMs);
        timer.unref();
      };
      const add = (dir, options) => {
        const w = fs.watch(dir, { persistent: false, ...options }, (type) => changed(type === 'rename'));
        w.on('error', (error) => {
          if (dir === rootDir) return end(error);
          // A folder beneath the root went away: its parent's watcher reports that.
          w.close();
          watchers.delete(dir);
        });
        watchers.set(dir, w);
      };
      const follow = (dir) => {
        if (!watchers.has(dir)) {
          if (watchers.size >= MAX_FALLBACK_FOLDERS) throw new Error('too many folders');
          add(dir, {});
        }
        for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
          if (entry.isDirectory()) follow(path.join(dir, entry.name));
        }
      };
      let recursive = true;
      try {
        try {
          add(rootDir, { recursive: true });
        } catch (error) {
          if (error?.code !== 'ERR_FEATURE_UNAVAILABLE_ON_PLATFORM') throw error;
          recursive = false;
          follow(rootDir);
        }
      } catch (error) {
        return end(error);
      }
      signal.addEventListener('abort', onAbort, { once: true });
      // Listening: anything may have changed since the provider was read.
      notify();
    });
}

module.exports = { keepSubscribed, watchFiles };
