// The `mcpServers` entry docs/tools-and-mcp.md gives MCP clients (and the MCP inspector's
// `--config mcp.json --server NAME`) starts a server that a client connects to, as written.
import test from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { repoRoot } from './helpers.mjs';

/** The `mcpServers` JSON block of the page's "Connecting a client" section. */
function documentedEntry() {
  const page = readFileSync(path.join(repoRoot, 'docs', 'tools-and-mcp.md'), 'utf8');
  const section = page.slice(page.indexOf('### Connecting a client'));
  const block = /^```json\n([\s\S]*?)^```$/m.exec(section);
  assert.ok(block, 'the section shows an mcpServers entry');
  const { mcpServers } = JSON.parse(block[1]);
  const [[name, entry]] = Object.entries(mcpServers);
  return { name, entry };
}

test('the documented mcpServers entry starts a server the MCP SDK client connects to, in a project init made', async () => {
  const { name, entry } = documentedEntry();
  assert.equal(name, 'capabilities');
  // A project that installed the package, as npm links it, and ran `capability-graph init`.
  const dir = mkdtempSync(path.join(tmpdir(), 'cg-mcp-client-'));
  try {
    mkdirSync(path.join(dir, 'node_modules', '@devcodex'), { recursive: true });
    mkdirSync(path.join(dir, 'node_modules', '.bin'));
    symlinkSync(repoRoot, path.join(dir, 'node_modules', '@devcodex', 'capability-graph'), 'dir');
    symlinkSync(path.join('..', '@devcodex', 'capability-graph', 'bin', 'capability-graph.cjs'), path.join(dir, 'node_modules', '.bin', 'capability-graph'));
    const init = spawnSync(path.join(dir, 'node_modules', '.bin', 'capability-graph'), ['init', 'my-provider'], { cwd: dir, encoding: 'utf8' });
    assert.equal(init.status, 0, init.stderr);

    const transport = new StdioClientTransport({ command: entry.command, args: entry.args, cwd: dir, stderr: 'pipe' });
    const client = new Client({ name: 'mcp-clients-test', version: '1.0.0' });
    try {
      await client.connect(transport);
      const { tools } = await client.listTools();
      assert.ok(tools.some((t) => t.name === 'list_providers'), tools.map((t) => t.name).join(', '));
      const listed = await client.callTool({ name: 'list_providers', arguments: {} });
      assert.notEqual(listed.isError, true);
      assert.deepEqual(listed.structuredContent.items.map((p) => p.providerId), ['my-provider']);
    } finally {
      await client.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
