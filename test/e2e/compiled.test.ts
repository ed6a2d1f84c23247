/**
 * The production way to run the service (docs/operations.md, README "Running it"): `npm run build`, then
 * `node dist/main.js serve --config FILE` (`npm run serve:dist`). The compiled JavaScript starts, serves a
 * whole issuance to openid-client and the dev wallet, and stops on SIGTERM with exit code 0.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { completeIssuance, pushIssuance } from '../helpers/flows.js';
import { freePort, waitFor } from '../helpers/redisServer.js';
import { serviceEnv, writeServiceConfig } from '../helpers/childService.js';

// a child process with its own memory-store config whatever TEST_STORE says: run once, in the Redis project
const run = process.env.TEST_STORE === 'redis' ? describe : describe.skip;

const CLIENT = { id: 'compiled-client', secret: 'compiled-secret-0123456789abcdef' };
const REDIRECT = 'https://rp.example/cb';
const PIN = '2468';
const attributes = { FirstName: 'Ada', LastName: 'Lovelace' };

let dir: string;
let base: string;
let child: ChildProcess | undefined;
let output = '';
let exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;

run('the compiled service (npm run build; node dist/main.js serve)', () => {
  beforeAll(async () => {
    // npm run build's steps: compile, then copy the views' stylesheets and scripts next to the compiled code
    execFileSync(process.execPath, [join('node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.build.json'], {
      cwd: process.cwd(),
      stdio: 'pipe',
    });
    execFileSync(process.execPath, [join('scripts', 'copy-assets.mjs')], { cwd: process.cwd(), stdio: 'pipe' });
    dir = mkdtempSync(join(tmpdir(), 'vc-compiled-'));
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    const config = writeServiceConfig(dir, { base, port, client: CLIENT, redirectUri: REDIRECT });
    child = spawn(process.execPath, ['dist/main.js', 'serve', '--config', config], {
      cwd: process.cwd(),
      env: serviceEnv(),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout!.on('data', (d) => (output = (output + String(d)).slice(-4_000)));
    child.stderr!.on('data', (d) => (output = (output + String(d)).slice(-4_000)));
    exit = new Promise((resolve) => child!.once('exit', (code, signal) => resolve({ code, signal })));
    await waitFor(
      `the compiled service to answer /healthz (output: ${output})`,
      async () => {
        if (child!.exitCode !== null) throw new Error(`the service exited: ${output}`);
        return (
          (await fetch(`${base}/healthz`, { signal: AbortSignal.timeout(1_000) }).catch(() => undefined))?.ok ?? false
        );
      },
      25_000,
      100,
    );
  }, 90_000);

  afterAll(async () => {
    if (child && child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL');
      await exit;
    }
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('issues a credential: openid-client (discovery, PAR, PKCE, code, ID token via JWKS) and the dev wallet with a PIN', async () => {
    const { config, verifier, state, nonce, authorizeUrl } = await pushIssuance(base, {
      clientId: CLIENT.id,
      secret: CLIENT.secret,
      attributes,
      pin: PIN,
      redirectUri: REDIRECT,
    });
    const { tokens, wallet } = await completeIssuance({ config, verifier, state, nonce, authorizeUrl }, PIN);
    expect(tokens.claims()).toMatchObject({ ...attributes, iss: base, aud: CLIENT.id, nonce });
    expect(tokens.access_token).toBe(tokens.id_token);
    expect(wallet.list()[0].claims).toEqual(attributes);
  });

  it('stops on SIGTERM with exit code 0', async () => {
    expect(child!.kill('SIGTERM')).toBe(true);
    const exited = await Promise.race([exit, new Promise<undefined>((r) => setTimeout(r, 12_000))]);
    expect(exited, output).toEqual({ code: 0, signal: null });
  });
});
