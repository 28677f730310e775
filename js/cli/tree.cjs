'use strict';
// Changing a tree for init and migrate: everything in the way is found before anything is
// written, and a step that fails undoes every step before it.

const fs = require('node:fs');
const path = require('node:path');
const { GraphError } = require('../errors.cjs');
const { native } = require('../engine/native.cjs');
const { describe } = require('./output.cjs');

const text = (content) => (typeof content === 'string' ? content : JSON.stringify(content, null, 2) + '\n');

/** A path for people: relative to the current directory, `/`-separated. */
const shown = (file) => path.relative(process.cwd(), file).split(path.sep).join('/') || '.';

/**
 * What stands in the way of creating `file` (absolute) beneath `base`: an ancestor that is not a
 * folder, or `file` itself when it exists — unless it is a regular file and `replace` is set.
 * Beneath `base` a symbolic link is in the way too; up to `base` links are the host's own
 * (`/tmp` may be one). `{ at, what }` or undefined.
 */
function obstacle(file, base, replace = false) {
  const { root } = path.parse(file);
  const parts = file.slice(root.length).split(path.sep).filter(Boolean);
  for (let i = 1; i <= parts.length; i++) {
    const at = path.join(root, ...parts.slice(0, i));
    const beneath = at.startsWith(base + path.sep);
    let stat;
    try {
      stat = beneath ? fs.lstatSync(at) : fs.statSync(at);
    } catch (error) {
      if (error?.code === 'ENOENT') return undefined; // nothing beneath exists either
      return { at, what: 'cannot be checked' };
    }
    if (i < parts.length) {
      if (!stat.isDirectory()) return { at, what: 'is not a folder' };
    } else if (!(replace && stat.isFile())) {
      return { at, what: stat.isFile() ? 'exists' : 'is not a regular file' };
    }
  }
  return undefined;
}

/** A file-system condition as a catalog error: the tree cannot be changed (check_config), or the
 *  machine is short of something for now (retry). `file` as people see it. */
function treeError(error, file) {
  const errno = typeof error?.errno === 'number' && process.platform !== 'win32' ? -error.errno : undefined;
  const transient = errno !== undefined && native.osErrorIsTransient(errno);
  const reason = transient ? 'temporarily_unwritable' : ['EACCES', 'EPERM', 'EROFS'].includes(error?.code) ? 'not_writable' : ['ENOSPC', 'EDQUOT'].includes(error?.code) ? 'no_space' : 'unwritable';
  return new GraphError({ code: 'CG_CONFIG_INVALID', phase: 'load', nextAction: transient ? 'retry' : 'check_config', details: { file, reason } });
}

/** Steps on the file system, each with its undo; `undo()` reverts them newest first. */
class Changes {
  #undo = [];

  /** Creates the missing folders down to `dir`, top first. */
  mkdirs(dir) {
    const missing = [];
    for (let d = dir; !fs.existsSync(d); d = path.dirname(d)) missing.unshift(d);
    for (const d of missing) {
      fs.mkdirSync(d);
      this.#undo.push(() => fs.rmdirSync(d));
    }
  }

  rename(from, to) {
    fs.renameSync(from, to);
    this.#undo.push(() => fs.renameSync(to, from));
  }

  /** Writes `content` to a new file beside `file`, to be renamed into place; returns its name. */
  stage(file, content) {
    this.mkdirs(path.dirname(file));
    const temp = path.join(path.dirname(file), `.${path.basename(file)}.${process.pid}.tmp`);
    this.#undo.push(() => fs.rmSync(temp, { force: true }));
    fs.writeFileSync(temp, content, { flag: 'wx' });
    return temp;
  }

  /** Puts a staged file in place; a file already there is moved aside (listed in `kept`, for
   *  the caller to delete once every step has succeeded). */
  place(temp, file, kept) {
    if (fs.existsSync(file)) {
      const aside = `${temp}.old`;
      this.rename(file, aside);
      kept.push(aside);
    }
    this.rename(temp, file);
  }

  /** Reverts every step; returns how many could not be undone. */
  undo() {
    const stuck = [];
    for (const step of this.#undo.reverse()) {
      try {
        step();
      } catch {
        stuck.push(step);
      }
    }
    this.#undo = [];
    return stuck.length;
  }
}

/** The report of a change that failed part way and was undone (or could not be, in part). */
function failedWrite(error, stuck) {
  return {
    status: 'failed',
    checks: [
      { id: 'write', status: 'fail', message: describe(error) },
      stuck === 0
        ? { id: 'rollback', status: 'pass', message: 'nothing changed: every file is where it was' }
        : { id: 'rollback', status: 'fail', message: `${stuck} step(s) could not be undone: compare the tree with the planned moves` },
    ],
    warnings: [],
  };
}

module.exports = { text, shown, obstacle, treeError, Changes, failedWrite };
