// Tests of the fixed splits: sizes, pinned content, determinism, disjointness, files written once and
// read back, and corrupted files refused with the file and line named.
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FormatError } from '../../src/errors.js';
import { aggregationProblemKey, type AggregationProblem } from '../../src/tasks/aggregation/problem.js';
import { explorationProblemKey, type ExplorationProblem } from '../../src/tasks/exploration/problem.js';
import { treeToJson } from '../../src/tasks/exploration/tree-json.js';
import { getTask } from '../../src/tasks/index.js';
import {
  DATASETS,
  defaultDataDir,
  generateAggregationSplit,
  generateExplorationSplit,
  loadAggregationSplit,
  loadExplorationSplit,
  SPLIT_SIZES,
  splitFilePath,
  type DatasetName,
} from '../../src/tasks/splits.js';
import { SPLITS, type Split } from '../../src/tasks/task.js';

/**
 * SHA-256 of the record lines of every split file (the header's sha256). Pinned so that a change to the
 * generator, the PRNG or the seeds, which would silently change the evaluation sets, fails here.
 */
const PINNED_SHA256: Record<string, string> = {
  'aggregation-eval': '1fdac340bbed2cb52b4c1fd121c1a1837d27ecb497febf1188cd136bbfb0afae',
  'aggregation-dev': '114a3fdcb23fd700a9c6066c4920fb55560dbd51c2170b23e319d70e01a25520',
  'aggregation-train': '73b0fb7ac4fda18c5ad6265b35fd77389aeb2de9479d071d6fd66c789d2a22b0',
  'aggregation-digits-eval': '2a2abbc5a61b33198607b3dc494d7ff2c872208bd55c0a6c89f264f2c62ab1be',
  'aggregation-digits-dev': '95cb0096cca47363e7ff9e12183ba49e9c8eb2090c5b558f1df272579112de66',
  'aggregation-digits-train': 'c72224419ecc5a98557f301573d7e20e348c9cf59c9b839942d7aa2685cc3e98',
  'exploration-d3-eval': '0d65106bb99f079a1fb8fe6f606282ccccceb9295efba71790828ac285284474',
  'exploration-d2-eval': 'ee2cc58767ad40c2761fc55ff29d9f99bbc052d2228ab10c73e0f0a51d1315af',
  'exploration-d3-train': 'ea448df55865653fbb2720b31e40375370abfd4651a28a9ee2bef9bd8e79baa4',
};

const temporaryDirs: string[] = [];
function temporaryDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 's3-splits-'));
  temporaryDirs.push(dir);
  return dir;
}
const dataDir = temporaryDir();
const loaded = new Map<string, readonly AggregationProblem[] | readonly ExplorationProblem[]>();

function load(dataset: DatasetName, split: Split, dir = dataDir): Promise<readonly AggregationProblem[] | readonly ExplorationProblem[]> {
  return dataset === 'aggregation' || dataset === 'aggregation-digits'
    ? loadAggregationSplit({ split, dataDir: dir, dataset })
    : loadExplorationSplit({ dataset, split, dataDir: dir });
}

function keyOf(dataset: DatasetName, problem: AggregationProblem | ExplorationProblem): string {
  return dataset === 'aggregation' || dataset === 'aggregation-digits'
    ? aggregationProblemKey(problem as AggregationProblem)
    : explorationProblemKey(problem as ExplorationProblem);
}

afterAll(() => {
  for (const dir of temporaryDirs) rmSync(dir, { recursive: true, force: true });
});

beforeAll(async () => {
  for (const dataset of DATASETS) for (const split of SPLITS) loaded.set(`${dataset}-${split}`, await load(dataset, split));
});

describe('split contents', () => {
  it('has the sizes of Table 3 and Appendix M', () => {
    expect(SPLIT_SIZES['exploration-d3']).toEqual({ train: 1024, dev: 32, eval: 32 });
    expect(SPLIT_SIZES['exploration-d2']).toEqual({ train: 1024, dev: 32, eval: 32 });
    expect(SPLIT_SIZES.aggregation).toEqual({ train: 4096, dev: 32, eval: 32 });
    expect(SPLIT_SIZES['aggregation-digits']).toEqual({ train: 1024, dev: 32, eval: 32 });
    for (const dataset of DATASETS) for (const split of SPLITS) expect(loaded.get(`${dataset}-${split}`)).toHaveLength(SPLIT_SIZES[dataset][split]);
  });

  it.each([
    ['aggregation', 99],
    ['aggregation-digits', 9],
  ] as const)('gives %s training problems 4 numbers and held-out problems 16, all in 1..%i', (dataset, max) => {
    for (const split of SPLITS) {
      const size = split === 'train' ? 4 : 16;
      const problems = loaded.get(`${dataset}-${split}`) as readonly AggregationProblem[];
      const malformed = problems.filter(
        (problem) => problem.numbers.length !== size || !problem.numbers.every((n) => Number.isInteger(n) && n >= 1 && n <= max),
      );
      expect(malformed).toEqual([]);
      // Every value of the range occurs in the training split (a 1..max − 1 generator would fail here).
      if (split === 'train') expect(new Set(problems.flatMap((problem) => problem.numbers)).size).toBe(max);
    }
  });

  it('refuses a digits split file holding a number above 9, naming the file and line', async () => {
    const dir = temporaryDir();
    await load('aggregation-digits', 'dev', dir);
    const file = splitFilePath({ dataset: 'aggregation-digits', split: 'dev', dataDir: dir });
    const lines = readFileSync(file, 'utf8').split('\n');
    lines[2] = lines[2].replace(/"numbers":\[\d+/, '"numbers":[42');
    writeFileSync(file, lines.join('\n'));
    await expect(loadAggregationSplit({ split: 'dev', dataDir: dir, dataset: 'aggregation-digits' })).rejects.toThrow(`${file}:3: "numbers" must be a non-empty array of integers in 1..9`);
  });

  it('uses depth-3 trees for RL and depth-2 trees for demonstrations', () => {
    expect((loaded.get('exploration-d3-eval') as readonly ExplorationProblem[]).every((p) => p.tree.doors.size === 391)).toBe(true);
    expect((loaded.get('exploration-d2-dev') as readonly ExplorationProblem[]).every((p) => p.tree.doors.size === 121)).toBe(true);
  });

  it('gives every problem a unique id naming its dataset and split', () => {
    const ids = new Set<string>();
    for (const dataset of DATASETS) {
      for (const split of SPLITS) {
        for (const problem of loaded.get(`${dataset}-${split}`) ?? []) {
          expect(problem.id.startsWith(`${dataset}/${split}/`)).toBe(true);
          ids.add(problem.id);
        }
      }
    }
    expect(ids.size).toBe(4096 + 64 + 1024 + 64 + 2 * (1024 + 64));
  });

  it('matches the pinned content hashes', () => {
    for (const [name, digest] of Object.entries(PINNED_SHA256)) {
      const header = JSON.parse(readFileSync(join(dataDir, `${name}.jsonl`), 'utf8').split('\n')[0]) as { sha256: string };
      expect(header.sha256, name).toBe(digest);
    }
  });
});

describe('split disjointness and determinism', () => {
  it.each(DATASETS.filter((dataset) => dataset !== 'aggregation-digits'))('keeps the splits of %s disjoint (and free of repeats within a split)', (dataset) => {
    const keys = new Set<string>();
    let total = 0;
    for (const split of SPLITS) {
      for (const problem of loaded.get(`${dataset}-${split}`) ?? []) {
        keys.add(keyOf(dataset, problem));
        total += 1;
      }
    }
    expect(keys.size).toBe(total);
  });

  it('keeps the digits training split off the held-out answers, without repeats, distributed like the held-out draws', () => {
    const problems = (split: Split) => loaded.get(`aggregation-digits-${split}`) as readonly AggregationProblem[];
    const heldOut = new Set([...problems('eval'), ...problems('dev')].map(aggregationProblemKey));
    expect(heldOut.size).toBe(64);
    const train = problems('train');
    expect(train.filter((problem) => heldOut.has(aggregationProblemKey(problem)))).toEqual([]);
    expect(new Set(train.map((problem) => problem.numbers.join(','))).size).toBe(train.length);
    // Four different digits: 9·8·7·6 / 9⁴ = 46% of independent draws (the held-out problems are such draws); a split of distinct quadruples would hold 25%.
    const allDistinct = train.filter((problem) => new Set(problem.numbers).size === 4).length / train.length;
    expect(allDistinct).toBeGreaterThan(0.4);
    expect(allDistinct).toBeLessThan(0.52);
  });

  it('regenerates the same problems in memory as the files hold', () => {
    expect(generateAggregationSplit('eval')).toEqual(loaded.get('aggregation-eval'));
    expect(generateAggregationSplit('train', 'aggregation-digits')).toEqual(loaded.get('aggregation-digits-train'));
    const trees = generateExplorationSplit({ dataset: 'exploration-d2', split: 'dev' }).map((p) => treeToJson(p.tree));
    expect(trees).toEqual((loaded.get('exploration-d2-dev') as readonly ExplorationProblem[]).map((p) => treeToJson(p.tree)));
  });

  it('differs between splits', () => {
    const dev = loaded.get('aggregation-dev') as readonly AggregationProblem[];
    const evalSet = loaded.get('aggregation-eval') as readonly AggregationProblem[];
    expect(dev[0].numbers).not.toEqual(evalSet[0].numbers);
  });

  it('reads a written file back unchanged and leaves it untouched', async () => {
    const path = splitFilePath({ dataset: 'exploration-d3', split: 'eval', dataDir });
    const before = readFileSync(path, 'utf8');
    const again = (await load('exploration-d3', 'eval')) as readonly ExplorationProblem[];
    expect(readFileSync(path, 'utf8')).toBe(before);
    expect(again.map((p) => treeToJson(p.tree))).toEqual(
      (loaded.get('exploration-d3-eval') as readonly ExplorationProblem[]).map((p) => treeToJson(p.tree)),
    );
  });

  it('serves the same problems through the task registry', async () => {
    const problems = await getTask('aggregation').loadProblems({ split: 'eval', dataDir });
    expect(problems).toEqual(loaded.get('aggregation-eval'));
  });
});

describe('corrupted split files', () => {
  const source = join(dataDir, 'aggregation-dev.jsonl');
  const corrupt = (edit: (lines: string[]) => string[]): string => {
    const dir = temporaryDir();
    copyFileSync(source, join(dir, 'aggregation-dev.jsonl'));
    const lines = readFileSync(source, 'utf8').split('\n');
    writeFileSync(join(dir, 'aggregation-dev.jsonl'), edit(lines).join('\n'));
    return dir;
  };
  const path = (dir: string): string => join(dir, 'aggregation-dev.jsonl');

  it('refuses a record edited into other valid JSON, naming the header line', async () => {
    const dir = corrupt((lines) => lines.map((line, i) => (i === 4 ? line.replace(/"numbers":\[(\d+)/, (_, n: string) => `"numbers":[${(Number(n) % 99) + 1}`) : line)));
    await expect(loadAggregationSplit({ split: 'dev', dataDir: dir })).rejects.toThrow(FormatError);
    await expect(loadAggregationSplit({ split: 'dev', dataDir: dir })).rejects.toThrow(`${path(dir)}:1: the records' SHA-256`);
  });

  it('refuses a line that is not JSON, naming it', async () => {
    const dir = corrupt((lines) => lines.map((line, i) => (i === 2 ? line.slice(0, 20) : line)));
    await expect(loadAggregationSplit({ split: 'dev', dataDir: dir })).rejects.toThrow(`${path(dir)}:3: the line is not JSON`);
  });

  it('refuses a record that breaks the problem rules, naming its line', async () => {
    const dir = corrupt((lines) => lines.map((line, i) => (i === 6 ? line.replace(/"numbers":\[\d+/, '"numbers":[100') : line)));
    await expect(loadAggregationSplit({ split: 'dev', dataDir: dir })).rejects.toThrow(`${path(dir)}:7: "numbers" must be`);
  });

  it('refuses a truncated file', async () => {
    const dir = corrupt((lines) => [...lines.slice(0, 10), '']);
    await expect(loadAggregationSplit({ split: 'dev', dataDir: dir })).rejects.toThrow(/the file has 9 records, the header says 32/);
    const cut = corrupt((lines) => lines.slice(0, 10));
    await expect(loadAggregationSplit({ split: 'dev', dataDir: cut })).rejects.toThrow(/does not end with a newline/);
  });

  it('refuses a header for another seed or split', async () => {
    const dir = corrupt((lines) => [lines[0].replace('aggregation/dev', 'aggregation/old'), ...lines.slice(1)]);
    await expect(loadAggregationSplit({ split: 'dev', dataDir: dir })).rejects.toThrow(`${path(dir)}:1: header seed`);
    const other = temporaryDir();
    copyFileSync(source, join(other, 'aggregation-eval.jsonl'));
    await expect(loadAggregationSplit({ split: 'eval', dataDir: other })).rejects.toThrow(/header split is "dev", expected "eval"/);
  });
});

describe('defaultDataDir', () => {
  it('uses S3_DATA_DIR when set, else ~/.cache/s3-swarm/splits/v1', () => {
    const saved = process.env.S3_DATA_DIR;
    try {
      process.env.S3_DATA_DIR = '/tmp/somewhere/data';
      expect(defaultDataDir()).toBe('/tmp/somewhere/data');
      delete process.env.S3_DATA_DIR;
      expect(defaultDataDir().endsWith(join('.cache', 's3-swarm', 'splits', 'v1'))).toBe(true);
    } finally {
      if (saved === undefined) delete process.env.S3_DATA_DIR;
      else process.env.S3_DATA_DIR = saved;
    }
  });
});
