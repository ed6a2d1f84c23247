import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, REDIRECT, testConfig, type TestService } from '../helpers/service.js';
import { Browser, makeHint, offerFromPage, pkcePair, postForm } from '../helpers/rp.js';
import { newWallet, pushAuthorization } from '../helpers/flows.js';
import { startWebhookReceiver, webhookSecret } from '../helpers/webhookReceiver.js';
import { validateConfig } from '../../src/config/load.js';
import type { DevWallet } from '../../src/wallet/holder.js';

/**
 * D13 and the spec rows of External Client flows: scope External (Version 2 only), state required
 * (spec: PAR field state, authorise state), context_id at authorise (spec: authorise parameters), and
 * what a ContinuationContext is: single use, bound to its client, short-lived. Each bad input gets
 * invalid_request (or invalid_scope) with a description naming the parameter.
 */
const CLIENT = { id: 'ext', secret: 'ext-secret-0123456789abcdef' };
const OTHER = { id: 'ext-other', secret: 'ext-other-secret-0123456789' };
const secret = webhookSecret();
let receiver: Awaited<ReturnType<typeof startWebhookReceiver>>;
let t: TestService;
let wallet: DevWallet;
const badge = { FirstName: 'Ada', LastName: 'Lovelace' };

const client = (c: { id: string; secret: string }, url: string) => ({
  clientId: c.id,
  clientSecret: c.secret,
  redirectUris: [REDIRECT],
  scopes: ['issue.EmployeeBadge', 'EmployeeBadge', 'External'],
  webhook: { url, secret },
});

beforeAll(async () => {
  receiver = await startWebhookReceiver(secret);
  t = await startTestService({
    clients: [client(CLIENT, receiver.url), client(OTHER, receiver.url)],
    lifetimes: { continuation: 6 },
  });
  wallet = await newWallet();
});
afterAll(async () => {
  await t?.stop();
  await receiver?.close();
});

async function parFields(over: Record<string, string | undefined> = {}, who = CLIENT) {
  const { challenge } = pkcePair();
  return {
    client_id: who.id,
    client_secret: who.secret,
    response_type: 'code',
    redirect_uri: REDIRECT,
    scope: 'openid issue.EmployeeBadge External',
    state: randomBytes(8).toString('hex'),
    nonce: 'n',
    code_challenge: challenge,
    code_challenge_method: 'S256',
    id_token_hint: await makeHint({ clientId: who.id, secret: who.secret, audience: t.url, claims: badge }),
    ...over,
  };
}

/** An External issuance whose wallet step succeeded: the webhook's ContinuationContext and the request_uri. */
async function completedFlow(who = CLIENT): Promise<{ context: string; requestUri: string; state: string }> {
  const fields = await parFields({}, who);
  const { requestUri, authorizeUrl } = await pushAuthorization(t.url, fields);
  const browser = new Browser(REDIRECT);
  const prompt = await browser.follow(authorizeUrl);
  await wallet.receive(offerFromPage(prompt.html!));
  const hook = await receiver.next((h) => h.payload.data.state === fields.state && h.payload.type === 'flow.completed');
  return { context: hook.payload.data.ContinuationContext, requestUri, state: fields.state! };
}

const authorize = (params: Record<string, string>) =>
  fetch(`${t.url}/v2.0/oidc/authorize?${new URLSearchParams(params)}`, { redirect: 'manual' });

async function expectRefused(res: Response, ...inDescription: string[]) {
  expect(res.status).toBe(400);
  const body = (await res.json()) as { error: string; error_description: string };
  expect(body.error).toBe('invalid_request');
  for (const part of inDescription) expect(body.error_description).toContain(part);
}

describe('scope External and state (spec: Scope format; PAR field state "required for External Client flows")', () => {
  it('PAR without state -> 400 invalid_request naming state', async () => {
    const res = await postForm(`${t.url}/v2.0/oidc/par`, await parFields({ state: undefined }));
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({
      error: 'invalid_request',
      error_description: expect.stringContaining('state is required'),
    });
  });

  it('non-PAR authorise without state -> redirected invalid_request naming state', async () => {
    const { challenge } = pkcePair();
    const res = await authorize({
      client_id: CLIENT.id,
      response_type: 'code',
      redirect_uri: REDIRECT,
      scope: 'openid EmployeeBadge External',
      nonce: 'n',
      code_challenge: challenge,
      code_challenge_method: 'S256',
    });
    expect(res.status).toBe(302);
    const location = new URL(res.headers.get('location')!);
    expect(location.href.startsWith(REDIRECT)).toBe(true);
    expect(location.searchParams.get('error')).toBe('invalid_request');
    expect(location.searchParams.get('error_description')).toContain('state is required');
  });

  it('Version 1 PAR with External -> 400 invalid_scope (spec: Version 1 differences, "no External scope")', async () => {
    const res = await postForm(`${t.url}/oidc/par`, {
      client_id: CLIENT.id,
      client_secret: CLIENT.secret,
      response_type: 'code',
      redirect_uri: REDIRECT,
      response_mode: 'query',
      scope: 'issue.EmployeeBadge External',
      state: 's',
      nonce: 'n',
      id_token_hint: await makeHint({
        clientId: CLIENT.id,
        secret: CLIENT.secret,
        audience: `${t.url}/oidc`,
        claims: badge,
      }),
    });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ error: 'invalid_scope', error_description: expect.stringContaining('Version 1') });
  });

  it('a client whose scopes do not list External -> invalid_scope (spec: Errors, Scope "not registered")', async () => {
    const svc = await startTestService(); // the default clients list no External
    try {
      const { challenge } = pkcePair();
      const res = await postForm(`${svc.url}/v2.0/oidc/par`, {
        client_id: 'issuer-pkce',
        client_secret: 'test-issuer-secret-0123456789',
        response_type: 'code',
        redirect_uri: REDIRECT,
        scope: 'openid EmployeeBadge External',
        state: 's',
        nonce: 'n',
        code_challenge: challenge,
        code_challenge_method: 'S256',
      });
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({
        error: 'invalid_scope',
        error_description: expect.stringContaining('External'),
      });
    } finally {
      await svc.stop();
    }
  });
});

describe('configuration (D13, D15: start-up refuses, naming the path)', () => {
  const configWith = (c: Record<string, unknown>) => () =>
    validateConfig(
      testConfig(3000, {
        clients: [
          {
            clientId: 'c',
            clientSecret: 'c-secret-0123456789',
            redirectUris: [REDIRECT],
            scopes: ['EmployeeBadge', 'External'],
            ...c,
          },
        ],
      }),
    );
  it('a client with the scope External and no webhook', () => {
    expect(configWith({})).toThrow(/clients\[0\] \(clientId c\)\.webhook.*required.*External/s);
  });
  it('a webhook URL over http on a non-loopback host, or with a user and password in it', () => {
    expect(configWith({ webhook: { url: 'http://rp.example/hooks', secret } })).toThrow(
      /clients\[0\] \(clientId c\)\.webhook\.url.*https/s,
    );
    expect(configWith({ webhook: { url: 'https://user:pass@rp.example/hooks', secret } })).toThrow(
      /clients\[0\] \(clientId c\)\.webhook\.url.*without user or password/s,
    );
  });
  it.each([
    ['no whsec_ prefix', Buffer.alloc(32, 1).toString('base64')],
    ['16 bytes', `whsec_${Buffer.alloc(16, 1).toString('base64')}`],
    ['65 bytes', `whsec_${Buffer.alloc(65, 1).toString('base64')}`],
  ])('a webhook secret that is not a Standard Webhooks secret (%s)', (_what, bad) => {
    expect(configWith({ webhook: { url: 'https://rp.example/hooks', secret: bad } })).toThrow(
      /clients\[0\] \(clientId c\)\.webhook\.secret.*whsec_/s,
    );
  });
  it('accepts https, loopback http, and a list of secrets for rotation', () => {
    expect(
      configWith({ webhook: { url: 'https://rp.example/hooks', secrets: [secret, webhookSecret()] } }),
    ).not.toThrow();
    expect(configWith({ webhook: { url: 'http://localhost:8080/hooks', secret } })).not.toThrow();
  });
});

describe('context_id at authorise (spec: authorise context_id; D13 ContinuationContext)', () => {
  it('a used context_id -> 400 invalid_request, and the first use succeeded', async () => {
    const flow = await completedFlow();
    const params = { client_id: CLIENT.id, context_id: flow.context, request_uri: flow.requestUri };
    expect((await authorize(params)).status).toBe(302);
    await expectRefused(await authorize(params), 'context_id');
  });

  it('20 concurrent uses of one context_id: exactly one 302', async () => {
    const flow = await completedFlow();
    const params = { client_id: CLIENT.id, context_id: flow.context, request_uri: flow.requestUri };
    const answers = await Promise.all(Array.from({ length: 20 }, () => authorize(params)));
    expect(answers.map((a) => a.status).sort()).toEqual([302, ...Array(19).fill(400)]);
  });

  it("another client's client_id -> 400 invalid_request, and the context stays usable by its own client", async () => {
    const flow = await completedFlow();
    await expectRefused(
      await authorize({ client_id: OTHER.id, context_id: flow.context, request_uri: flow.requestUri }),
      'context_id',
    );
    expect(
      (await authorize({ client_id: CLIENT.id, context_id: flow.context, request_uri: flow.requestUri })).status,
    ).toBe(302);
  });

  it('an expired context_id (lifetimes.continuation) -> 400 invalid_request', async () => {
    const flow = await completedFlow();
    await new Promise((r) => setTimeout(r, 6_500));
    await expectRefused(
      await authorize({ client_id: CLIENT.id, context_id: flow.context, request_uri: flow.requestUri }),
      'context_id',
    );
  });

  it.each([
    ['unknown', randomBytes(32).toString('base64url')],
    ['malformed', "x'<script>"],
    ['oversized', 'a'.repeat(5000)],
    // (an empty context_id is an omitted one, as any empty parameter: RFC 6749 §3.1)
  ])('an %s context_id -> 400 invalid_request', async (_what, context) => {
    await expectRefused(await authorize({ client_id: CLIENT.id, context_id: context }), 'context_id');
  });

  it('without client_id, or with an unknown one -> 400 invalid_request naming client_id', async () => {
    const flow = await completedFlow();
    await expectRefused(await authorize({ context_id: flow.context }), 'client_id');
    await expectRefused(await authorize({ client_id: 'nobody', context_id: flow.context }), 'client_id');
    expect(
      (await authorize({ client_id: CLIENT.id, context_id: flow.context, request_uri: flow.requestUri })).status,
    ).toBe(302);
  });

  it('a pushed flow without its request_uri, or with another -> 400 invalid_request naming request_uri; the context stays usable', async () => {
    const flow = await completedFlow();
    await expectRefused(await authorize({ client_id: CLIENT.id, context_id: flow.context }), 'request_uri is required');
    await expectRefused(
      await authorize({
        client_id: CLIENT.id,
        context_id: flow.context,
        request_uri: 'urn:ietf:params:oauth:request_uri:other',
      }),
      'request_uri does not match',
    );
    expect(
      (await authorize({ client_id: CLIENT.id, context_id: flow.context, request_uri: flow.requestUri })).status,
    ).toBe(302);
  });

  it('a repeated parameter that differs from the original, or one the original did not have -> 400 invalid_request naming it', async () => {
    const flow = await completedFlow();
    const base = { client_id: CLIENT.id, context_id: flow.context, request_uri: flow.requestUri };
    await expectRefused(await authorize({ ...base, state: 'other' }), 'state does not match');
    await expectRefused(
      await authorize({ ...base, redirect_uri: 'https://rp.example/other' }),
      'redirect_uri does not match',
    );
    await expectRefused(await authorize({ ...base, prompt: 'none' }), 'prompt: not part of the original request');
    const ok = await authorize({ ...base, state: flow.state, redirect_uri: REDIRECT, response_type: 'code' });
    expect(ok.status).toBe(302);
    const location = new URL(ok.headers.get('location')!);
    expect(location.searchParams.get('state')).toBe(flow.state);
    expect(location.searchParams.get('iss')).toBe(t.url); // RFC 9207: the continuation's redirect carries iss
  });

  it('context_id at a Version 1 endpoint -> 400 invalid_request (the flow is Version 2)', async () => {
    const flow = await completedFlow();
    await expectRefused(
      await fetch(
        `${t.url}/oidc/authorize?${new URLSearchParams({ client_id: CLIENT.id, context_id: flow.context, request_uri: flow.requestUri })}`,
        { redirect: 'manual' },
      ),
      'context_id',
    );
  });
});
