// The README and docs/ are read on GitHub and in a clone: every relative link between them must
// reach a file that exists, and a link with an anchor a heading of that file.
import test from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { repoRoot } from './helpers.mjs';

const PAGES = ['README.md', ...fs.readdirSync(path.join(repoRoot, 'docs')).filter((f) => f.endsWith('.md')).sort().map((f) => `docs/${f}`)];

/** The text outside fenced blocks and inline code, where a link is a link. */
function prose(text) {
  return text.replace(/^```[\s\S]*?^```$/gm, (block) => block.replace(/[^\n]/g, ' ')).replace(/`[^`\n]*`/g, (code) => ' '.repeat(code.length));
}

/** Anchors GitHub gives a page's headings: lower case, punctuation dropped, spaces as hyphens, repeats numbered. */
function anchors(text) {
  const seen = new Map();
  const out = new Set();
  for (const m of prose(text).matchAll(/^#{1,6} (.+)$/gm)) {
    const original = text.slice(m.index).split('\n')[0].replace(/^#{1,6} /, '');
    const slug = original
      .trim()
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const n = seen.get(slug) ?? 0;
    seen.set(slug, n + 1);
    out.add(n ? `${slug}-${n}` : slug);
  }
  return out;
}

function links(page) {
  const text = fs.readFileSync(path.join(repoRoot, page), 'utf8');
  const found = [];
  const body = prose(text);
  for (const m of body.matchAll(/\]\(([^)\s]+)\)/g)) {
    found.push({ target: m[1], line: body.slice(0, m.index).split('\n').length });
  }
  return found;
}

test('every relative link in the README and docs/ reaches a file, and its anchor a heading there', () => {
  assert.ok(PAGES.includes('docs/README.md'), 'docs/ has an index');
  const broken = [];
  let checked = 0;
  for (const page of PAGES) {
    for (const { target, line } of links(page)) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto: — not the repository's
      checked++;
      const [file, anchor] = target.split('#');
      const resolved = file ? path.join(path.dirname(path.join(repoRoot, page)), decodeURIComponent(file)) : path.join(repoRoot, page);
      if (!fs.existsSync(resolved)) {
        broken.push(`${page}:${line}: ${target} (no such file)`);
        continue;
      }
      if (anchor !== undefined && !(resolved.endsWith('.md') && anchors(fs.readFileSync(resolved, 'utf8')).has(anchor))) {
        broken.push(`${page}:${line}: ${target} (no such heading)`);
      }
    }
  }
  assert.ok(checked >= 20, `${checked} links checked`);
  assert.deepEqual(broken, []);
});

test('every docs/ page is linked from the docs index and from the README', () => {
  const index = links('docs/README.md').map((l) => l.target.split('#')[0]);
  const readme = links('README.md').map((l) => l.target.split('#')[0]);
  for (const page of PAGES.filter((p) => p.startsWith('docs/') && p !== 'docs/README.md')) {
    assert.ok(index.includes(path.basename(page)), `docs/README.md links ${page}`);
    assert.ok(readme.includes(page), `README.md links ${page}`);
  }
});
