/**
 * Issue 33: the README's minimal relying party (examples/issue.ts) runs as written, as its own process
 * against the service, and a holder completes the issuance through it: /issue pushes the request and
 * sends the browser to the prompt, the dev wallet takes the credential, and the callback shows the ID
 * token's claims.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { holderCompletesIssuance, newWallet } from '../helpers/flows.js';
import { freePort, waitFor } from '../helpers/redisServer.js';
import { startTestService, type TestService } from '../helpers/service.js';

const CLIENT = { clientId: 'example-rp', clientSecret: 'example-rp-secret-0123456789abcdef' };

describe('the README example relying party (examples/issue.ts)', () => {
  let service: TestService;
  let example: ChildProcess;
  let output = '';
  let app: string;

  beforeAll(async () => {
    const port = await freePort();
    app = `http://localhost:${port}`;
    service = await startTestService((base) => ({
      clients: [{ ...CLIENT, redirectUris: [`${app}/callback`], pkce: 'required', scopes: ['issue.MembershipCard'] }],
      baseUrl: base,
    }));
    example = spawn(process.execPath, ['--import', 'tsx', join('examples', 'issue.ts')], {
      env: {
        ...process.env,
        ISSUER: service.url,
        CLIENT_ID: CLIENT.clientId,
        CLIENT_SECRET: CLIENT.clientSecret,
        PORT: String(port),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    example.stdout!.on('data', (d) => (output += String(d)));
    example.stderr!.on('data', (d) => (output += String(d)));
    await waitFor(
      `the example to listen (output: ${output})`,
      async () => {
        if (example.exitCode !== null) throw new Error(`the example exited: ${output}`);
        return output.includes(`open ${app}/issue`);
      },
      60_000,
      100,
    );
  }, 90_000);

  afterAll(async () => {
    example?.kill();
    await service?.stop();
  });

  it('issues a MembershipCard: the callback shows the attributes, SerialNumber and the nonce-checked ID token claims', async () => {
    const wallet = await newWallet();
    const { callbackUrl, browser } = await holderCompletesIssuance(`${app}/issue`, {
      redirectUri: `${app}/callback`,
      wallet,
    });
    const res = await browser.get(callbackUrl, 'application/json');
    const body = await res.text();
    expect(res.status, body).toBe(200);
    const claims = JSON.parse(body);
    expect(claims).toMatchObject({
      iss: service.url,
      aud: CLIENT.clientId,
      MemberName: 'Ada Lovelace',
      MemberNumber: 1815,
      SerialNumber: expect.any(String),
    });
    expect(claims.sub).toBe(claims.SerialNumber);
    expect(wallet.list().map((c) => c.vct)).toHaveLength(1);
  });
});
