// eval.json, what an evaluation directory's episodes were produced with: task, policy, messaging,
// temperature, allowance, context, split, message ablation and thinking mode. Written when an evaluation starts; a later run in the same
// directory (a resumed or extended evaluation: more seeds, sizes or problems) must match it, so episodes
// from different settings are never mixed into one summary.

import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ConfigError, FormatError } from '../../errors.js';
import type { Split } from '../../tasks/index.js';
import type { SummaryAllowance, SummaryPolicy } from '../summary.js';

/** The file name of the manifest in an evaluation directory. */
export const EVAL_MANIFEST_FILE_NAME = 'eval.json';

/** The settings every episode of an evaluation directory shares. */
export interface EvalManifest {
  /** Always "s3-eval". */
  readonly format: 's3-eval';
  /** Always 1. */
  readonly version: 1;
  /** Task name. */
  readonly task: string;
  /** The policy as the summary describes it. */
  readonly policy: SummaryPolicy;
  /** What generated the tokens, exactly (e.g. the script and tokenizer file). */
  readonly policyKey: string;
  /** Messaging on or off. */
  readonly comm: boolean;
  /** Sampling temperature. */
  readonly temperature: number;
  /** Per-agent allowance. */
  readonly allowance: SummaryAllowance;
  /** Per-agent context window. */
  readonly contextLimit: number;
  /** Which split the problems come from. */
  readonly split: Split;
  /** The message channel's ablation (`--messages`), absent for the intact channel. */
  readonly messages?: string;
  /** false: Qwen3's thinking mode off (`--no-thinking`); absent when on. */
  readonly thinking?: false;
}

const COMPARED: readonly (keyof EvalManifest)[] = ['task', 'policyKey', 'comm', 'temperature', 'allowance', 'contextLimit', 'split', 'messages', 'thinking'];

/** The value an absent optional field stands for. */
const ABSENT_MEANS: Partial<Record<keyof EvalManifest, unknown>> = { messages: 'none', thinking: true };

/** Writes the manifest into a new evaluation directory, or checks that an existing one matches it. */
export async function claimEvalDirectory(dir: string, manifest: EvalManifest): Promise<void> {
  const path = join(dir, EVAL_MANIFEST_FILE_NAME);
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw new FormatError(`cannot read ${path}: ${(error as Error).message}`);
    await writeFile(path, `${JSON.stringify(manifest, null, 2)}\n`, 'utf8');
    return;
  }
  let existing: Record<string, unknown>;
  try {
    existing = JSON.parse(text) as Record<string, unknown>;
  } catch (error) {
    throw new FormatError(`${path}: not valid JSON (${(error as Error).message}); expected the manifest swarm eval writes.`);
  }
  if (existing.format !== 's3-eval' || existing.version !== 1) {
    throw new FormatError(`${path}: not an s3-eval manifest of version 1; expected the manifest swarm eval writes.`);
  }
  for (const field of COMPARED) {
    const was = JSON.stringify(existing[field] ?? ABSENT_MEANS[field]);
    const now = JSON.stringify(manifest[field] ?? ABSENT_MEANS[field]);
    if (was !== now) {
      throw new ConfigError(
        `${dir} holds an evaluation with ${field} ${was}, but this run asks for ${now}; ` +
          'resume with the same settings, or choose another --out (or delete the directory to start over).',
      );
    }
  }
}
