/**
 * The production way to run the service (docs/operations.md, README "Running it"): `npm run build`, then
 * `node dist/main.js serve --config FILE` (`npm run serve:dist`). The compiled JavaScript starts, answers
 * discovery and a PAR request with a signed hint, and stops on SIGTERM with exit code 0.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeHint, pkcePair, postForm } from '../helpers/rp.js';
import { freePort, waitFor } from '../helpers/redisServer.js';

// a child process with its own memory-store config whatever TEST_STORE says: run once, in the Redis project
const run = process.env.TEST_STORE === 'redis' ? describe : describe.skip;

const CLIENT = { id: 'compiled-client', secret: 'compiled-secret-0123456789abcdef' };
const REDIRECT = 'https://rp.example/cb';

let dir: string;
let base: string;
let child: ChildProcess | undefined;
let output = '';
let exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;

run('the compiled service (npm run build; node dist/main.js serve)', () => {
  beforeAll(async () => {
    execFileSync(process.execPath, [join('node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.build.json'], { cwd: process.cwd(), stdio: 'pipe' });
    dir = mkdtempSync(join(tmpdir(), 'vc-compiled-'));
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    const config = join(dir, 'config.json');
    writeFileSync(
      config,
      JSON.stringify({
        baseUrl: base,
        port,
        host: '127.0.0.1',
        store: 'memory',
        logLevel: 'silent',
        keys: { idToken: join(dir, 'id-token.jwks.json'), credential: join(dir, 'credential.jwks.json'), cookies: join(dir, 'cookies.json') },
        credentialTypes: [{ name: 'EmployeeBadge', validity: 'P30D', pinCodeLength: 4, attributes: { FirstName: { type: 'string' }, LastName: { type: 'string' } } }],
        clients: [{ clientId: CLIENT.id, clientSecret: CLIENT.secret, redirectUris: [REDIRECT], pkce: 'required', scopes: ['issue.EmployeeBadge', 'EmployeeBadge'] }],
      }),
    );
    const env = { ...process.env };
    delete env.CONFIG;
    delete env.PORT;
    delete env.BASE_URL;
    child = spawn(process.execPath, ['dist/main.js', 'serve', '--config', config], { cwd: process.cwd(), env, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout!.on('data', (d) => (output = (output + String(d)).slice(-4_000)));
    child.stderr!.on('data', (d) => (output = (output + String(d)).slice(-4_000)));
    exit = new Promise((resolve) => child!.once('exit', (code, signal) => resolve({ code, signal })));
    await waitFor(`the compiled service to answer /healthz (output: ${output})`, async () => {
      if (child!.exitCode !== null) throw new Error(`the service exited: ${output}`);
      return (await fetch(`${base}/healthz`, { signal: AbortSignal.timeout(1_000) }).catch(() => undefined))?.ok ?? false;
    }, 25_000, 100);
  }, 90_000);

  afterAll(async () => {
    if (child && child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL');
      await exit;
    }
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('answers discovery (spec: Discovery) and a PAR request with a signed hint (201, request_uri)', async () => {
    const discovery = await fetch(`${base}/v2.0/.well-known/openid-configuration`);
    expect(discovery.status).toBe(200);
    expect(await discovery.json()).toMatchObject({ issuer: base, pushed_authorization_request_endpoint: `${base}/v2.0/oidc/par` });

    const { challenge } = pkcePair();
    const hint = await makeHint({ clientId: CLIENT.id, secret: CLIENT.secret, audience: base, claims: { FirstName: 'Ada', LastName: 'Lovelace', PinCode: '1234' } });
    const par = await postForm(`${base}/v2.0/oidc/par`, {
      client_id: CLIENT.id,
      client_secret: CLIENT.secret,
      response_type: 'code',
      redirect_uri: REDIRECT,
      scope: 'openid issue.EmployeeBadge',
      state: 'compiled',
      nonce: 'compiled',
      id_token_hint: hint,
      code_challenge: challenge,
      code_challenge_method: 'S256',
    });
    expect(par.status, JSON.stringify(par.body)).toBe(201);
    expect(par.body.request_uri).toMatch(/^urn:ietf:params:oauth:request_uri:/);
  });

  it('stops on SIGTERM with exit code 0', async () => {
    expect(child!.kill('SIGTERM')).toBe(true);
    const exited = await Promise.race([exit, new Promise<undefined>((r) => setTimeout(r, 12_000))]);
    expect(exited, output).toEqual({ code: 0, signal: null });
  });
});
