// Finding and loading evaluation directories for `swarm compare` and `swarm report`: a path is an
// evaluation directory when it holds summary.json; otherwise its subfolders that hold one are taken,
// in name order (a folder of evaluations). Each evaluation is labelled by its path as given.

import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { ConfigError } from '../../errors.js';
import type { Evaluation } from '../compare.js';
import { readSummary, SUMMARY_FILE_NAME } from '../summary-file.js';

async function isFile(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isFile();
  } catch {
    return false;
  }
}

/** The evaluation directories a list of paths names (each path, or its subfolders holding summary.json). */
export async function findEvaluationDirs(paths: readonly string[]): Promise<string[]> {
  const dirs: string[] = [];
  for (const path of paths) {
    if (await isFile(join(path, SUMMARY_FILE_NAME))) {
      dirs.push(path);
      continue;
    }
    let entries: string[];
    try {
      entries = (await readdir(path, { withFileTypes: true })).filter((entry) => entry.isDirectory()).map((entry) => entry.name);
    } catch (error) {
      throw new ConfigError(`${path}: cannot read it (${(error as Error).message}); expected an evaluation directory written by swarm eval.`);
    }
    const children: string[] = [];
    for (const name of entries.sort()) if (await isFile(join(path, name, SUMMARY_FILE_NAME))) children.push(join(path, name));
    if (children.length === 0) {
      throw new ConfigError(`${path} holds no ${SUMMARY_FILE_NAME}, and none of its subfolders does; expected an evaluation directory written by swarm eval (or a folder of them).`);
    }
    dirs.push(...children);
  }
  return dirs;
}

/** Loads the summaries of evaluation directories, each labelled by its directory. */
export async function loadEvaluationDirs(paths: readonly string[]): Promise<Evaluation[]> {
  const dirs = await findEvaluationDirs(paths);
  return Promise.all(dirs.map(async (dir) => ({ label: dir, summary: await readSummary(join(dir, SUMMARY_FILE_NAME)) })));
}
