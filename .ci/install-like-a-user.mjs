#!/usr/bin/env node
// Installs the package the way a user does: a release build, packed and published with its
// linux-x64-gnu platform package to a private registry on the loopback interface (Verdaccio;
// `@devcodex/*` served only from it, everything else proxied from the configured registry), then
// installed by npm and by pnpm in clean folders where neither cargo nor this repository can be
// reached. Prints the packed sizes, the installed package count and the time from
// `npm install` to the first answer.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = path.resolve(fileURLToPath(import.meta.url), '../..');
const main = JSON.parse(fs.readFileSync(path.join(repo, 'package.json'), 'utf8'));
const PLATFORM = 'linux-x64-gnu';
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'cg-user-'));
const step = (text) => console.log(`\n== ${text}`);
const seconds = (ms) => `${(ms / 1000).toFixed(1)} s`;

function check(condition, message) {
  if (!condition) throw new Error(`install check failed: ${message}`);
}

function run(command, args, options = {}) {
  const result = spawnSync(command, args, { encoding: 'utf8', ...options });
  if (result.status !== 0 && !options.allowFailure) {
    throw new Error(`${command} ${args.join(' ')} exited ${result.status}\n${result.stdout}\n${result.stderr}`);
  }
  return result;
}

// --- build and pack ----------------------------------------------------------------------------

step('release build');
let started = Date.now();
run('npx', ['napi', 'build', '--platform', '--release', '--js', 'binding.js', '--dts', 'binding.d.ts'], { cwd: repo, stdio: 'inherit' });
console.log(`release build: ${seconds(Date.now() - started)}`);

step('pack');
const packDir = path.join(work, 'pack');
fs.mkdirSync(packDir);
const [mainInfo] = JSON.parse(run('npm', ['pack', '--json', '--pack-destination', packDir], { cwd: repo }).stdout);
const platformDir = path.join(repo, 'npm', PLATFORM);
const binary = `${main.napi.binaryName}.${PLATFORM}.node`;
fs.copyFileSync(path.join(repo, binary), path.join(platformDir, binary));
process.on('exit', () => fs.rmSync(path.join(platformDir, binary), { force: true }));
const [platformInfo] = JSON.parse(run('npm', ['pack', '--json', '--pack-destination', packDir], { cwd: platformDir }).stdout);
console.log(`packed: ${mainInfo.name} ${(mainInfo.size / 1024).toFixed(1)} KB (${mainInfo.entryCount} files), ${platformInfo.name} ${(platformInfo.size / 1024 / 1024).toFixed(2)} MB`);
check(mainInfo.size <= 400 * 1024, `main package packs to ${mainInfo.size} bytes (at most 400 KB)`);
check(platformInfo.size <= 3 * 1024 * 1024, `${PLATFORM} packs to ${platformInfo.size} bytes (at most 3 MB)`);
check(mainInfo.files.every((f) => !f.path.endsWith('.node')), 'no binary in the main package');
check(mainInfo.files.every((f) => !f.path.startsWith('packages/') && !f.path.endsWith('model.bin')), 'no weights in the main package');
// The encoder's weights package, built by `npm run build:model` before this script runs.
const modelDir = path.join(repo, 'packages', 'minilm');
const [modelInfo] = JSON.parse(run('npm', ['pack', '--json', '--pack-destination', packDir], { cwd: modelDir }).stdout);
const modelRecord = JSON.parse(fs.readFileSync(path.join(modelDir, 'model.json'), 'utf8'));
console.log(`packed: ${modelInfo.name} ${(modelInfo.size / 1024 / 1024).toFixed(2)} MB (${modelInfo.entryCount} files, ${(modelInfo.unpackedSize / 1024 / 1024).toFixed(2)} MB unpacked)`);
check(['model.bin', 'vocab.txt', 'model.json', 'LICENSE', 'NOTICE'].every((f) => modelInfo.files.some((e) => e.path === f)), 'the weights package holds its weights, vocabulary, LICENSE and NOTICE');
// The types resolve right for every module system (no --ignore-rules).
run(path.join(repo, 'node_modules', '.bin', 'attw'), [path.join(packDir, mainInfo.filename)], { cwd: repo, stdio: 'inherit' });

// --- the private registry ------------------------------------------------------------------------

const freePort = () =>
  new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });

step('private registry');
const upstream = run('npm', ['config', 'get', 'registry'], { cwd: repo }).stdout.trim();
const port = await freePort();
const registry = `http://127.0.0.1:${port}/`;
const config = path.join(work, 'verdaccio.yaml');
fs.writeFileSync(
  config,
  `storage: ${path.join(work, 'storage')}
auth:
  htpasswd:
    file: ${path.join(work, 'htpasswd')}
    max_users: 10
uplinks:
  upstream:
    url: ${upstream}
    timeout: 60s
packages:
  '@devcodex/*':
    access: $all
    publish: $authenticated
  '**':
    access: $all
    publish: $authenticated
    proxy: upstream
log: { type: stdout, format: pretty, level: warn }
# The weights package publishes ~23 MB (more as the JSON body npm sends).
max_body_size: 200mb
`,
);
const verdaccio = spawn(process.execPath, [path.join(repo, 'node_modules', 'verdaccio', 'bin', 'verdaccio'), '--config', config, '--listen', `127.0.0.1:${port}`], {
  stdio: ['ignore', 'inherit', 'inherit'],
});
const stopRegistry = () => verdaccio.exitCode === null && verdaccio.kill();
process.on('exit', stopRegistry);

for (let i = 0; ; i++) {
  try {
    if ((await fetch(`${registry}-/ping`)).ok) break;
  } catch {}
  check(i < 100 && verdaccio.exitCode === null, 'the registry did not start');
  await new Promise((r) => setTimeout(r, 200));
}
console.log(`registry ${registry} (proxying ${upstream})`);

const login = await fetch(`${registry}-/user/org.couchdb.user:ci`, {
  method: 'PUT',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify({ name: 'ci', password: 'ci-only-password', type: 'user', roles: [] }),
});
const { token } = await login.json();
check(token, 'no registry token');
const publisherRc = path.join(work, 'publisher.npmrc');
fs.writeFileSync(publisherRc, `registry=${registry}\n//127.0.0.1:${port}/:_authToken=${token}\n`);
const publishEnv = { ...process.env, npm_config_userconfig: publisherRc, npm_config_registry: registry };
// The platform package first (its prepublishOnly refuses a debug build), then the main package.
run('npm', ['publish'], { cwd: platformDir, env: publishEnv, stdio: 'inherit' });
run('npm', ['publish', path.join(packDir, mainInfo.filename)], { cwd: packDir, env: publishEnv, stdio: 'inherit' });
run('npm', ['publish', path.join(packDir, modelInfo.filename)], { cwd: packDir, env: publishEnv, stdio: 'inherit' });

// --- a user's clean folder -------------------------------------------------------------------------

const home = path.join(work, 'home');
fs.mkdirSync(home);
fs.writeFileSync(path.join(home, '.npmrc'), `registry=${registry}\n`);
const userEnv = {
  PATH: '/usr/bin:/bin',
  HOME: home,
  LANG: 'C.UTF-8',
  npm_config_userconfig: path.join(home, '.npmrc'),
  npm_config_cache: path.join(work, 'npm-cache'),
  npm_config_registry: registry,
  npm_config_audit: 'false',
  npm_config_fund: 'false',
  npm_config_update_notifier: 'false',
};
check(run('sh', ['-c', 'command -v cargo'], { env: userEnv, allowFailure: true }).status !== 0, 'cargo is on the user PATH');

const fixtures = {
  'error.mjs': fs.readFileSync(path.join(repo, '__test__', 'fixtures', 'error.mjs'), 'utf8'),
  'first.mjs': `import { CapabilityGraph, seedProviderRoot } from '@devcodex/capability-graph';
const graph = await CapabilityGraph.open({ providers: [{ providerId: 'seed.http', authority: { kind: 'file', rootDir: seedProviderRoot, definitionLayout: 'directory' } }] });
const { added } = await graph.resolve({ ids: ['seed.http::route.validation'] });
console.log(JSON.stringify(added));
await graph.close();
`,
};
const ERROR_LINE = '{"code":"CG_CAPABILITY_NOT_FOUND","phase":"query","message":"Requested capability does not exist","nextAction":"refresh"}\n';

function project(name) {
  const dir = path.join(work, name);
  fs.mkdirSync(dir);
  fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name, version: '1.0.0', private: true, type: 'module' }, null, 2));
  for (const [file, text] of Object.entries(fixtures)) fs.writeFileSync(path.join(dir, file), text);
  return dir;
}

const node = (dir, args, options = {}) => run('/usr/bin/node', args, { cwd: dir, env: userEnv, ...options });

function checkInstalled(dir) {
  const resolved = node(dir, ['-p', "require.resolve('@devcodex/capability-graph')"]).stdout.trim();
  check(resolved.startsWith(fs.realpathSync(dir)) && !resolved.startsWith(repo), `the package resolves to ${resolved}`);
  const error = node(dir, ['error.mjs'], { allowFailure: true });
  check(error.status === 1 && error.stdout === '' && error.stderr === ERROR_LINE, `error.mjs: exit ${error.status}, stderr ${JSON.stringify(error.stderr)}`);
  console.log('error.mjs: exit 1, the documented stderr line');
}

/** The weights package installed beside the main one: it resolves inside `dir`, its files match their recorded hashes, and the main package's resolver finds it. */
function checkModelInstalled(dir) {
  const probe = `const crypto = require('node:crypto'), fs = require('node:fs'), path = require('node:path');
const m = require('@devcodex/capability-graph-minilm');
const hash = (f) => crypto.createHash('sha256').update(fs.readFileSync(path.join(m.modelDir, f))).digest('hex');
const r = require(path.join(path.dirname(require.resolve('@devcodex/capability-graph/package.json')), 'js', 'executors', 'model.cjs')).resolveModel();
console.log(JSON.stringify({ dir: fs.realpathSync(m.modelDir), modelId: m.modelId, sha256: m.sha256, bin: hash('model.bin'), vocab: hash('vocab.txt'), resolved: fs.realpathSync(r.dir), resolvedId: r.id }));`;
  const got = JSON.parse(node(dir, ['-e', probe]).stdout);
  check(got.dir.startsWith(fs.realpathSync(dir)) && !got.dir.startsWith(repo), `the weights package resolves to ${got.dir}`);
  check(got.bin === modelRecord.sha256 && got.sha256 === modelRecord.sha256, 'model.bin matches its SHA-256');
  check(got.vocab === modelRecord.vocabSha256, 'vocab.txt matches its SHA-256');
  check(got.modelId === modelRecord.modelId && got.resolvedId === got.modelId && got.resolved === got.dir, 'the main package resolves the weights package');
  console.log(`weights package: ${got.modelId}, files match their SHA-256`);
}

step('npm install in a clean folder');
const app = project('npm-app');
started = Date.now();
run('npm', ['install', '@devcodex/capability-graph'], { cwd: app, env: userEnv });
const first = node(app, ['first.mjs']).stdout.trim();
const firstAnswer = Date.now() - started;
check(first === '["seed.http::schema.request"]', `first answer ${first}`);
console.log(`install to first answer: ${seconds(firstAnswer)}`);
const lock = JSON.parse(fs.readFileSync(path.join(app, 'node_modules', '.package-lock.json'), 'utf8'));
const installed = Object.keys(lock.packages).filter((p) => p !== '');
console.log(`installed packages: ${installed.length} (${installed.map((p) => p.replace(/^node_modules\//, '')).join(', ')})`);
check(installed.length <= 4, `a consumer installs at most 4 packages, got ${installed.length}`);
checkInstalled(app);
started = Date.now();
run('npm', ['install', '@devcodex/capability-graph-minilm'], { cwd: app, env: userEnv });
console.log(`npm install of the weights package: ${seconds(Date.now() - started)}`);
checkModelInstalled(app);

const blockAfter = (page, heading, lang) => {
  const text = fs.readFileSync(path.join(repo, page), 'utf8');
  const at = text.indexOf(heading);
  const m = new RegExp('```' + lang + '\\n([\\s\\S]*?)```').exec(text.slice(at));
  check(at >= 0 && m, `${page}: block after ${heading}`);
  return m[1];
};
fs.writeFileSync(path.join(app, 'tour.mjs'), blockAfter('README.md', '## A tour', 'js'));
node(app, ['tour.mjs']);
console.log('README tour: ran');

const cli = (args, options) => run(path.join(app, 'node_modules', '.bin', 'capability-graph'), args, { cwd: app, env: userEnv, ...options });
check(cli(['--version']).stdout.trim() === main.version, 'capability-graph --version');

fs.writeFileSync(
  path.join(app, 'worker.mjs'),
  `import { Worker } from 'node:worker_threads';
import { CapabilityGraph } from '@devcodex/capability-graph';
const answers = await Promise.all([0, 1].map(() => new Promise((resolve, reject) => {
  const w = new Worker(new URL('./worker-body.mjs', import.meta.url));
  w.once('message', resolve);
  w.once('error', reject);
})));
const here = await CapabilityGraph.open({ providers: [] });
await here.close();
console.log(JSON.stringify(answers));
`,
);
fs.writeFileSync(
  path.join(app, 'worker-body.mjs'),
  `import { parentPort } from 'node:worker_threads';
import { CapabilityGraph, seedProviderRoot } from '@devcodex/capability-graph';
const graph = await CapabilityGraph.open({ providers: [{ providerId: 'seed.http', authority: { kind: 'file', rootDir: seedProviderRoot, definitionLayout: 'directory' } }] });
parentPort.postMessage((await graph.listProviders()).items.map((p) => p.providerId));
await graph.close();
`,
);
check(node(app, ['worker.mjs']).stdout.trim() === '[["seed.http"],["seed.http"]]', 'loading in worker threads');
console.log('worker_threads: two workers and the main thread loaded the engine');

step('strict TypeScript consumer (without the optional MCP SDK)');
run('npm', ['install', '--save-dev', `typescript@${main.devDependencies.typescript.replace(/^\^/, '')}`], { cwd: app, env: userEnv });
fs.copyFileSync(path.join(repo, '__test__', 'types', 'narrowing.mts'), path.join(app, 'consumer.mts'));
fs.writeFileSync(
  path.join(app, 'tsconfig.json'),
  JSON.stringify({ compilerOptions: { module: 'nodenext', moduleResolution: 'nodenext', target: 'es2022', strict: true, noEmit: true, skipLibCheck: false, types: [] }, files: ['consumer.mts'] }),
);
const tsc = node(app, [path.join(app, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', '.'], { allowFailure: true });
check(tsc.status === 0, `tsc --strict: ${tsc.stdout}${tsc.stderr}`);
console.log('tsc --strict (nodenext): clean');

step("the documented CLI block, line by line (with the optional MCP SDK installed)");
run('npm', ['install', '@modelcontextprotocol/sdk'], { cwd: app, env: userEnv });
const cliBlock = blockAfter('docs/cli.md', '# Command line', 'sh');
const lines = cliBlock.split('\n').filter((l) => l.trim() && !l.trim().startsWith('#'));
let vars = '';
for (const line of lines) {
  if (/^[A-Z_]+=/.test(line)) {
    vars += `${line}\n`;
    continue;
  }
  const result = run('bash', ['-ec', `${vars}${line}`], { cwd: app, env: userEnv, input: '', allowFailure: true });
  check(result.status === 0, `\`${line}\` exited ${result.status}: ${result.stderr}`);
  console.log(`ok  ${line.replace(/\s+#.*$/, '')}`);
}
const doctor = JSON.parse(cli(['doctor', '--json']).stdout);
check(doctor.status === 'ok', 'doctor after init');

step("the README's install from packed tarballs (the platform package's tarball, then the main one's)");
const fromTarballs = project('tarball-app');
const tarballInstall = blockAfter('README.md', 'install packed tarballs', 'sh')
  .split('\n')
  .find((l) => l.startsWith('npm install '));
check(tarballInstall, 'the README shows the npm install of the two tarballs');
run('bash', ['-ec', tarballInstall.replaceAll('../capability-graph/', `${packDir}/`)], { cwd: fromTarballs, env: { ...userEnv, VERSION: main.version } });
checkInstalled(fromTarballs);

step('npm install --omit=optional: no binary for this platform');
const bare = project('no-binary');
run('npm', ['install', '--omit=optional', '@devcodex/capability-graph'], { cwd: bare, env: userEnv });
check(run(path.join(bare, 'node_modules', '.bin', 'capability-graph'), ['--version'], { cwd: bare, env: userEnv }).stdout.trim() === main.version, '--version without a binary');
const missing = node(bare, ['--input-type=module', '-e', "import { CapabilityGraph } from '@devcodex/capability-graph'; await CapabilityGraph.open({ providers: [] }).catch((e) => console.log(JSON.stringify(e)));"]).stdout;
const reason = JSON.parse(missing);
check(reason.code === 'CG_CONFIG_INVALID' && reason.nextAction === 'check_config' && reason.details.reason === 'native_binding_missing', missing);
console.log(`without a binary: ${missing.trim()}`);

step('pnpm install in a clean folder');
const tools = path.join(work, 'tools');
fs.cpSync(path.join(repo, 'node_modules', 'pnpm'), path.join(tools, 'pnpm'), { recursive: true });
const pnpmApp = project('pnpm-app');
started = Date.now();
run('/usr/bin/node', [path.join(tools, 'pnpm', 'bin', 'pnpm.cjs'), 'add', '@devcodex/capability-graph'], {
  cwd: pnpmApp,
  env: { ...userEnv, npm_config_store_dir: path.join(work, 'pnpm-store') },
});
const pnpmFirst = node(pnpmApp, ['first.mjs']).stdout.trim();
check(pnpmFirst === '["seed.http::schema.request"]', `pnpm first answer ${pnpmFirst}`);
const pnpmPackages = fs.readdirSync(path.join(pnpmApp, 'node_modules', '.pnpm')).filter((d) => d.includes('@') && d !== 'node_modules');
console.log(`pnpm: install to first answer ${seconds(Date.now() - started)}, ${pnpmPackages.length} packages (${pnpmPackages.join(', ')})`);
check(pnpmPackages.length <= 4, 'pnpm installs at most 4 packages');
checkInstalled(pnpmApp);
run('/usr/bin/node', [path.join(tools, 'pnpm', 'bin', 'pnpm.cjs'), 'add', '@devcodex/capability-graph-minilm'], {
  cwd: pnpmApp,
  env: { ...userEnv, npm_config_store_dir: path.join(work, 'pnpm-store') },
});
checkModelInstalled(pnpmApp);

stopRegistry();
fs.rmSync(work, { recursive: true, force: true });
console.log(`\ninstall like a user: ok (install to first answer ${seconds(firstAnswer)}, ${installed.length} packages)`);
