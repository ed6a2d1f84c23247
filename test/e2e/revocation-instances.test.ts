/**
 * D18 across instances: three instances on one Redis behind a round-robin proxy. A revocation made through
 * one instance's operator API shows in the Status List Token the others serve, at once; `npm run admin`
 * (a child process on a config file naming the same Redis) changes a status the instances then serve.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { getListFromStatusListJWT } from '@sd-jwt/jwt-status-list';
import { decodeJwt } from 'jose';
import * as oidc from 'openid-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { holderCompletesIssuance, newWallet, pushIssuance } from '../helpers/flows.js';
import { serviceEnv } from '../helpers/childService.js';
import { startInstancesBehindProxy, type InstancesBehindProxy } from '../helpers/roundRobin.js';
import { REDIRECT, SECRETS } from '../helpers/service.js';
import { REDIS_URL } from '../helpers/stores.js';

// a shared Redis whatever TEST_STORE says: run once, in the flows-redis project
const run = process.env.TEST_STORE === 'redis' ? describe : describe.skip;

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const ADMIN_TOKEN = `admin-${randomBytes(24).toString('hex')}`;
const PREFIX = `rv:${randomBytes(4).toString('hex')}:`;

interface Result {
  code: number;
  stdout: string;
  stderr: string;
}
const adminCli = (...args: string[]): Promise<Result> =>
  new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', 'src/main.ts', 'admin', ...args],
      { cwd: ROOT, env: serviceEnv(), timeout: 60_000 },
      (err, stdout, stderr) => {
        resolve({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, stdout, stderr });
      },
    );
  });

run('D18: three instances on one Redis', () => {
  let farm: InstancesBehindProxy;
  let dir: string;
  let configFile: string;

  beforeAll(async () => {
    farm = await startInstancesBehindProxy({
      count: 3,
      store: { url: REDIS_URL, keyPrefix: PREFIX },
      overrides: { admin: { token: ADMIN_TOKEN } },
    });
    dir = mkdtempSync(join(tmpdir(), 'vc-admin-'));
    configFile = join(dir, 'config.json');
    // the servers' store; the command loads no keys
    writeFileSync(
      configFile,
      JSON.stringify({
        baseUrl: farm.baseUrl,
        store: { url: REDIS_URL, keyPrefix: PREFIX },
        logLevel: 'info',
        keys: {
          generate: false,
          idToken: join(dir, 'none.json'),
          credential: join(dir, 'none.json'),
          cookies: join(dir, 'none.json'),
        },
        credentialTypes: [{ name: 'EmployeeBadge', attributes: { FirstName: { type: 'string' } } }],
        clients: [
          {
            clientId: 'c',
            clientSecret: 'client-secret-0123456789',
            redirectUris: ['http://127.0.0.1:1/cb'],
            scopes: ['EmployeeBadge'],
          },
        ],
      }),
    );
  });
  afterAll(async () => {
    await farm?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  async function issue(): Promise<{ serialNumber: string; idx: number; path: string }> {
    const wallet = await newWallet();
    const rp = await pushIssuance(farm.baseUrl, {
      clientId: 'issuer-pkce',
      secret: SECRETS.pkceIssuer,
      attributes: { FirstName: 'Ada', LastName: 'Lovelace' },
      pin: '1234',
      redirectUri: REDIRECT,
    });
    const { callbackUrl } = await holderCompletesIssuance(rp.authorizeUrl.href, {
      redirectUri: REDIRECT,
      wallet,
      pin: '1234',
    });
    const tokens = await oidc.authorizationCodeGrant(rp.config, new URL(callbackUrl), {
      pkceCodeVerifier: rp.verifier,
      expectedState: rp.state,
      expectedNonce: rp.nonce,
    });
    const { status } = decodeJwt(wallet.list()[0].credential.split('~')[0]) as {
      status: { status_list: { idx: number; uri: string } };
    };
    expect(status.status_list.uri.startsWith(`${farm.baseUrl}/wallet/status/`)).toBe(true);
    return {
      serialNumber: tokens.claims()!.SerialNumber as string,
      idx: status.status_list.idx,
      path: new URL(status.status_list.uri).pathname,
    };
  }

  const statusAt = async (instance: number, path: string, idx: number) => {
    const token = await (await fetch(`${farm.instances[instance].url}${path}`)).text();
    return getListFromStatusListJWT(token).getStatus(idx);
  };

  it('a revocation made on one instance is in the list the others serve, at once', async () => {
    const { serialNumber, idx, path } = await issue();
    // each instance has signed (and cached) the list before the change
    expect(await Promise.all([0, 1, 2].map((i) => statusAt(i, path, idx)))).toEqual([0, 0, 0]);
    const revoked = await fetch(`${farm.instances[0].url}/admin/credentials/${serialNumber}/revoke`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    });
    expect(await revoked.json()).toMatchObject({ status: 'revoked' });
    expect(await statusAt(1, path, idx)).toBe(1);
    expect(await statusAt(2, path, idx)).toBe(1);
  });

  it('npm run admin suspends, shows, reinstates and revokes on the shared store; revocation is final', async () => {
    const { serialNumber, idx, path } = await issue();
    const suspended = await adminCli('suspend', serialNumber, '--config', configFile);
    expect(suspended).toMatchObject({ code: 0, stdout: `${serialNumber}: suspended\n` });
    // the audit line: SerialNumber, status, time, and nothing the credential says
    const audit = JSON.parse(suspended.stderr.trim().split('\n').pop()!);
    expect(audit).toMatchObject({ audit: 'credential_status', serialNumber, status: 'suspended', via: 'cli' });
    expect(Date.parse(audit.at)).not.toBeNaN();
    expect(suspended.stderr).not.toMatch(/Ada|Lovelace/);
    expect(await statusAt(2, path, idx)).toBe(2);

    expect((await adminCli('status', serialNumber, '--config', configFile)).stdout).toMatch(
      new RegExp(`^${serialNumber}: suspended \\(expires `),
    );
    expect(await adminCli('reinstate', serialNumber, '--config', configFile)).toMatchObject({ code: 0 });
    expect(await statusAt(0, path, idx)).toBe(0);
    expect(await adminCli('revoke', serialNumber, '--config', configFile)).toMatchObject({
      code: 0,
      stdout: `${serialNumber}: revoked\n`,
    });
    expect(await statusAt(1, path, idx)).toBe(1);
    const again = await adminCli('reinstate', serialNumber, '--config', configFile);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/revoked, which is final/);
  });

  it('npm run admin refuses what it cannot do: an unknown SerialNumber, the memory store, bad usage', async () => {
    const unknown = await adminCli('revoke', 'no-such-serial', '--config', configFile);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/no credential with SerialNumber no-such-serial/);
    const memoryFile = join(dir, 'memory.json');
    writeFileSync(
      memoryFile,
      JSON.stringify({
        baseUrl: farm.baseUrl,
        store: 'memory',
        keys: { generate: false },
        credentialTypes: [{ name: 'T', attributes: { A: { type: 'string' } } }],
        clients: [
          {
            clientId: 'c',
            clientSecret: 'client-secret-0123456789',
            redirectUris: ['http://127.0.0.1:1/cb'],
            scopes: ['T'],
          },
        ],
      }),
    );
    const memory = await adminCli('revoke', 'x', '--config', memoryFile);
    expect(memory.code).toBe(1);
    expect(memory.stderr).toMatch(/memory store belongs to one process/);
    expect((await adminCli('destroy', 'x', '--config', configFile)).code).toBe(2);
    expect((await adminCli('revoke', '--config', configFile)).code).toBe(2);
  });
});
