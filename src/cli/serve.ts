// `swarm serve --model DIR [--device D] [--weights F] [--kv-dtype T] [--host H] [--port P]`: the
// native inference engine as an OpenAI-compatible server (src/serve/, docs/serve.md). Prints one line
// `listening on http://HOST:PORT` (or, with --json, {"url", "model", "device", ...}) once it accepts
// connections; SIGTERM or SIGINT stops accepting, answers what is in flight and exits 0.
import path from 'node:path';
import fs from 'node:fs';
import type { Command } from 'commander';
import { ConfigError } from '../errors.js';
import { Tokenizer } from '../model/tokenizer/index.js';
import { deviceMemory, resolveDevice } from '../native/device.js';
import { InferenceEngine, KV_CACHE_DTYPES } from '../native/engine.js';
import { engineSizing } from '../policy/engine-sizing.js';
import { InferenceServer } from '../serve/inference-server.js';
import { addDeviceFlags, addEngineSizeFlags, KV_DTYPE_HELP, parseChoiceFlag, parseDeviceFlags, parseEngineSizeFlags, parseIntegerFlag } from './options.js';

interface ServeFlags {
  model: string;
  host: string;
  port: string;
  kvDtype: string;
  kvCacheMb?: string;
  maxSequences?: string;
  maxConcurrent?: string;
  servedModelName?: string;
  tokenizer?: string;
  device: string;
  weights: string;
  json?: boolean;
}

/** Registers `swarm serve`. */
export function registerServe(program: Command): void {
  const command = program
    .command('serve')
    .description('serve a checkpoint over the OpenAI-compatible completions API, token-in/token-out (docs/serve.md)')
    .requiredOption('--model <dir>', 'a Qwen3 checkpoint folder (config.json, safetensors, tokenizer.json)')
    .option('--host <host>', 'address to listen on', '127.0.0.1')
    .option('--port <port>', 'port to listen on (0: any free port)', '8000')
    .option('--kv-dtype <type>', KV_DTYPE_HELP, 'f32')
    .option('--max-concurrent <n>', 'requests answered at once; more get 429 (default 4 × max sequences)')
    .option('--served-model-name <name>', 'the model id /v1/models lists (default: the folder name)')
    .option('--tokenizer <file>', 'tokenizer.json that decodes each choice\'s text (default DIR/tokenizer.json; without one, text is empty)')
    .option('--json', 'print the start line as JSON: {url, model, device, runner, kvCacheDtype, maxContext, vocabSize}');
  addEngineSizeFlags(addDeviceFlags(command)).action(async (flags: ServeFlags) => {
    const directory = path.resolve(flags.model);
    const port = parseIntegerFlag('--port', flags.port, 0);
    if (port > 65535) throw new ConfigError(`--port must be at most 65535, got ${port}`);
    const kvCacheDtype = parseChoiceFlag('--kv-dtype', flags.kvDtype, KV_CACHE_DTYPES);
    const tokenizerPath = path.resolve(flags.tokenizer ?? path.join(directory, 'tokenizer.json'));
    if (flags.tokenizer !== undefined && !fs.existsSync(tokenizerPath)) throw new ConfigError(`--tokenizer ${tokenizerPath} does not exist`);
    const device = parseDeviceFlags(flags);
    const engine = InferenceEngine.load(directory, {
      ...device,
      kvCacheDtype,
      // Each completion is computed alone; sampling keyed by (seed, position) keeps it batch-independent.
      deterministic: false,
      ...engineSizing(resolveDevice(device.device), parseEngineSizeFlags(flags), () => deviceMemory().freeBytes),
    });
    const modelName = flags.servedModelName ?? path.basename(directory);
    const server = new InferenceServer({
      engine,
      modelName,
      weights: device.weights ?? 'stored',
      ...(flags.maxConcurrent === undefined ? {} : { maxConcurrentRequests: parseIntegerFlag('--max-concurrent', flags.maxConcurrent, 1) }),
      ...(fs.existsSync(tokenizerPath) ? { tokenizer: Tokenizer.fromFile(tokenizerPath) } : {}),
    });
    let address: { host: string; port: number };
    try {
      address = await server.listen(port, flags.host);
    } catch (error) {
      engine.close();
      throw new ConfigError(`cannot listen on ${flags.host}:${port}: ${(error as Error).message}`);
    }
    const url = `http://${address.host.includes(':') ? `[${address.host}]` : address.host}:${address.port}`;
    const stats = engine.stats();
    process.stdout.write(
      flags.json
        ? JSON.stringify({ url, model: modelName, directory, device: stats.device, runner: stats.runner, kvCacheDtype: stats.kvCacheDtype, maxContext: stats.maxContext, vocabSize: stats.vocabSize }) + '\n'
        : `listening on ${url} (model ${modelName}, ${stats.runner.device}, ${stats.kvCacheDtype} KV cache, context ${stats.maxContext})\n`,
    );
    await new Promise<void>((resolve) => {
      const stop = (): void => {
        process.off('SIGTERM', stop);
        process.off('SIGINT', stop);
        void server.close().then(resolve);
      };
      process.on('SIGTERM', stop);
      process.on('SIGINT', stop);
    });
    engine.close();
  });
}
