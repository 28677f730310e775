'use strict';
// Where `init` points a file's `$schema` (SPEC D31): the package's schema as it resolves from
// the file's folder, found as Node.js finds a package — `node_modules` in that folder and in each
// one above it.

const fs = require('node:fs');
const path = require('node:path');
const { name: PACKAGE } = require('../../package.json');

/** `p`'s stat, or undefined where nothing can be found (missing, a file on the way, no access). */
function statOf(p) {
  try {
    return fs.statSync(p);
  } catch {
    return undefined;
  }
}
const isDirectory = (p) => statOf(p)?.isDirectory() === true;
const isFile = (p) => statOf(p)?.isFile() === true;
const posix = (p) => p.split(path.sep).join('/');

/** `file` (in `folder`) as a relative reference: `./x` or `../x`, `/`-separated. */
function relativeRef(folder, file) {
  const rel = posix(path.relative(folder, file));
  return rel.startsWith('../') ? rel : `./${rel}`;
}

/**
 * The relative path from `folder` to the package's `schema/<name>.json` as the package resolves
 * from there, or undefined when it does not (a global or one-off run, or an installed version
 * without schemas). The path is built from the folders' names, links unfollowed: a package linked
 * into `node_modules` is still reached through `node_modules`.
 */
function schemaRef(folder, name) {
  for (let dir = path.resolve(folder); ; dir = path.dirname(dir)) {
    // Node.js never looks in node_modules/node_modules.
    const root = path.basename(dir) === 'node_modules' ? undefined : path.join(dir, 'node_modules', ...PACKAGE.split('/'));
    if (root !== undefined && isDirectory(root)) {
      const schema = path.join(root, 'schema', `${name}.json`);
      return isFile(schema) ? relativeRef(folder, schema) : undefined;
    }
    if (path.dirname(dir) === dir) return undefined;
  }
}

/** What `schemaRef` would give from `folder` once the package is installed in `project`. */
const installedRef = (folder, name, project) => relativeRef(folder, path.join(project, 'node_modules', ...PACKAGE.split('/'), 'schema', `${name}.json`));

module.exports = { PACKAGE, schemaRef, installedRef };
