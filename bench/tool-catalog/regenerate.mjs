#!/usr/bin/env node
// Regenerates catalog.json, SOURCES.md and LICENSES/ from the pinned MCP servers in servers.json.
//
//   node bench/tool-catalog/regenerate.mjs            install what is missing, list, rewrite
//   node bench/tool-catalog/regenerate.mjs --check    list and compare with the committed files
//   node bench/tool-catalog/regenerate.mjs --relock   re-resolve npm locks and pip constraints
//
// Each server is installed into its own folder under the cache (CG_MCP_CATALOG_CACHE, default
// ~/.cache/capability-graph/mcp-catalog): npm packages from the committed lock in locks/, PyPI
// packages into a private venv under the committed constraints in constraints/. Each is then
// started with dummy credentials and an empty HOME and asked for `tools/list` through the MCP
// SDK's client over stdio; the tools are kept exactly as the server sent them. A server that
// cannot answer without a live backend is read from its package source by a named extractor.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import vm from 'node:vm';

const here = path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(import.meta.url);
const { Client } = require('@modelcontextprotocol/sdk/client/index.js');
const { StdioClientTransport } = require('@modelcontextprotocol/sdk/client/stdio.js');
// The SDK's own zod, so that the loose result schema below matches the SDK's parser.
const z = createRequire(require.resolve('@modelcontextprotocol/sdk/package.json'))('zod');

const LIST_TIMEOUT_MS = 90_000;
const args = process.argv.slice(2);
const check = args.includes('--check');
const relock = args.includes('--relock');
const cache = process.env.CG_MCP_CATALOG_CACHE || path.join(os.homedir(), '.cache', 'capability-graph', 'mcp-catalog');
const pins = JSON.parse(fs.readFileSync(path.join(here, 'servers.json'), 'utf8'));

function run(cmd, cmdArgs, cwd) {
  try {
    return execFileSync(cmd, cmdArgs, { cwd, stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8', maxBuffer: 64 << 20 });
  } catch (e) {
    throw new Error(`${cmd} ${cmdArgs.join(' ')} failed:\n${String(e.stderr || e.message).slice(-2000)}`);
  }
}

const sha = (text) => createHash('sha256').update(text).digest('hex');
const readIf = (file) => (fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : null);

// A stamp in the install folder names what was installed, so a second run skips the install.
function installed(dir, stamp) {
  return readIf(path.join(dir, '.catalog-stamp')) === stamp;
}

function installNpm(s) {
  const dir = path.join(cache, 'npm', s.id);
  const lockFile = path.join(here, 'locks', `${s.id}.json`);
  const manifest = `${JSON.stringify({ private: true, dependencies: { [s.package]: s.version } }, null, 2)}\n`;
  const lock = relock ? null : readIf(lockFile);
  const stamp = sha(manifest + (lock ?? ''));
  if (lock !== null && installed(dir, stamp)) return dir;
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'package.json'), manifest);
  const flags = ['--ignore-scripts', '--no-audit', '--no-fund', '--loglevel=error'];
  if (lock !== null) {
    fs.writeFileSync(path.join(dir, 'package-lock.json'), lock);
    run('npm', ['ci', ...flags], dir);
  } else {
    run('npm', ['install', ...flags], dir);
    fs.mkdirSync(path.dirname(lockFile), { recursive: true });
    fs.copyFileSync(path.join(dir, 'package-lock.json'), lockFile);
  }
  fs.writeFileSync(path.join(dir, '.catalog-stamp'), sha(manifest + fs.readFileSync(lockFile, 'utf8')));
  return dir;
}

function installPypi(s) {
  const dir = path.join(cache, 'venv', s.id);
  const constraintsFile = path.join(here, 'constraints', `${s.id}.txt`);
  const requirements = [`${s.package}==${s.version}`, ...(s.extraRequirements ?? [])];
  const constraints = relock ? null : readIf(constraintsFile);
  const stamp = sha(requirements.join('\n') + (constraints ?? ''));
  if (constraints !== null && installed(dir, stamp)) return dir;
  fs.rmSync(dir, { recursive: true, force: true });
  run('python3', ['-m', 'venv', dir]);
  const pip = [path.join(dir, 'bin', 'pip'), ['install', '--quiet', '--disable-pip-version-check']];
  if (constraints !== null) run(pip[0], [...pip[1], '-c', constraintsFile, ...requirements]);
  else {
    run(pip[0], [...pip[1], ...requirements]);
    const frozen = run(pip[0], ['freeze', '--disable-pip-version-check']);
    fs.mkdirSync(path.dirname(constraintsFile), { recursive: true });
    fs.writeFileSync(constraintsFile, frozen);
  }
  fs.writeFileSync(path.join(dir, '.catalog-stamp'), sha(requirements.join('\n') + fs.readFileSync(constraintsFile, 'utf8')));
  return dir;
}

function npmPackageDir(s, dir) {
  return path.join(dir, 'node_modules', ...s.package.split('/'));
}

function pypiDistInfo(s, dir) {
  const lib = path.join(dir, 'lib');
  const site = path.join(lib, fs.readdirSync(lib).find((d) => d.startsWith('python')), 'site-packages');
  const stem = `${s.package.replace(/[-.]/g, '_')}-${s.version}.dist-info`;
  return path.join(site, fs.readdirSync(site).find((d) => d.toLowerCase() === stem.toLowerCase()));
}

// The published metadata of the installed package: description, homepage and repository.
function packageMetadata(s, dir) {
  if (s.registry === 'npm') {
    const pj = JSON.parse(fs.readFileSync(path.join(npmPackageDir(s, dir), 'package.json'), 'utf8'));
    const repo = typeof pj.repository === 'string' ? pj.repository : pj.repository?.url;
    return { summary: pj.description ?? null, homepage: pj.homepage ?? null, repository: repo ?? null, licenceField: pj.license ?? null };
  }
  const meta = fs.readFileSync(path.join(pypiDistInfo(s, dir), 'METADATA'), 'utf8').split(/\n\n/)[0];
  const field = (name) => meta.split('\n').filter((l) => l.startsWith(`${name}: `)).map((l) => l.slice(name.length + 2));
  const urls = field('Project-URL');
  return {
    summary: field('Summary')[0] ?? null,
    homepage: field('Home-page')[0] ?? urls.find((u) => /^homepage,/i.test(u))?.replace(/^[^,]*,\s*/, '') ?? null,
    repository: urls.find((u) => /^(repository|source)/i.test(u))?.replace(/^[^,]*,\s*/, '') ?? null,
    licenceField: field('License')[0] ?? field('License-Expression')[0] ?? null,
  };
}

function substitute(value, work) {
  return value.replaceAll('{work}', work);
}

async function listOverStdio(s, dir) {
  const work = path.join(cache, 'work', s.id);
  fs.rmSync(work, { recursive: true, force: true });
  fs.mkdirSync(path.join(work, 'home'), { recursive: true });
  const start = s.start;
  const command = s.registry === 'npm' ? process.execPath : path.join(dir, 'bin', start.script);
  const cmdArgs = [...(s.registry === 'npm' ? [path.join(npmPackageDir(s, dir), start.entry)] : []), ...start.args.map((a) => substitute(a, work))];
  const env = { PATH: process.env.PATH, HOME: path.join(work, 'home') };
  // Some Python servers join sets into published text (mcp-atlassian's default field lists);
  // a fixed hash seed makes that order the same on every run.
  if (s.registry === 'pypi') env.PYTHONHASHSEED = '0';
  for (const [k, v] of Object.entries(start.env)) env[k] = substitute(v, work);
  const transport = new StdioClientTransport({ command, args: cmdArgs, env, cwd: work, stderr: 'pipe' });
  let stderr = '';
  transport.stderr?.on('data', (d) => { stderr = (stderr + d).slice(-4000); });
  const client = new Client({ name: 'capability-graph-tool-catalog', version: '1.0.0' });
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no tool list within ${LIST_TIMEOUT_MS / 1000}s`)), LIST_TIMEOUT_MS);
  });
  try {
    return await Promise.race([timeout, (async () => {
      await client.connect(transport);
      // The tools exactly as they came over the wire: the SDK's result schema would reject
      // servers whose schemas stray from the spec (they are kept as published).
      const pages = [];
      const deliver = transport.onmessage;
      transport.onmessage = (message, extra) => {
        if (message?.result && Array.isArray(message.result.tools)) pages.push(message.result);
        deliver(message, extra);
      };
      let cursor;
      do {
        const page = await client.request({ method: 'tools/list', params: cursor ? { cursor } : {} }, z.looseObject({}));
        cursor = page.nextCursor;
      } while (cursor);
      const info = client.getServerVersion() ?? {};
      const serverInfo = { name: info.name };
      if (info.title !== undefined) serverInfo.title = info.title;
      serverInfo.version = info.version;
      return { serverInfo, tools: pages.flatMap((p) => p.tools), work };
    })()]);
  } catch (e) {
    throw new Error(`${s.id}: ${e.message}\n${stderr}`);
  } finally {
    clearTimeout(timer);
    await client.close().catch(() => {});
  }
}

// Extractors for servers read from source, each named in servers.json.
const extractors = {
  // The array literal after `tools:` in the handler registered for ListToolsRequestSchema,
  // evaluated alone in an empty context: it must be a plain literal (no identifiers).
  'list-tools-array-literal'(text) {
    const handler = text.indexOf('setRequestHandler(ListToolsRequestSchema');
    if (handler < 0) throw new Error('no ListToolsRequestSchema handler');
    const open = text.indexOf('[', text.indexOf('tools:', handler));
    let depth = 0;
    let quote = null;
    for (let i = open; i < text.length; i += 1) {
      const c = text[i];
      if (quote) {
        if (c === '\\') i += 1;
        else if (c === quote) quote = null;
      } else if (c === '"' || c === "'" || c === '`') quote = c;
      else if (c === '[' || c === '{') depth += 1;
      else if (c === ']' || c === '}') {
        depth -= 1;
        if (depth === 0) return vm.runInNewContext(`(${text.slice(open, i + 1)})`, Object.create(null), { timeout: 1000 });
      }
    }
    throw new Error('unterminated tools array');
  },
};

function readFromSource(s, dir) {
  const text = fs.readFileSync(path.join(npmPackageDir(s, dir), s.source.file), 'utf8');
  return { tools: JSON.parse(JSON.stringify(extractors[s.source.extractor](text))) };
}

// Fixed key order; every value is kept as published.
function publishedTool(t) {
  const out = { name: t.name };
  if (t.title !== undefined) out.title = t.title;
  if (t.description !== undefined) out.description = t.description;
  out.inputSchema = t.inputSchema;
  if (t.annotations !== undefined) out.annotations = t.annotations;
  return out;
}

function licenceText(s, dirs) {
  const fileOf = (server, dir) => (server.registry === 'npm'
    ? path.join(npmPackageDir(server, dir), server.licenceFile)
    : path.join(pypiDistInfo(server, dir), 'licenses', server.licenceFile));
  if (s.licenceFile) return fs.readFileSync(fileOf(s, dirs[s.id]), 'utf8');
  const head = `${s.package} ${s.version} (${s.licence}). ${s.note}\n`;
  if (!s.licenceFrom) return head;
  const from = pins.servers.find((x) => x.id === s.licenceFrom);
  return `${head}\n${fs.readFileSync(fileOf(from, dirs[from.id]), 'utf8')}`;
}

function sourcesMarkdown(entries) {
  const total = entries.reduce((n, e) => n + e.server.tools.length, 0);
  const kb = (n) => `${(n / 1024).toFixed(1)} KB`;
  const lines = [
    '# Sources of the tool catalog',
    '',
    `${entries.length} MCP servers, ${total} tools, generated by \`regenerate.mjs\` from the pins in \`servers.json\`.`,
    'Each row: the package and exact version installed, its licence as checked in the installed package,',
    'its homepage or repository as its package metadata gives it, how its tools were listed, the tool',
    'count, and the size of its input schemas as JSON (largest single schema in brackets).',
    'Licence texts and notices: `LICENSES/<id>.txt`.',
    '',
    '| id | package | version | licence | homepage / repository | listed | tools | schemas |',
    '| --- | --- | --- | --- | --- | --- | ---: | ---: |',
  ];
  for (const { pin, server, meta } of entries) {
    const sizes = server.tools.map((t) => JSON.stringify(t.inputSchema ?? null).length);
    const where = [meta.homepage, meta.repository].filter((u, i, all) => u && all.indexOf(u) === i).join(' <br> ') || '(none in metadata)';
    const listed = server.listedFrom === 'source' ? `source: \`${pin.source.file}\`` : 'tools/list';
    lines.push(`| ${server.id} | \`${server.package}\` (${server.registry}) | ${server.version} | ${server.licence} | ${where} | ${listed} | ${server.tools.length} | ${kb(sizes.reduce((a, b) => a + b, 0))} (${kb(Math.max(...sizes))}) |`);
  }
  lines.push(`| **total** | | | | | | **${total}** | |`, '', '## Notes per server', '');
  for (const { pin } of entries) {
    const how = pin.source
      ? `read from \`${pin.source.file}\` by the \`${pin.source.extractor}\` extractor: ${pin.source.why}`
      : `started as \`${[pin.registry === 'npm' ? `node ${pin.start.entry}` : pin.start.script, ...pin.start.args].join(' ')}\`${Object.keys(pin.start.env).length ? ` with ${Object.entries(pin.start.env).map(([k, v]) => `\`${k}=${v}\``).join(', ')}` : ''}`;
    lines.push(`- **${pin.id}**: ${how}. Name from the ${pin.nameFrom}, description from the ${pin.descriptionFrom}.${pin.note ? ` ${pin.note}` : ''}`);
  }
  const large = entries.flatMap(({ server }) => server.tools
    .filter((t) => JSON.stringify(t.inputSchema ?? null).length > 8192)
    .map((t) => `\`${server.id}/${t.name}\` (${kb(JSON.stringify(t.inputSchema).length)})`));
  if (large.length) lines.push('', `Input schemas over 8 KB, kept as published: ${large.join(', ')}.`);
  lines.push('', '## Candidates left out', '');
  for (const x of pins.excluded ?? []) lines.push(`- \`${x.package}\` (${x.registry} ${x.version}): ${x.why}`);
  lines.push('');
  return lines.join('\n');
}

async function main() {
  const entries = [];
  const dirs = {};
  for (const pin of [...pins.servers].sort((a, b) => (a.id < b.id ? -1 : 1))) {
    const dir = pin.registry === 'npm' ? installNpm(pin) : installPypi(pin);
    dirs[pin.id] = dir;
    const meta = packageMetadata(pin, dir);
    const listed = pin.source ? readFromSource(pin, dir) : await listOverStdio(pin, dir);
    const tools = listed.tools.map(publishedTool);
    const names = new Set(tools.map((t) => t.name));
    if (names.size !== tools.length) throw new Error(`${pin.id}: tool names repeat`);
    if (tools.length === 0) throw new Error(`${pin.id}: no tools listed`);
    const description = pin.description ?? meta.summary;
    if (/metadata|summary|package\.json/i.test(pin.descriptionFrom) && description !== meta.summary) {
      throw new Error(`${pin.id}: description in servers.json no longer matches the package's (${meta.summary})`);
    }
    const server = {
      id: pin.id,
      name: pin.name,
      description,
      package: pin.package,
      registry: pin.registry,
      version: pin.version,
      licence: pin.licence,
      listedFrom: pin.source ? 'source' : 'tools/list',
    };
    if (listed.serverInfo) server.serverInfo = listed.serverInfo;
    server.tools = tools;
    const text = JSON.stringify(server);
    for (const leak of [cache, os.homedir(), listed.work].filter(Boolean)) {
      if (text.includes(leak)) throw new Error(`${pin.id}: the listing names a local path (${leak})`);
    }
    entries.push({ pin, server, meta });
    process.stderr.write(`${pin.id}: ${tools.length} tools (${server.listedFrom})\n`);
  }
  const outputs = new Map();
  outputs.set(path.join(here, 'catalog.json'), `${JSON.stringify({ servers: entries.map((e) => e.server) }, null, 2)}\n`);
  outputs.set(path.join(here, 'SOURCES.md'), sourcesMarkdown(entries));
  for (const { pin } of entries) outputs.set(path.join(here, 'LICENSES', `${pin.id}.txt`), licenceText(pin, dirs));
  let differs = 0;
  for (const [file, text] of outputs) {
    if (check) {
      if (readIf(file) !== text) { differs += 1; process.stderr.write(`differs: ${path.relative(here, file)}\n`); }
    } else {
      fs.mkdirSync(path.dirname(file), { recursive: true });
      fs.writeFileSync(file, text);
    }
  }
  const total = entries.reduce((n, e) => n + e.server.tools.length, 0);
  process.stderr.write(`${entries.length} servers, ${total} tools${check ? (differs ? `; ${differs} file(s) differ` : '; committed files match') : ''}\n`);
  if (differs) process.exitCode = 1;
}

main().catch((e) => {
  process.stderr.write(`${e.message}\n`);
  process.exitCode = 1;
});
