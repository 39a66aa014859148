// serve_client.mjs (cli_compare.py's serve stage): asks a running `swarm serve` the same questions
// through the official `openai` package, as a user's client would, and prints what it answered as
// JSON: one completion alone, then the same request beside three others at once (the batch must not
// move its tokens), and one request with a list of two prompts (a choice each). Each choice keeps
// its token ids, log-probs, draws and finish reason.
// Usage: node scripts/cuda-emulation/serve_client.mjs URL VOCAB_SIZE
import OpenAI from 'openai';

const [url, vocabText] = process.argv.slice(2);
const vocab = Number(vocabText);
if (!url || !(vocab > 0)) {
  console.error('usage: node serve_client.mjs URL VOCAB_SIZE');
  process.exit(2);
}
const client = new OpenAI({ baseURL: `${url}/v1`, apiKey: 'unused', maxRetries: 0, timeout: 30 * 60 * 1000 });
const prompt = (length, seed) => Array.from({ length }, (_, i) => (seed * 7919 + i * 37 + 11) % vocab);
const ask = async (promptValue, seed) => {
  const completion = await client.completions.create({
    model: 'compared',
    prompt: promptValue,
    max_tokens: 12,
    temperature: 1,
    seed,
    logprobs: 1,
    return_token_ids: true,
    s3_draws: 2,
  });
  return completion.choices.map((choice) => ({
    tokenIds: choice.token_ids,
    logprobs: choice.logprobs?.token_logprobs ?? null,
    draws: choice.s3_draws ?? null,
    finish: choice.s3_finish ?? choice.finish_reason,
  }));
};

const [alone] = await ask(prompt(40, 1), 1234);
const crowd = (await Promise.all([ask(prompt(40, 1), 1234), ask(prompt(25, 2), 7), ask(prompt(61, 3), 8), ask(prompt(33, 4), 9)])).map(
  ([choice]) => choice,
);
const list = await ask([prompt(20, 5), prompt(47, 6)], 5);
console.log(JSON.stringify({ alone, crowd, list }));
