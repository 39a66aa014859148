#!/usr/bin/env node
// Rebuilds assets/s3-mini/tokenizer.json (run `npm run build` first): scripted episodes of both
// tasks rendered with the Qwen3 tokenizer (a dev dependency) give the text; the deterministic BPE
// trainer makes 4,096 ids from it. test/model/s3-mini-tokenizer.test.ts checks the shipped file is
// exactly what this produces.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const { buildS3MiniTokenizerJson } = await import(path.join(root, 'dist/tools/s3-mini-corpus.js'));
const json = await buildS3MiniTokenizerJson();
const target = path.join(root, 'assets/s3-mini/tokenizer.json');
fs.mkdirSync(path.dirname(target), { recursive: true });
fs.writeFileSync(target, json);
console.log(`wrote ${path.relative(root, target)} (${json.length} bytes)`);
