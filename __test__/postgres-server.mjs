// A throwaway PostgreSQL cluster for the tests of the database authority example: `initdb` in
// a temporary folder, a Unix socket only (no TCP port), stopped and deleted afterwards.
// Skipped when no PostgreSQL server binaries are installed; CG_REQUIRE_POSTGRES=1 makes that a
// failure instead (CI installs them).
import { after, before } from 'node:test';
import { execFile, execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync, chownSync } from 'node:fs';
import { constants, tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { repoRoot } from './helpers.mjs';

export const schemaSql = readFileSync(path.join(repoRoot, 'examples', 'postgres-authority', 'schema.sql'), 'utf8');

/** The server's bin folder: pg_config's, else the newest Debian/Ubuntu install. */
function findBindir() {
  const candidates = [];
  try {
    candidates.push(execFileSync('pg_config', ['--bindir'], { encoding: 'utf8', timeout: 5_000, stdio: ['ignore', 'pipe', 'ignore'] }).trim());
  } catch {
    // no pg_config on PATH
  }
  if (existsSync('/usr/lib/postgresql')) {
    for (const v of readdirSync('/usr/lib/postgresql').sort((a, b) => Number(b) - Number(a))) candidates.push(`/usr/lib/postgresql/${v}/bin`);
  }
  return candidates.find((d) => existsSync(path.join(d, 'initdb')) && existsSync(path.join(d, 'pg_ctl')));
}

// initdb and postgres refuse to run as root, so as root the server runs as the `postgres` user
// the distribution's package creates.
const asRoot = process.getuid?.() === 0;
const bindir = findBindir();
/** The `skip` option of every test that needs the server: false, or why it cannot run. */
export let skip = false;
if (!bindir) skip = 'no PostgreSQL server binaries (initdb, pg_ctl) found: apt-get install postgresql';
else if (asRoot) {
  try {
    execFileSync('id', ['-u', 'postgres'], { stdio: 'ignore', timeout: 5_000 });
  } catch {
    skip = 'running as root and there is no `postgres` user to run the server as';
  }
}
if (skip && process.env.CG_REQUIRE_POSTGRES === '1') throw new Error(`CG_REQUIRE_POSTGRES=1 but ${skip}`);

/** `dir` is the cluster's folder (its socket's too) while it runs; tests may make folders in it. */
export const server = { dir: null, started: false, pools: [] };
const asServer = (tool, args) => (asRoot ? ['runuser', ['-u', 'postgres', '--', path.join(bindir, tool), ...args]] : [path.join(bindir, tool), args]);
const runServerTool = (tool, args) => promisify(execFile)(...asServer(tool, args), { cwd: server.dir, timeout: 20_000 });

/** Stops the server and removes its folder; synchronous so it also works from an exit handler. */
function teardown() {
  if (server.started) {
    try {
      execFileSync(...asServer('pg_ctl', ['stop', '-D', path.join(server.dir, 'data'), '-m', 'fast', '-w', '-t', '15']), { cwd: server.dir, stdio: 'ignore', timeout: 20_000 });
    } catch {
      // pg_ctl gave up: end the postmaster we started, by its own PID.
      try {
        process.kill(Number(readFileSync(path.join(server.dir, 'data', 'postmaster.pid'), 'utf8').split('\n')[0]), 'SIGKILL');
      } catch {
        // already gone
      }
    }
    server.started = false;
  }
  if (server.dir) rmSync(server.dir, { recursive: true, force: true });
  server.dir = null;
}

/** The settings of a client of the test database (or `database`) over the cluster's socket. */
export const connection = (database = 'cg') => ({ host: server.dir, user: 'postgres', database });

/** A pool of the test database (or `database`), ended after the tests. */
export const pool = (database = 'cg') => {
  // Socket only: the cluster listens on no TCP port at all.
  const p = new pg.Pool({ ...connection(database), max: 2, connectionTimeoutMillis: 5_000 });
  p.on('error', () => {}); // an idle client dropped by the server stop is not a test failure
  server.pools.push(p);
  return p;
};

/** Starts the cluster before this file's tests (its `cg` database holding the schema) and
 *  stops it after them. */
export function usePostgres() {
  // A timed-out or interrupted run must not leave a server behind either.
  process.once('exit', teardown);
  for (const signal of ['SIGINT', 'SIGTERM']) {
    process.once(signal, () => {
      teardown();
      process.exit(128 + constants.signals[signal]);
    });
  }
  before(
    async () => {
      if (skip) return;
      server.dir = mkdtempSync(path.join(tmpdir(), 'cg-pg-'));
      if (asRoot) {
        const [uid, gid] = ['-u', '-g'].map((flag) => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' })));
        chownSync(server.dir, uid, gid);
      }
      const data = path.join(server.dir, 'data');
      await runServerTool('initdb', ['-D', data, '-U', 'postgres', '-A', 'trust', '-E', 'UTF8', '--locale=C', '--no-sync']);
      writeFileSync(
        path.join(data, 'postgresql.conf'),
        `${readFileSync(path.join(data, 'postgresql.conf'), 'utf8')}\nlisten_addresses = ''\nunix_socket_directories = '${server.dir}'\nfsync = off\n`,
      );
      server.started = true; // from here on teardown stops it, even if the start times out
      await runServerTool('pg_ctl', ['start', '-D', data, '-w', '-t', '20', '-l', path.join(server.dir, 'server.log')]);
      const admin = pool('postgres');
      // The test database sorts by a language collation where it can (ICU, PostgreSQL 15+), so
      // the schema's COLLATE "C" is what keeps IDs in the engine's byte order.
      try {
        await admin.query(`CREATE DATABASE cg TEMPLATE template0 LOCALE_PROVIDER icu ICU_LOCALE 'en-US' LOCALE 'C.UTF-8'`);
      } catch {
        await admin.query('CREATE DATABASE cg');
      }
      await pool().query(schemaSql);
    },
    { timeout: 30_000 },
  );
  after(
    async () => {
      await Promise.all(server.pools.map((p) => p.end().catch(() => {})));
      teardown();
    },
    { timeout: 30_000 },
  );
}
