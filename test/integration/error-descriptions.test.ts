/**
 * Issue 31 §5: text a wallet controls never reaches a relying party through error_description. A hostile
 * wallet presents an SD-JWT VC of an issuer nobody trusts, whose `iss` carries quotes, a backslash,
 * markup, a right-to-left override and a line break, or 200 KB. The wallet's own answer, the relying
 * party's redirect and the External Client webhook carry a description of RFC 6749 §4.1.2.1 characters,
 * at most 300 of them, that names the rule and none of the wallet's text; the browser still reaches the
 * relying party.
 */
import { createHash } from 'node:crypto';
import { ES256, digest, generateSalt } from '@sd-jwt/crypto-nodejs';
import { SDJwtVcInstance } from '@sd-jwt/sd-jwt-vc';
import { decodeJwt, exportJWK, generateKeyPair, importJWK, SignJWT, type JWK } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, testConfig, SECRETS, REDIRECT, type TestService } from '../helpers/service.js';
import { Browser, postForm } from '../helpers/rp.js';
import { startWebhookReceiver, webhookSecret } from '../helpers/webhookReceiver.js';
import { openPrompt, requestFromPage } from '../helpers/flows.js';

/** RFC 6749 §4.1.2.1: error_description = 1*( %x20-21 / %x23-5B / %x5D-7E ) */
const RFC_6749 = /^[\x20\x21\x23-\x5B\x5D-\x7E]{1,300}$/;

const HOSTILE_ISS = 'https://evil.example/"q\\<b>bold</b>\u202Eexe.txt\r\nX-Injected: yes';
const HUGE_ISS = `https://evil.example/${'A'.repeat(200 * 1024)}`;

const EXTERNAL = { id: 'ext-rp', secret: 'ext-rp-secret-0123456789abcdef' };
const hookSecret = webhookSecret();
let receiver: Awaited<ReturnType<typeof startWebhookReceiver>>;
let t: TestService;

beforeAll(async () => {
  receiver = await startWebhookReceiver(hookSecret);
  const clients = testConfig(0).clients as object[];
  t = await startTestService({
    clients: [
      ...clients,
      {
        clientId: EXTERNAL.id,
        clientSecret: EXTERNAL.secret,
        redirectUris: [REDIRECT],
        scopes: ['EmployeeBadge', 'External'],
        webhook: { url: receiver.url, secret: hookSecret },
      },
    ],
    verifier: { ...(testConfig(0).verifier as object), responseMode: 'direct_post' },
  });
});
afterAll(async () => {
  await t?.stop();
  await receiver?.close();
});

interface Started {
  state: string;
  browser: Browser;
  promptUrl: string;
  request: { clientId: string; responseUri: string; nonce: string; state: string };
}

/** The relying party pushes a verification (Version 2 PAR), the browser lands on the prompt, the wallet fetches the Request Object. */
async function start(
  client: { id: string; secret: string } = { id: 'issuer-pkce', secret: SECRETS.pkceIssuer },
  scope = 'openid EmployeeBadge',
): Promise<Started> {
  const { state, browser, promptUrl, html } = await openPrompt(t.url, scope, {
    client_id: client.id,
    client_secret: client.secret,
  });
  const requestUri = new URL(requestFromPage(html)).searchParams.get('request_uri')!;
  const payload = decodeJwt((await (await fetch(requestUri)).text()).trim());
  return {
    state,
    browser,
    promptUrl,
    request: {
      clientId: payload.client_id as string,
      responseUri: payload.response_uri as string,
      nonce: payload.nonce as string,
      state: payload.state as string,
    },
  };
}

/** A presentation of an SD-JWT VC signed by `iss`, whom nobody configured, with a valid key binding JWT. */
async function presentationFrom(iss: string, s: Started): Promise<string> {
  const issuer = await generateKeyPair('ES256', { extractable: true });
  const holder = await generateKeyPair('ES256', { extractable: true });
  const sdJwt = new SDJwtVcInstance({
    signer: await ES256.getSigner(await exportJWK(issuer.privateKey)),
    signAlg: 'ES256',
    hasher: digest,
    hashAlg: 'sha-256',
    saltGenerator: generateSalt,
  });
  const now = Math.floor(Date.now() / 1000);
  const credential = await sdJwt.issue(
    {
      FirstName: 'Eve',
      iss,
      vct: `${t.url}/types/EmployeeBadge`,
      iat: now,
      exp: now + 3600,
      cnf: { jwk: await exportJWK(holder.publicKey) },
    },
    { _sd: ['FirstName'] } as never,
  );
  const kb = await new SignJWT({
    aud: s.request.clientId,
    nonce: s.request.nonce,
    iat: now,
    sd_hash: createHash('sha256').update(credential).digest('base64url'),
  })
    .setProtectedHeader({ alg: 'ES256', typ: 'kb+jwt' })
    .sign(await importJWK((await exportJWK(holder.privateKey)) as JWK, 'ES256'));
  return `${credential}${kb}`;
}

function present(s: Started, vp: string) {
  return postForm(s.request.responseUri, { state: s.request.state, vp_token: JSON.stringify({ EmployeeBadge: [vp] }) });
}

/** A description as the issue asks: RFC 6749 characters, bounded, naming the rule, none of the wallet's text. */
function expectSafe(description: unknown): void {
  expect(typeof description).toBe('string');
  expect(description).toMatch(RFC_6749);
  expect(description).toContain('is not trusted');
  for (const text of ['evil.example', '<b>', 'X-Injected', 'AAAAAAAA', '\u202E', '\r', '\n'])
    expect(description).not.toContain(text);
}

describe('a credential whose untrusted iss carries quotes, markup, a bidi override and CR LF (issue 31 §5)', () => {
  it("the wallet hears 400 invalid_request, and the relying party's redirect an RFC 6749 description naming the rule, without that text", async () => {
    const s = await start();
    const res = await present(s, await presentationFrom(HOSTILE_ISS, s));
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_request');
    expectSafe(res.body.error_description);

    const done = await s.browser.follow(`${s.promptUrl}/continue`);
    expect(done.final.startsWith(REDIRECT), `stopped at ${done.final}`).toBe(true);
    const q = new URL(done.final).searchParams;
    expect(q.get('error')).toBe('access_denied');
    expect(q.get('state')).toBe(s.state);
    expectSafe(q.get('error_description'));
  });
});

describe('a credential whose untrusted iss is 200 KB (issue 31 §5)', () => {
  it('the browser still reaches the relying party: its Location is short, its description bounded', async () => {
    const s = await start();
    const res = await present(s, await presentationFrom(HUGE_ISS, s));
    expect(res.status).toBe(400);
    expectSafe(res.body.error_description);

    // step by step, to see each Location the browser is sent to
    let url = `${s.promptUrl}/continue`;
    for (let hops = 0; !url.startsWith(REDIRECT); hops++) {
      expect(hops).toBeLessThan(5);
      const step = await s.browser.get(url);
      expect(step.status, `at ${url}`).toBeGreaterThanOrEqual(300);
      const location = step.headers.get('location')!;
      expect(location.length).toBeLessThan(2048);
      url = new URL(location, url).href;
    }
    const q = new URL(url).searchParams;
    expect(q.get('error')).toBe('access_denied');
    expectSafe(q.get('error_description'));
  });
});

describe('the External Client webhook (issue 31 §5)', () => {
  it.each([
    ['quotes, markup, a bidi override and CR LF', HOSTILE_ISS],
    ['200 KB', HUGE_ISS],
  ])(
    'flow.failed for an iss of %s carries an RFC 6749 description naming the rule, without that text',
    async (_, iss) => {
      const s = await start(EXTERNAL, 'openid EmployeeBadge External');
      const res = await present(s, await presentationFrom(iss, s));
      expect(res.status).toBe(400);
      const hook = await receiver.next((h) => h.payload.data.state === s.state);
      expect(hook.payload.type).toBe('flow.failed');
      expect(hook.payload.data.error).toBe('access_denied');
      expectSafe(hook.payload.data.error_description);
      expect(hook.raw.length).toBeLessThan(2048);
    },
  );
});

describe('our own descriptions (issue 31 §5)', () => {
  it("cite a specification's section in words, not with the section sign", async () => {
    const res = await fetch(`${t.url}/vp/request/anything`, {
      method: 'POST',
      headers: { 'content-type': 'text/plain' },
      body: 'x',
    });
    expect(res.status).toBe(400);
    const body = (await res.json()) as { error_description: string };
    expect(body.error_description).toMatch(RFC_6749);
    expect(body.error_description).toContain('section 5.10');
  });
});
