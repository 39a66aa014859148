// How each protocol's inference server is asked to sample with a weights folder (a Hugging Face
// checkpoint the trainer wrote where the server can read it), and what weights version it then
// reports on its pieces:
// - ours (`swarm serve`): POST /v1/load_weights {path}; answers {weightsVersion}, and every choice
//   carries s3_policy_version. Requests in flight keep going (the engine swaps between batches).
// - SGLang: POST /update_weights_from_disk {model_path, weight_version}; the server finishes the
//   requests in flight before it swaps, and every answer's meta_info.weight_version is the string
//   given here ("s3-v<version>"; a restarted server reports its startup "default").
// - vLLM (dev mode, VLLM_SERVER_DEV_MODE=1): POST /pause (mode=wait: in-flight requests finish, the
//   caches are cleared), POST /collective_rpc {method: "reload_weights", kwargs: {weights_path}},
//   POST /resume. vLLM reports no version, so RemotePolicy holds new requests to that server until
//   its own in flight have returned and the reload is done (RemotePolicy.install), which makes the
//   version of every piece the one installed when it was sent.
// The SGLang and vLLM calls follow their documented APIs (SGLang's io_struct.UpdateWeightFromDiskReqInput;
// vLLM's RL pause/resume and dev-mode collective_rpc routes, as NeMo RL's remote vLLM client uses
// them); no real SGLang or vLLM server has run them here (docs/cluster.md).

import { PolicyError } from './policy-error.js';
import type { RemoteProtocol } from './remote-policy.js';

/** What a server reports on its pieces once the folder is loaded: a version number or string, or nothing (vLLM). */
export type ServerWeightsVersion = number | string | null;

/** The weight_version string SGLang is given for the caller's version. */
export function sglangWeightVersion(version: number): string {
  return `s3-v${version}`;
}

async function post(url: string, endpoint: string, body: unknown, timeoutMs: number): Promise<{ status: number; body: unknown; text: string }> {
  let response: Response;
  try {
    response = await fetch(`${url}${endpoint}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(timeoutMs),
    });
  } catch (error) {
    const cause = (error as { cause?: Error }).cause;
    throw new Error(`POST ${endpoint} failed: ${(error as Error).message}${cause ? ` (${cause.message})` : ''}`);
  }
  const text = await response.text();
  let parsed: unknown = null;
  try {
    parsed = text === '' ? null : JSON.parse(text);
  } catch {
    parsed = null;
  }
  return { status: response.status, body: parsed, text };
}

function detail(reply: { body: unknown; text: string }): string {
  const body = reply.body as Record<string, unknown> | null;
  if (body !== null && typeof body === 'object') {
    const error = body.error as Record<string, unknown> | undefined;
    if (error !== undefined && typeof error === 'object' && error !== null && typeof error.message === 'string') return error.message;
    if (typeof body.message === 'string') return body.message;
    if (typeof body.detail === 'string') return body.detail;
  }
  return reply.text.length > 200 ? `${reply.text.slice(0, 197)}...` : reply.text;
}

/**
 * Asks the server at `url` to load the checkpoint in `folder` as the caller's weights `version`;
 * resolves with the version its pieces will report. Rejects with the server's own words.
 */
export async function loadServerWeights(protocol: RemoteProtocol, url: string, folder: string, version: number, timeoutMs = 600_000): Promise<ServerWeightsVersion> {
  const refused = (what: string): never => {
    throw new PolicyError(`inference server ${url} refused the weights of version ${version} in ${folder}: ${what}`);
  };
  if (protocol === 's3') {
    const reply = await post(url, '/v1/load_weights', { path: folder }, timeoutMs);
    const body = reply.body as Record<string, unknown> | null;
    if (reply.status !== 200 || body === null || typeof body.weightsVersion !== 'number') refused(`HTTP ${reply.status}: ${detail(reply)}`);
    return (body as { weightsVersion: number }).weightsVersion;
  }
  if (protocol === 'sglang') {
    const weightVersion = sglangWeightVersion(version);
    const reply = await post(url, '/update_weights_from_disk', { model_path: folder, weight_version: weightVersion, abort_all_requests: false, flush_cache: true }, timeoutMs);
    const body = reply.body as Record<string, unknown> | null;
    if (reply.status === 404) refused('it has no POST /update_weights_from_disk (an SGLang server of 2025 or later has it)');
    if (reply.status !== 200 || body === null || body.success !== true) refused(`HTTP ${reply.status}: ${detail(reply)}`);
    return weightVersion;
  }
  const devMode = 'start vLLM with VLLM_SERVER_DEV_MODE=1, which serves /pause, /resume and /collective_rpc';
  const paused = await post(url, '/pause?mode=wait&wait_for_inflight_requests=true&clear_cache=true', undefined, timeoutMs);
  if (paused.status === 404) refused(`it has no POST /pause; ${devMode}`);
  if (paused.status !== 200) refused(`POST /pause: HTTP ${paused.status}: ${detail(paused)}`);
  let reloaded: { status: number; body: unknown; text: string } | undefined;
  try {
    reloaded = await post(url, '/collective_rpc', { method: 'reload_weights', kwargs: { weights_path: folder } }, timeoutMs);
  } finally {
    // Resumed whatever the reload did, so a refused folder leaves the server serving, not paused.
    const resumed = await post(url, '/resume', undefined, timeoutMs).catch((error: Error) => ({ status: 0, body: null, text: error.message }));
    if (reloaded !== undefined && reloaded.status === 200 && resumed.status !== 200) refused(`POST /resume: HTTP ${resumed.status}: ${detail(resumed)}`);
  }
  if (reloaded.status === 404) refused(`it has no POST /collective_rpc; ${devMode}`);
  if (reloaded.status !== 200) refused(`POST /collective_rpc reload_weights: HTTP ${reloaded.status}: ${detail(reloaded)}`);
  return null;
}
